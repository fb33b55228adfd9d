#!/usr/bin/env python3
"""CI-gate figures. Prints one JSON document.

- validate_192_s: `twin validate` (SONiC YANG + fabric + RoCE checks) of the 64 x 128 fabric's 192
  generated configs, wall time of the command (target <= 10 s);
- ci_default_s: `twin ci labs/default.yaml --configs configs/default` with the lab's 4 drills,
  wall time from start to the lab being removed (target <= 90 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TWIN = [sys.executable, "-m", "twin"]


def timed(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.monotonic()
    proc = subprocess.run([*TWIN, *args], capture_output=True, text=True, cwd=REPO, timeout=1800)
    return round(time.monotonic() - start, 2), proc


def main() -> None:
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        configs = Path(tmp) / "fabric-64x128"
        subprocess.run([*TWIN, "plan", "topologies/fabric-64x128.yaml", "-o", str(configs), "--json"],
                       capture_output=True, cwd=REPO, check=True)
        seconds, proc = timed("validate", str(configs), "--json")
        doc = json.loads(proc.stdout)
        out["validate_192_s"] = seconds
        out["validate_192"] = {"switches": doc["switches"], "findings": len(doc["findings"]),
                               "inside_s": doc["seconds"]}
        junit = Path(tmp) / "ci.xml"
        seconds, proc = timed("ci", "labs/default.yaml", "--configs", "configs/default", "--junit", str(junit),
                              "--name", "benchci", "--json")
        doc = json.loads(proc.stdout)
        out["ci_default_s"] = seconds
        out["ci_default"] = {"passed": doc["passed"], "exit": proc.returncode,
                             "checks": len(doc["results"]), "drills": len(doc["drills"])}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
