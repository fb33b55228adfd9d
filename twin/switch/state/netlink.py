"""rtnetlink sockets opened inside a switch's namespace, and their messages decoded.

One raw NETLINK_ROUTE socket per switch, created by a thread that entered the switch's
namespace (a socket stays in the namespace it was made in), subscribed to link and IPv4 route
events: what portsyncd and fpmsyncd listen to on SONiC (fpmsyncd hears zebra over FPM; the
kernel is twin's forwarding plane, so its routes are the ones zebra installed). The
messages are decoded by twin.switch.state.rtnl (pyroute2's marshal was too slow for wide ECMP); dumps
are plain NLM_F_DUMP requests.
"""

from __future__ import annotations

import errno
import socket
import struct
from collections.abc import Callable, Iterable
from typing import TypeVar

from twin.host.netns_thread import run_in_netns
from twin.switch.state import rtnl

RTMGRP_LINK = 0x1
RTMGRP_IPV4_ROUTE = 0x40
RTM_GETLINK = 18
RTM_GETROUTE = 26
RTM_GETQDISC = 38
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
AF_INET = 2
RECV_BYTES = 1 << 20

Message = rtnl.Message
T = TypeVar("T")


RCVBUF = 4 << 20  # a subscriber's receive buffer: a burst of route changes fits (the kernel caps it at rmem_max)


def open_socket(netns: str, groups: int = RTMGRP_LINK | RTMGRP_IPV4_ROUTE, rcvbuf: int = RCVBUF) -> socket.socket:
    """A non-blocking rtnetlink socket in `netns`, subscribed to `groups`."""
    def make() -> socket.socket:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.bind((0, groups))
        return sock

    sock = run_in_netns(netns, make)
    sock.setblocking(False)
    return sock


def decode(data: bytes) -> list[Message]:
    """The messages in one netlink datagram (twin.switch.state.rtnl: links and routes)."""
    return list(rtnl.parse(data))


def drain(sock: socket.socket) -> None:
    """Drop every datagram waiting on a non-blocking socket, and an overflow it reports."""
    while True:
        try:
            sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            if exc.errno != errno.ENOBUFS:
                raise


def receive(sock: socket.socket) -> list[bytes]:
    """Every datagram waiting on a non-blocking socket, not decoded."""
    out = []
    while True:
        try:
            out.append(sock.recv(RECV_BYTES))
        except (BlockingIOError, InterruptedError):
            return out


class Dumper:
    """Full dumps (RTM_GETLINK, RTM_GETROUTE, RTM_GETQDISC) from one namespace, on one socket made there at the
    first dump and kept: a switch's counters are dumped once a second, and making a socket in a
    namespace takes a thread that enters it. A dump that fails closes the socket (the next makes
    a new one), so no half-read reply is ever taken for the next one's."""

    def __init__(self, netns: str) -> None:
        self.netns = netns
        self.sock: socket.socket | None = None
        self.seq = 0

    def dump(self, kind: int, family: int = AF_INET) -> list[Message]:
        return self._dump(kind, family, _messages)

    def qdiscs(self) -> list[rtnl.QdiscStats]:
        """Every qdisc of the namespace with its statistics (rtnl.qdisc_stats)."""
        return [q for q in self._dump(RTM_GETQDISC, AF_INET, rtnl.qdisc_stats) if q is not None]

    def _dump(self, kind: int, family: int, parse: Callable[[bytes], Iterable[tuple[int, int, T]]]) -> list[T]:
        if self.sock is None:
            self.sock = open_socket(self.netns, groups=0)
            self.sock.setblocking(True)
            self.sock.settimeout(10)
        self.seq += 1
        try:
            return _dump_on(self.sock, self.netns, kind, family, self.seq, parse)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def dump(netns: str, kind: int, family: int = AF_INET) -> list[Message]:
    """One full dump from `netns`, on a socket of its own."""
    dumper = Dumper(netns)
    try:
        return dumper.dump(kind, family)
    finally:
        dumper.close()


def _messages(data: bytes) -> list[tuple[int, int, Message]]:
    return [(m["header"]["type"], m["header"]["sequence_number"], m) for m in decode(data)]


def _dump_on(sock: socket.socket, netns: str, kind: int, family: int, seq: int,
             parse: Callable[[bytes], Iterable[tuple[int, int, T]]] = _messages) -> list[T]:  # type: ignore[assignment]
    """The items `parse` gives of the messages (type, sequence number, item) answering dump `seq`."""
    if kind == RTM_GETROUTE:  # struct rtmsg
        body = struct.pack("=BBBBBBBBI", family, 0, 0, 0, 0, 0, 0, 0, 0)
    elif kind == RTM_GETQDISC:  # struct tcmsg: every device's qdiscs
        body = struct.pack("=BxHiIII", 0, 0, 0, 0, 0, 0)
    else:  # struct ifinfomsg
        body = struct.pack("=BxHiII", 0, 0, 0, 0, 0)
    header = struct.pack("=LHHLL", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
    sock.send(header + body)
    out: list[T] = []
    while True:
        for msg_type, msg_seq, item in parse(sock.recv(RECV_BYTES)):
            if msg_seq != seq:
                continue
            if msg_type == 3:  # NLMSG_DONE
                return out
            if msg_type == 2:  # NLMSG_ERROR
                raise OSError(f"netlink dump {kind} failed in {netns}")
            out.append(item)
