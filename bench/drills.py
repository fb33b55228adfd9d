#!/usr/bin/env python3
"""Drill figures on the default lab. Prints one JSON document.

Every drill kind runs once (or --repeat times; the median is printed) on labs/default.yaml:
detection, convergence and the longest probe outage for the fault and the recovery, the busiest
spine's share over its fair share during the fault, and the full cycle (inject, measure, restore,
verify). Then spine-silent runs again on the same fabric with BFD off, to show what BFD buys
against the BGP hold timer alone.

Targets: spine-loss loss_ms <= 200; spine-silent (SONiC's BFD, 300 ms x 3) loss_ms <= 1500; cycle <= 20 s;
imbalance during a spine loss <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TWIN = [sys.executable, "-m", "twin"]
KINDS = ["spine-loss", "spine-silent", "leaf-loss", "link-down", "link-flap", "link-gray", "session-reset",
         "mtu-mismatch"]
FIELDS = ["detect_ms", "detect_target_ms", "converge_ms", "loss_ms", "imbalance", "cycle_s", "flows_moved",
          "flows_moved_healthy"]


def twin(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TWIN, *args], capture_output=True, text=True, cwd=REPO, timeout=900)


def up(target: Path, name: str) -> None:
    proc = twin("up", str(target), "--name", name, "--json")
    if proc.returncode != 0:
        raise SystemExit(f"twin up failed: {proc.stderr}")


def drill(name: str, kind: str, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        proc = twin("drill", kind, "--name", name, "--json")
        if proc.returncode not in (0, 1):
            return {"error": proc.stderr.strip()[-400:]}
        runs.append(json.loads(proc.stdout))
    out: dict[str, Any] = {"passed": all(r["passed"] for r in runs), "runs": repeat}
    for f in FIELDS:
        values = [r[f] for r in runs if r.get(f) is not None]
        out[f] = statistics.median(values) if values else None
    for f in ("detect_ms", "converge_ms", "loss_ms"):
        values = [r["recovery"][f] for r in runs if r["recovery"].get(f) is not None]
        out[f"recovery_{f}"] = statistics.median(values) if values else None
    first = runs[0]
    out["paths"] = "->".join(str(min(first[k].values(), default=0))
                             for k in ("paths_before", "paths_during", "paths_after"))
    out["violations"] = sorted({v for r in runs for v in r["violations"]})
    out["notes"] = runs[-1]["notes"][1:]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    result: dict[str, Any] = {"lab": "labs/default.yaml", "drills": {}}
    name = "benchdrill"
    try:
        up(REPO / "labs/default.yaml", name)
        for kind in args.kinds.split(","):
            result["drills"][kind] = drill(name, kind, args.repeat)
    finally:
        twin("down", "--name", name)
    # the same fabric without BFD: only the BGP hold timer (9 s) can find a silent spine
    with tempfile.TemporaryDirectory() as tmp:
        original = (REPO / "topologies/clos-4x8.yaml").read_text()
        topo = original.replace("bfd: {enabled: true}", "bfd: {enabled: false}")
        if topo == original:
            raise SystemExit("topologies/clos-4x8.yaml has no 'bfd: {enabled: true}' to turn off")
        path = Path(tmp) / "clos-4x8-nobfd.yaml"
        path.write_text(topo)
        name = "benchnobfd"
        try:
            up(path, name)
            result["spine_silent_without_bfd"] = drill(name, "spine-silent", args.repeat)
        finally:
            twin("down", "--name", name)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
