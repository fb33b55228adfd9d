#!/usr/bin/env python3
"""Floods of one switch's management plane: the agent's memory and another switch's Get latency
before, during and after each. Prints one JSON document.

    python bench/mgmt_flood.py [--lab-file tests/integration/data/mini.yaml] [--connections 5000]
                               [--seconds 8] [--settle 15] [--keep]
    python bench/mgmt_flood.py --twin-root /tmp/twin-old     # another checkout's twin

Brings up a lab under a unique name (torn down at the end, also on an error or ctrl-C, unless
--keep). The floods come from server1's namespace (bench/mgmt_flood_client.py under `ip netns exec`)
at leaf1, the switch it hangs off; the latency is of Gets (json_ietf, DEVICE_METADATA) on leaf2
from the host, one after another for --seconds, with a client connected beforehand:
- baseline;
- halfopen: --connections TCP connections to leaf1's gNMI port that never send a byte, held for
  --seconds after they are open (during), then closed by the client (after: --settle s later);
- gnmi_wrong: 32 threads sending Gets with a wrong password to leaf1 for --seconds, each the next
  once the last was answered; and ssh_wrong: 16 SSH logins at a time with a wrong password;
- each phase: the agent's RSS and PSS (/proc/PID/smaps_rollup), its open files and threads, and
  what the flood client saw (answers a second, connections the agent closed).
Other labs on the machine share its CPUs: compare figures of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CLIENT = REPO / "bench" / "mgmt_flood_client.py"
RUN = Path(os.environ.get("TWIN_RUN_DIR", "/run/twin"))
DEVICE_METADATA = "/sonic-db:CONFIG_DB/localhost/DEVICE_METADATA"
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from pygnmi.client import gNMIclient  # noqa: E402

logging.getLogger("pygnmi").setLevel(logging.ERROR)  # its TLS warning would precede the JSON on stdout


def _doc(lab: str, name: str) -> Any:
    return json.loads((RUN / lab / name).read_text())


def mgmt(lab: str, node: str) -> str:
    return str(next(n["mgmt"] for n in _doc(lab, "state.json")["nodes"] if n["name"] == node))


def agent_pid(lab: str) -> int:
    for name in ("agent.ready", "agent.pid"):
        with contextlib.suppress(OSError, ValueError):
            return int((RUN / lab / name).read_text().split()[0])
    raise RuntimeError(f"lab {lab}: no agent pid in {RUN / lab}")


def agent(lab: str) -> dict[str, Any]:
    pid = agent_pid(lab)
    kb = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        parts = line.split()
        if parts and parts[0] in ("Rss:", "Pss:"):
            kb[parts[0][:-1].lower()] = int(parts[1])
    threads = int(next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                       if line.startswith("Threads:")))
    return {"rss_mib": round(kb["rss"] / 1024, 1), "pss_mib": round(kb["pss"] / 1024, 1),
            "open_files": len(os.listdir(f"/proc/{pid}/fd")), "threads": threads}


def latency(gc: Any, seconds: float) -> dict[str, Any]:
    """Gets one after another for `seconds`: milliseconds p50, p99, max; errors."""
    samples: list[float] = []
    errors = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        try:
            gc.get(path=[DEVICE_METADATA], encoding="json_ietf")
        except Exception:
            errors += 1
            continue
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    if not samples:
        return {"gets": 0, "errors": errors}
    return {"gets": len(samples), "errors": errors, "p50_ms": round(statistics.median(samples), 2),
            "p99_ms": round(samples[min(len(samples) - 1, int(0.99 * len(samples)))], 2),
            "max_ms": round(samples[-1], 2)}


def measure(lab: str, gc: Any, seconds: float) -> dict[str, Any]:
    return {"leaf2_get": latency(gc, seconds), "agent": agent(lab)}


def flood(lab: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(["ip", "netns", "exec", f"tw.{lab}.server1", sys.executable, str(CLIENT), *args],
                            stdout=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str], timeout: float = 300) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=timeout)
    lines = out.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": f"flood client exited {proc.returncode}"}


def bench_halfopen(lab: str, gc: Any, args: argparse.Namespace) -> dict[str, Any]:
    proc = flood(lab, "halfopen", "--host", mgmt(lab, "leaf1"), "--port", str(_doc(lab, "agent.json")["port"]),
                 "--count", str(args.connections), "--hold", str(args.seconds + 2))
    assert proc.stdout is not None
    opened = json.loads(proc.stdout.readline())["opened"]
    peak = agent(lab)
    during = measure(lab, gc, args.seconds)
    client = finish(proc)
    time.sleep(args.settle)
    return {"connections": args.connections, "opened": opened, "agent_right_after_open": peak, "during": during,
            "client": client, "after": measure(lab, gc, args.seconds)}


def bench_wrong(lab: str, gc: Any, args: argparse.Namespace) -> dict[str, Any]:
    leaf1 = mgmt(lab, "leaf1")
    target = ["--target", f"{leaf1}:{_doc(lab, 'agent.json')['port']}", "--cert", str(RUN / lab / "tls.crt")]
    gnmi = flood(lab, "wrong", *target, "--threads", "32", "--seconds", str(args.seconds + 2))
    ssh = flood(lab, "ssh-wrong", "--host", leaf1, "--threads", "16", "--seconds", str(args.seconds + 2))
    time.sleep(1)
    during = measure(lab, gc, args.seconds)
    clients = {"gnmi": finish(gnmi), "ssh": finish(ssh)}
    time.sleep(args.settle)
    return {"during": during, "clients": clients, "after": measure(lab, gc, args.seconds)}


def twin_cli(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "twin", *args], cwd=root, env=dict(os.environ, PYTHONPATH=str(root)),
                          capture_output=True, text=True, timeout=timeout)


@contextlib.contextmanager
def lab_up(root: Path, lab_file: Path, keep: bool) -> Iterator[str]:
    name = f"mf{uuid.uuid4().hex[:6]}"
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        up = twin_cli(root, "up", str(lab_file), "--name", name, "--json")
        if up.returncode != 0:
            raise SystemExit(f"twin up failed: {up.stdout[-2000:]}{up.stderr[-2000:]}")
        yield name
    finally:
        if not keep:
            twin_cli(root, "down", "--name", name)
        signal.signal(signal.SIGTERM, previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lab-file", type=Path, default=REPO / "tests/integration/data/mini.yaml")
    parser.add_argument("--twin-root", type=Path, default=REPO, help="the checkout whose twin runs the lab")
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--settle", type=float, default=15, help="seconds after a flood before 'after'")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with lab_up(args.twin_root, args.lab_file.resolve(), args.keep) as lab:
        agent_settings = _doc(lab, "agent.json")
        gc = gNMIclient(target=(mgmt(lab, "leaf2"), agent_settings["port"]), username=agent_settings["username"],
                        password=agent_settings["password"], skip_verify=True, gnmi_timeout=30)
        gc.connect()
        try:
            result = {"lab": lab, "twin_root": str(args.twin_root), "baseline": measure(lab, gc, args.seconds),
                      "halfopen": bench_halfopen(lab, gc, args), "wrong_password": bench_wrong(lab, gc, args)}
        finally:
            gc.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
