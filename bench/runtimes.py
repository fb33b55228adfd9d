#!/usr/bin/env python3
"""The runtimes side by side: default lab up -> healthy and memory per switch for netns and docker,
and the switch image's build time (first build, then cached). Prints one JSON document.

    python bench/runtimes.py              # 2 runs per runtime, and the image built from scratch
    python bench/runtimes.py --no-rebuild # keep the image (its cached check is still timed)

Memory per switch: RSS and PSS of the processes in each switch (the same measure for both
runtimes), and for containers also the cgroup's own figure as `docker stats` shows it (usage
minus page cache). Targets: docker <= 3x the netns time to healthy, <= 40 MiB per FRR container.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from lab_up import REPO, TWIN, bench


def container_memory(lab: str) -> dict[str, Any]:
    """docker stats' memory of each switch container: usage minus page cache, in MiB."""
    import docker

    mib = []
    for ctr in docker.from_env().containers.list(filters={"label": f"org.twin.lab={lab}"}):
        if ctr.labels.get("org.twin.role") not in ("spine", "leaf"):
            continue
        stats = ctr.stats(stream=False)["memory_stats"]
        cache = stats.get("stats", {}).get("cache", stats.get("stats", {}).get("inactive_file", 0))
        mib.append((stats["usage"] - cache) / 2**20)
    return {"cgroup_mib_per_switch_mean": round(statistics.mean(mib), 1),
            "cgroup_mib_per_switch_max": round(max(mib), 1), "containers": len(mib)}


def image_build(force: bool) -> dict[str, Any]:
    start = time.monotonic()
    proc = subprocess.run([*TWIN, "image", "build", "--json", *(["--force"] if force else [])], cwd=REPO,
                          capture_output=True, text=True, timeout=1800)
    doc: dict[str, Any] = json.loads(proc.stdout) if proc.returncode == 0 else {"error": proc.stderr[-1500:]}
    doc["wall_seconds"] = round(time.monotonic() - start, 2)
    return doc


def runtime(name: str, runs: int) -> dict[str, Any]:
    extra = ["--runtime", name]
    measure = container_memory if name == "docker" else None
    results = [bench("labs/default.yaml", f"rt{name[:3]}{i}", 600, *extra, measure=measure) for i in range(runs)]
    times = [r["seconds_up_to_healthy"] for r in results if r["healthy"]]
    return {"runs": results, "healthy_runs": len(times),
            "seconds_up_to_healthy_median": round(statistics.median(times), 2) if times else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-rebuild", action="store_true", help="do not time a build from scratch")
    args = parser.parse_args()
    doc: dict[str, Any] = {"image": {}}
    if not args.no_rebuild:
        doc["image"]["first"] = image_build(force=True)
    doc["image"]["cached"] = image_build(force=False)
    doc["netns"] = runtime("netns", args.runs)
    doc["docker"] = runtime("docker", args.runs)
    n, d = doc["netns"]["seconds_up_to_healthy_median"], doc["docker"]["seconds_up_to_healthy_median"]
    doc["docker_vs_netns_time"] = round(d / n, 2) if n and d else None
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
