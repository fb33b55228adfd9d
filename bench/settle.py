#!/usr/bin/env python3
"""How long a change takes to take effect, and what judging it then costs a rehearsal. Prints one JSON
document.

    python bench/settle.py                   # 3 rounds of each change on the 4 x 8 fabric (no drills)
    python bench/settle.py --rounds 5 --against main~20   # also twin as it was at that revision

Three changes to leaf1, each of which breaks the fabric, so `twin rehearse` applies it, judges it and
rolls it back: an inbound route-map turned to deny (FRR applies it after its route-map delay-timer),
a neighbor shut down, a server-facing port's MTU lowered under its server's. For each: `settle_ms`
of the change and of its rollback (median, max: from the Set to the last FIB or session change it
caused, twin.checks.settle), and the rehearsal's wall time. With --against REV the same rehearsals run
on a lab brought up by twin at REV (a git worktree, as bench/lab_up.py does): its wall time and
whether it failed the change at all. After each rehearsal the lab's own configs are pushed back, so
every round starts from the same fabric whatever the rehearsal left.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab_up import worktree  # bench/ is a folder of scripts, run as such

REPO = Path(__file__).resolve().parents[1]
TWIN = [sys.executable, "-m", "twin"]
CHANGES = {
    "route-map-deny": "leaf1:\n  ROUTE_MAP:\n    FROM_BGP_PEER_V4|100: {route_operation: deny}\n",
    "neighbor-shutdown": "leaf1:\n  BGP_NEIGHBOR:\n    default|10.0.0.64: {admin_status: down}\n",
    "server-port-mtu": "leaf1:\n  PORT:\n    Ethernet0: {mtu: \"9000\"}\n",
}


def run(repo: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    return subprocess.run([*TWIN, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)


def spread(values: list[float]) -> dict[str, float] | None:
    return {"median": round(statistics.median(values), 1), "max": round(max(values), 1), "n": len(values)} \
        if values else None


def rounds(repo: Path, lab: str, folder: Path, count: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind, text in CHANGES.items():
        change = folder / f"{kind}.yaml"
        change.write_text(text)
        walls, applied, rolled, verdicts = [], [], [], []
        for _ in range(count):
            start = time.monotonic()
            proc = run(repo, "rehearse", str(change), "--name", lab, "--json")
            walls.append(time.monotonic() - start)
            doc = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
            verdicts.append("failed the change" if proc.returncode == 1 else
                            "passed the change" if proc.returncode == 0 else f"exit {proc.returncode}")
            settles = doc.get("settles", {})
            applied += [s["settle_ms"] for step, s in settles.items() if step.startswith("applying")]
            rolled += [s["settle_ms"] for step, s in settles.items() if step == "the rollback"]
            run(repo, "push", "--name", lab)   # the lab's own configs again, whatever the rehearsal left
        out[kind] = {"rehearse_s": spread(walls), "settle_ms": spread(applied), "rollback_settle_ms": spread(rolled),
                     "verdicts": sorted(set(verdicts))}
    return out


def bench(repo: Path, name: str, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="twin-settle-") as tmp:
        folder = Path(tmp)
        lab_file = folder / "lab.yaml"
        lab_file.write_text(f"name: settle\ntopology: {REPO / 'topologies' / 'clos-4x8.yaml'}\n")
        up = run(repo, "up", str(lab_file), "--name", name, "--json")
        try:
            if up.returncode != 0:
                return {"error": up.stderr[-2000:]}
            return rounds(repo, name, folder, count)
        finally:
            run(repo, "down", "--name", name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also run the rehearsals with twin as it was at REV")
    args = parser.parse_args()
    doc: dict[str, Any] = {"lab": "topologies/clos-4x8.yaml, no drills", "rounds": args.rounds,
                           "changes": bench(REPO, "bsettle", args.rounds)}
    with worktree(args.against) as against:
        if against is not None:
            revision, path = against
            doc["against"] = {"revision": revision, "changes": bench(path, "bsettleb", args.rounds)}
            ratios = {}
            for kind in CHANGES:
                ours = (doc["changes"].get(kind) or {}).get("rehearse_s")
                theirs = (doc["against"]["changes"].get(kind) or {}).get("rehearse_s")
                if ours and theirs:
                    ratios[kind] = round(ours["median"] / theirs["median"], 2)
            doc["ratio_rehearse_time_to_against"] = ratios
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
