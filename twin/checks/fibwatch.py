"""Watch every switch's kernel FIB through netlink events and record each change with its time.

One raw netlink socket per switch, created inside the switch's namespace, listens to link,
IPv4 route and nexthop-object events; when one arrives, that switch's BGP routes are dumped
(pyroute2) and recorded if they differ. Event times are taken when the event is read, so the
record is as fine as the kernel's notification, not a polling interval.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from typing import Any

from pyroute2 import IPRoute

from twin.host.background import Background
from twin.host.netns_thread import run_in_netns
from twin.model.errors import TwinError

RTPROT_BGP = 186
RT_TABLE_MAIN = 254
RTNH_F_DEAD, RTNH_F_LINKDOWN = 1, 16
# RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTNLGRP_NEXTHOP (group 32)
GROUPS = 0x1 | 0x40 | (1 << 31)

NodeFib = dict[str, frozenset[str]]   # prefix -> next hops
Fib = dict[str, NodeFib]               # switch -> its FIB


def usable(flags: int) -> bool:
    return not flags & (RTNH_F_DEAD | RTNH_F_LINKDOWN)


def parse_routes(messages: list[Any]) -> NodeFib:
    """BGP routes of the main table: prefix -> next hops the kernel would forward to."""
    fib: NodeFib = {}
    for msg in messages:
        if msg.get("proto") != RTPROT_BGP or (msg.get_attr("RTA_TABLE") or msg.get("table")) != RT_TABLE_MAIN:
            continue
        prefix = f"{msg.get_attr('RTA_DST')}/{msg.get('dst_len')}"
        hops: set[str] = set()
        multipath = msg.get_attr("RTA_MULTIPATH")
        if multipath:
            for hop in multipath:
                gw = hop.get_attr("RTA_GATEWAY")
                if gw and usable(hop.get("flags", 0)):
                    hops.add(gw)
        else:
            gw = msg.get_attr("RTA_GATEWAY")
            if gw and usable(msg.get("flags", 0)):
                hops.add(gw)
        if hops:
            fib[prefix] = frozenset(hops)
    return fib


def _event_socket() -> socket.socket:
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
    sock.bind((0, GROUPS))
    sock.setblocking(False)
    return sock


class FibWatch:
    """`with FibWatch(netns_by_switch) as w:` ... `w.history` is [(t, switch, fib)] in time order."""

    def __init__(self, netns: dict[str, str]) -> None:
        self.netns = netns
        self.history: list[tuple[float, str, NodeFib]] = []
        self.current: Fib = {}
        self._lock = threading.Lock()
        self._socks: dict[int, tuple[str, socket.socket]] = {}
        self._iprs: dict[str, IPRoute] = {}
        self._worker = Background(self._run, "fibwatch", "the FIB watch (netlink events of every switch)")

    def __enter__(self) -> FibWatch:
        for node, ns in self.netns.items():
            sock = run_in_netns(ns, _event_socket)
            self._socks[sock.fileno()] = (node, sock)
            self._iprs[node] = IPRoute(netns=ns)
        now = time.time()
        for node in self.netns:
            self._record(now, node)
        self._worker.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """Stop the watch and close its sockets, once its thread has let go of them; its failure (or a
        thread that would not stop) is raised unless another error is already on its way."""
        try:
            self._worker.stop()
        except TwinError:
            if exc_type is None:
                raise
        finally:
            if not self._worker.alive:
                self.close()

    def close(self) -> None:
        for _, sock in self._socks.values():
            sock.close()
        for ipr in self._iprs.values():
            ipr.close()

    def check(self) -> None:
        """Raise the watch's failure, if its thread failed (its record stopped there)."""
        self._worker.check()

    def snapshot(self) -> Fib:
        """Every switch's FIB as last recorded; the watch's failure, if its thread failed."""
        self.check()
        with self._lock:
            return dict(self.current)

    def _record(self, t: float, node: str) -> None:
        fib = parse_routes(self._iprs[node].get_routes(table=RT_TABLE_MAIN))
        with self._lock:
            if self.current.get(node) != fib:
                self.current[node] = fib
                self.history.append((t, node, fib))

    def _run(self, stopping: threading.Event) -> None:
        fds = list(self._socks)
        while not stopping.is_set():
            ready, _, _ = select.select(fds, [], [], 0.1)
            if not ready:
                continue
            t = time.time()
            dirty = set()
            for fd in ready:
                node, sock = self._socks[fd]
                try:
                    while sock.recv(1 << 16):
                        pass
                except BlockingIOError:
                    pass
                except OSError:  # ENOBUFS: events were lost, the dump below catches up anyway
                    pass
                dirty.add(node)
            for node in sorted(dirty):
                self._record(t, node)
