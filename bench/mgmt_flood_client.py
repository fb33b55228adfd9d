#!/usr/bin/env python3
"""Floods of a switch's management plane, run from where an attacker would be (a GPU server's
namespace: `ip netns exec tw.LAB.server1 .venv/bin/python bench/mgmt_flood_client.py ...`).
Prints one JSON document at the end; `subscribe` and `halfopen` print `{"opened": N}` first, once
their calls or connections are open, and hold them for --hold seconds.

    subscribe --target HOST:PORT [--cert tls.crt] --count 300 --hold 20
        Subscribe calls without credentials whose request stream never sends a message.
    wrong --target HOST:PORT [--cert tls.crt] --threads 16 --seconds 6
        Gets with a wrong password, each thread sending its next once the last was answered.
    ssh-wrong --host HOST [--port 22] --threads 8 --seconds 6
        SSH logins with a wrong password, likewise.
    halfopen --host HOST --port PORT --count 2000 --hold 20 [--connect-wait 5]
        TCP connections that never send a byte, all started at once; those established within
        --connect-wait seconds are held.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import select
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import grpc
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc


def _channel(target: str, cert: str | None) -> grpc.Channel:
    if cert:
        with open(cert, "rb") as f:
            return grpc.secure_channel(target, grpc.ssl_channel_credentials(root_certificates=f.read()))
    return grpc.insecure_channel(target)


def _never(stop: threading.Event) -> Iterator[Any]:
    stop.wait()
    yield from ()


def subscribe(args: argparse.Namespace) -> dict[str, Any]:
    channels = [_channel(args.target, args.cert) for _ in range(max(1, args.count // 100))]
    stop = threading.Event()
    calls = [gnmi_pb2_grpc.gNMIStub(channels[i % len(channels)]).Subscribe(_never(stop), metadata=())
             for i in range(args.count)]
    print(json.dumps({"opened": len(calls)}), flush=True)
    time.sleep(args.hold)
    codes: Counter[str] = Counter()
    for call in calls:
        codes[call.code().name if call.done() else "PENDING"] += 1
    stop.set()
    for call in calls:
        call.cancel()
    return {"calls": args.count, "codes": dict(codes)}


def wrong(args: argparse.Namespace) -> dict[str, Any]:
    channel = _channel(args.target, args.cert)
    stub = gnmi_pb2_grpc.gNMIStub(channel)
    codes: Counter[str] = Counter()
    lock = threading.Lock()
    end = time.monotonic() + args.seconds

    def guess() -> None:
        while time.monotonic() < end:
            try:
                stub.Get(gnmi_pb2.GetRequest(), metadata=(("username", "admin"), ("password", "not-it")),
                         timeout=max(0.1, end - time.monotonic()))
                code = "OK"
            except grpc.RpcError as exc:
                code = exc.code().name
            if code != "DEADLINE_EXCEEDED":
                with lock:
                    codes[code] += 1

    return _timed(guess, args.threads, args.seconds, codes)


def ssh_wrong(args: argparse.Namespace) -> dict[str, Any]:
    import asyncssh

    codes: Counter[str] = Counter()
    end = time.monotonic() + args.seconds

    async def one() -> None:
        while time.monotonic() < end:
            try:
                async with asyncio.timeout(max(0.1, end - time.monotonic())):
                    conn = await asyncssh.connect(args.host, port=args.port, username="admin", password="not-it",
                                                  known_hosts=None, client_keys=None, agent_path=None,
                                                  preferred_auth=["password"])
                conn.close()
                codes["OK"] += 1
            except asyncssh.PermissionDenied:
                codes["PermissionDenied"] += 1
            except TimeoutError:
                return
            except (OSError, asyncssh.Error) as exc:
                codes[type(exc).__name__] += 1

    async def run() -> None:
        await asyncio.gather(*(one() for _ in range(args.threads)))

    started = time.monotonic()
    asyncio.run(run())
    return _report(codes, time.monotonic() - started, args.threads)


def _timed(work: Any, threads: int, seconds: float, codes: Counter[str]) -> dict[str, Any]:
    started = time.monotonic()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return _report(codes, time.monotonic() - started, threads)


def _report(codes: Counter[str], took: float, threads: int) -> dict[str, Any]:
    answered = sum(codes.values())
    return {"threads": threads, "seconds": round(took, 2), "answered": answered,
            "per_second": round(answered / took, 2), "codes": dict(codes)}


def halfopen(args: argparse.Namespace) -> dict[str, Any]:
    """Connect all at once (non-blocking), give them --connect-wait seconds to be established."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.count + 256)), hard))
    pending: dict[int, socket.socket] = {}
    for _ in range(args.count):
        sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex((args.host, args.port))
        pending[sock.fileno()] = sock
    poller = select.poll()
    for fd in pending:
        poller.register(fd, select.POLLOUT)
    socks: list[socket.socket] = []
    end = time.monotonic() + args.connect_wait
    while pending and time.monotonic() < end:
        for fd, _ in poller.poll(100):
            poller.unregister(fd)
            sock = pending.pop(fd)
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                socks.append(sock)
            else:
                sock.close()
    unanswered = len(pending)
    for sock in pending.values():
        sock.close()
    print(json.dumps({"opened": len(socks)}), flush=True)
    time.sleep(args.hold)
    closed = 0
    for sock in socks:
        try:
            closed += sock.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        sock.close()
    return {"connections": len(socks), "not_established": args.count - len(socks), "unanswered": unanswered,
            "closed_by_server": closed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    for name in ("subscribe", "wrong"):
        p = sub.add_parser(name)
        p.add_argument("--target", required=True)
        p.add_argument("--cert")
        p.add_argument("--count", type=int, default=300)
        p.add_argument("--hold", type=float, default=20)
        p.add_argument("--threads", type=int, default=16)
        p.add_argument("--seconds", type=float, default=6)
    p = sub.add_parser("ssh-wrong")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, default=22)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--seconds", type=float, default=6)
    p = sub.add_parser("halfopen")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, default=2000)
    p.add_argument("--hold", type=float, default=20)
    p.add_argument("--connect-wait", type=float, default=5)
    args = parser.parse_args()
    modes = {"subscribe": subscribe, "wrong": wrong, "ssh-wrong": ssh_wrong, "halfopen": halfopen}
    print(json.dumps(modes[args.mode](args)), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
