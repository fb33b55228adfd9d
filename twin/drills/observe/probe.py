"""Probe traffic: many UDP flows between servers, paced, numbered, with gap detection on receipt.

One process sends and receives every flow. Its sockets are created inside the servers'
namespaces (setns, then back), so a single loop paces all senders on one clock and sees every
packet arrive. Each packet carries (flow, sequence, send time); the receiver turns a jump in a
flow's sequence into a loss run. Loss is reported the way RFC 6413 derives convergence time:
packets lost times the flow's sending interval.

Run as `python -m twin.drills.observe.probe SPEC.json OUT.json`; it prints `ready` once every socket
exists and stops on SIGTERM, writing OUT.json.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

PACKET = struct.Struct("!HId")   # flow, sequence, send time
PAYLOAD = 64
BIN_S = 0.05                     # timeline resolution
_CLONE_NEWNET = 0x40000000


@dataclass
class Flow:
    fid: int
    pair: int
    sport: int
    dport: int
    sock: socket.socket
    offset: float
    sent: int = 0
    received: int = 0
    next_seq: int = 0
    last_send: float = 0.0
    reordered: int = 0
    runs: list[list[float]] = field(default_factory=list)  # [first_seq, count, t_start, t_end]

    def receive(self, seq: int, sent: float, period: float) -> None:
        """Account one arrival; a jump in sequence is a loss run, a step back a reordering."""
        self.received += 1
        if seq < self.next_seq:
            self.reordered += 1
            return
        if seq > self.next_seq:
            start = self.last_send + period if self.next_seq else sent - (seq - self.next_seq) * period
            self.runs.append([self.next_seq, seq - self.next_seq, start, sent])
        self.next_seq = seq + 1
        self.last_send = sent

    def finish(self, t0: float, stopped: float, period: float) -> None:
        """Packets sent after the last arrival never came: one more run, ending when sending stopped."""
        if self.sent > self.next_seq:
            start = self.last_send + period if self.next_seq else t0
            self.runs.append([self.next_seq, self.sent - self.next_seq, start, stopped])


@contextmanager
def netns(name: str) -> Iterator[None]:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(target, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {name} failed")
        yield
    finally:
        libc.setns(home, _CLONE_NEWNET)
        os.close(home)
        os.close(target)


def _udp(bind: tuple[str, int]) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
    s.bind(bind)
    s.setblocking(False)
    return s


class Prober:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.rate = float(spec["rate_hz"])
        self.period = 1.0 / self.rate
        self.flows: list[Flow] = []
        self.receivers: dict[int, socket.socket] = {}
        total = sum(len(p["sports"]) for p in spec["pairs"])
        for k, pair in enumerate(spec["pairs"]):
            with netns(pair["dst_ns"]):
                self.receivers[k] = _udp((pair["dst_ip"], pair["dport"]))
            with netns(pair["src_ns"]):
                for sport in pair["sports"]:
                    sock = _udp((pair["src_ip"], sport))
                    sock.connect((pair["dst_ip"], pair["dport"]))
                    fid = len(self.flows)
                    self.flows.append(Flow(fid, k, sport, pair["dport"], sock, fid * self.period / total))
        self.stop = False
        self.t0 = 0.0
        self.sent_bins: dict[int, int] = {}
        self.recv_bins: dict[int, int] = {}
        self.send_errors = 0
        self.send_stopped = 0.0

    def run(self) -> None:
        self.t0 = time.time()
        by_fd = {s.fileno(): s for s in self.receivers.values()}
        order = sorted(self.flows, key=lambda f: f.offset)
        n = len(order)
        slot = self.period / n
        tick = 0
        while not self.stop:
            now = time.time()
            due = self.t0 + tick * slot
            while due <= now and not self.stop:
                flow = order[tick % n]
                self._send(flow, due)
                tick += 1
                due = self.t0 + tick * slot
            timeout = max(0.0, due - time.time())
            ready, _, _ = select.select(list(by_fd), [], [], timeout)
            for fd in ready:
                self._drain(by_fd[fd])
        self.send_stopped = time.time()
        end = time.time() + 0.3
        while time.time() < end:
            ready, _, _ = select.select(list(by_fd), [], [], 0.05)
            for fd in ready:
                self._drain(by_fd[fd])

    def _send(self, flow: Flow, scheduled: float) -> None:
        now = time.time()
        data = PACKET.pack(flow.fid, flow.sent, now).ljust(PAYLOAD, b"\0")
        try:
            flow.sock.send(data)
        except OSError:  # no route or unreachable during a fault: the packet is lost, as on a wire
            self.send_errors += 1
        flow.sent += 1
        b = int((scheduled - self.t0) / BIN_S)
        self.sent_bins[b] = self.sent_bins.get(b, 0) + 1

    def _drain(self, sock: socket.socket) -> None:
        while True:
            try:
                data = sock.recv(2048)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            fid, seq, sent = PACKET.unpack_from(data)
            if fid >= len(self.flows):
                continue
            self.flows[fid].receive(seq, sent, self.period)
            b = int((sent - self.t0) / BIN_S)
            self.recv_bins[b] = self.recv_bins.get(b, 0) + 1

    def result(self) -> dict[str, Any]:
        stopped = self.send_stopped
        for flow in self.flows:
            flow.finish(self.t0, stopped, self.period)
        return {
            "t0": self.t0, "stopped": stopped, "rate_hz": self.rate, "bin_s": BIN_S,
            "send_errors": self.send_errors,
            "flows": [{"flow": f.fid, "pair": f.pair, "sport": f.sport, "dport": f.dport, "sent": f.sent,
                       "received": f.received, "reordered": f.reordered, "runs": f.runs} for f in self.flows],
            "sent_bins": sorted(self.sent_bins.items()), "recv_bins": sorted(self.recv_bins.items()),
        }


def main(argv: list[str]) -> int:
    with open(argv[0]) as fh:
        spec = json.load(fh)
    prober = Prober(spec)

    def on_term(signum: int, frame: object) -> None:
        prober.stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    print("ready", flush=True)
    prober.run()
    tmp = argv[1] + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(prober.result(), fh)
    os.replace(tmp, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
