#!/usr/bin/env python3
"""What BFD costs FRR's bfdd on this machine, per session end, and what that means at 64 x 128.
Prints one JSON document.

    python bench/bfd_capacity.py --floor ../shared/bench/floor_clos.py     # measures the floor at 8 x 32

The bare floor (floor_clos.py) is brought up with BFD at SONiC's 300 ms x 3, left to settle, and the CPU
time of every bfdd (and bgpd) it started is read from /proc/<pid>/stat over a window. Each session has
two ends, each sending and receiving every 300 ms; CPU per end times the ends of the target fabric
(2 x spines x leaves) is the CPU its bfdds need in steady state, before any BGP work, compared with the
CPUs this machine has. This is the measurement behind labs/scale.yaml running without BFD here: the
same bfdd, whether twin or the floor starts it, cannot keep 300 ms timers at 64 x 128 on 2 CPUs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab_up import FLOOR_LINE, find_floor, neighbour_tables
from process_cpu import process_seconds


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of `pids`, in seconds (processes that went away count 0)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += process_seconds(pid)
    return total


def daemon_pids(run_dir: Path, daemon: str) -> list[int]:
    pids = []
    for pidfile in run_dir.glob(f"*/{daemon}.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids.append(int(pidfile.read_text().strip()))
    return pids


def measure(script: Path, spines: int, leaves: int, bfd_ms: int, settle: float, window: float,
            target: tuple[int, int]) -> dict[str, Any]:
    env = {**os.environ, "S": str(spines), "L": str(leaves), "BFD": "1", "BFD_MS": str(bfd_ms)}
    with tempfile.TemporaryDirectory(prefix="twin-bfd-") as tmp, neighbour_tables(spines, leaves):
        env["LAB_RUN"] = tmp
        try:
            proc = subprocess.run([sys.executable, str(script), "run"], env=env, capture_output=True, text=True,
                                  timeout=900)
            times = FLOOR_LINE.search(proc.stdout)
            if proc.returncode != 0 or times is None or "TIMEOUT" in proc.stdout:
                return {"ok": False, "error": (proc.stdout + proc.stderr)[-2000:]}
            time.sleep(settle)
            run_dir = Path(tmp)
            bfdd, bgpd = daemon_pids(run_dir, "bfdd"), daemon_pids(run_dir, "bgpd")
            b0, g0, t0 = cpu_seconds(bfdd), cpu_seconds(bgpd), time.monotonic()
            time.sleep(window)
            b1, g1, t1 = cpu_seconds(bfdd), cpu_seconds(bgpd), time.monotonic()
        finally:
            subprocess.run([sys.executable, str(script), "clean"], env=env, capture_output=True, timeout=300)
    ends = 2 * spines * leaves
    bfdd_cpus = (b1 - b0) / (t1 - t0)
    per_end = bfdd_cpus / ends
    target_ends = 2 * target[0] * target[1]
    return {
        "ok": True, "measured_at": f"S={spines} L={leaves} BFD_MS={bfd_ms}", "session_ends": ends,
        "seconds_to_full_fib": float(times["total"]), "window_s": round(t1 - t0, 1),
        "bfdd_cpus": round(bfdd_cpus, 3), "bgpd_cpus": round((g1 - g0) / (t1 - t0), 3),
        "bfdd_cpu_ms_per_session_end_per_s": round(per_end * 1000, 3),
        "target": f"S={target[0]} L={target[1]}", "target_session_ends": target_ends,
        "target_bfdd_cpus_needed": round(per_end * target_ends, 1),
        "cpus_on_this_machine": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--floor", help="floor_clos.py, the bare floor (default: $TWIN_FLOOR)")
    parser.add_argument("--spines", type=int, default=8)
    parser.add_argument("--leaves", type=int, default=32)
    parser.add_argument("--bfd-ms", type=int, default=300, help="BFD tx/rx interval (SONiC's: 300)")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after full FIB before measuring")
    parser.add_argument("--window", type=float, default=20.0, help="seconds measured")
    args = parser.parse_args()
    script, why = find_floor(args.floor)
    if script is None:
        parser.error(why)
    print(json.dumps(measure(script, args.spines, args.leaves, args.bfd_ms, args.settle, args.window, (64, 128)),
                     indent=2))


if __name__ == "__main__":
    main()
