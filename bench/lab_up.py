#!/usr/bin/env python3
"""Seconds from `twin up` to healthy, and memory per switch. Prints one JSON document.

    python bench/lab_up.py            # the default lab (4 x 8 Clos, 16 servers)
    python bench/lab_up.py --scale    # also the 64 x 128 control plane (192 switches, minutes)

Memory is read from /proc/<pid>/smaps_rollup of every process inside each switch namespace:
RSS counts shared libraries once per process, PSS shares them out fairly.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TWIN = [sys.executable, "-m", "twin"]


def _kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def switch_memory(lab: str) -> dict[str, Any]:
    state = json.loads(Path(f"/run/twin/{lab}/state.json").read_text())
    rss, pss, redis = [], [], []
    for node in state["nodes"]:
        if node["kind"] != "switch":
            continue
        out = subprocess.run(["ip", "netns", "pids", node["netns"]], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        rss.append(sum(_kb(p, "Rss") for p in pids) / 1024)
        pss.append(sum(_kb(p, "Pss") for p in pids) / 1024)
        redis.append(sum(_kb(p, "Pss") for p in pids if _comm(p) == "redis-server") / 1024)
    agent = _agent_pid(lab)
    agent_pss = _kb(agent, "Pss") / 1024 if agent else 0.0
    return {
        "switches": len(rss),
        "rss_mib_per_switch_mean": round(sum(rss) / len(rss), 1), "rss_mib_per_switch_max": round(max(rss), 1),
        "pss_mib_per_switch_mean": round(sum(pss) / len(pss), 1), "pss_mib_per_switch_max": round(max(pss), 1),
        "pss_mib_total": round(sum(pss), 1),
        # SONiC's databases (one redis-server per switch, counted in the figures above) and the lab's
        # agent (gNMI, SSH and every switch's config daemons and state producers: one process).
        "redis_pss_mib_per_switch_mean": round(sum(redis) / len(redis), 2),
        "agent_pss_mib": round(agent_pss, 1),
        "agent_pss_mib_per_switch": round(agent_pss / len(rss), 2),
    }


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _agent_pid(lab: str) -> int | None:
    try:
        return int(Path(f"/run/twin/{lab}/agent.pid").read_text())
    except (OSError, ValueError):
        return None


def bench(lab_file: str, name: str, timeout: float, *up_args: str,
          measure: Any = None) -> dict[str, Any]:
    """Bring the lab up and down once; `measure(name)` adds figures while it is up."""
    subprocess.run([*TWIN, "down", "--name", name], cwd=REPO, capture_output=True)
    start = time.monotonic()
    proc = subprocess.run([*TWIN, "up", lab_file, "--name", name, "--json", *up_args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - start
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        result = {"healthy": False, "error": proc.stderr[-2000:]}
    doc: dict[str, Any] = {"lab": lab_file, "healthy": result.get("healthy", False),
                           "seconds_up_to_healthy": round(wall, 2),
                           "seconds_waiting_for_convergence": result.get("seconds"),
                           "bgp": result.get("bgp")}
    if proc.returncode in (0, 1):
        doc["memory"] = switch_memory(name)
        if measure is not None:
            doc.update(measure(name))
    t0 = time.monotonic()
    subprocess.run([*TWIN, "down", "--name", name], cwd=REPO, capture_output=True)
    doc["seconds_down"] = round(time.monotonic() - t0, 2)
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", action="store_true", help="also bring up the 64 x 128 control plane")
    parser.add_argument("--runs", type=int, default=3, help="runs of the default lab")
    args = parser.parse_args()
    results = [bench("labs/default.yaml", f"bench{i}", 300) for i in range(args.runs)]
    times = sorted(r["seconds_up_to_healthy"] for r in results)
    doc: dict[str, Any] = {"default": {"runs": results, "median_seconds_up_to_healthy": times[len(times) // 2]}}
    if args.scale:
        doc["scale_64x128"] = bench("labs/scale.yaml", "benchscale", 1800)
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
