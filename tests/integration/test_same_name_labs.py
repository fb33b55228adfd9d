"""A lab name is one lab on the host: a second `twin up` of a name that is starting or running is
refused, from the same run root or another, and a `twin down` from another run root leaves it be."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from labtools import DATA, REPO, TWIN, leftovers, twin, twin_json


def _pids_of(lab: str) -> list[str]:
    """Processes anywhere on the host whose command line names the lab's FRR pathspaces or run dir."""
    out = subprocess.run(["pgrep", "-af", f"tw_{lab}_|/run/twin/{lab}/"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_same_name_up_race_and_other_run_root_refused(lab_name: str, tmp_path: Path) -> None:
    argv = [*TWIN, "up", str(DATA / "mini.yaml"), "--name", lab_name, "--json"]
    first = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    second = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outputs = [p.communicate(timeout=300) for p in (second, first)]
    done = [(p.returncode, out, err) for p, (out, err) in zip((second, first), outputs, strict=True)]
    codes = sorted(code for code, _, _ in done)
    assert codes == [0, 2], done          # whichever took the name first brings the lab up
    refused = next(err for code, _, err in done if code == 2)
    assert f"lab '{lab_name}' is busy" in refused and "twin up" in refused
    assert twin_json("status", "--name", lab_name)["healthy"]

    # another run root: neither its up nor its down touches the lab of this name
    other = {**os.environ, "TWIN_RUN_DIR": str(tmp_path / "run")}
    for command in (["up", str(DATA / "mini.yaml")], ["down"]):
        proc = subprocess.run([*TWIN, *command, "--name", lab_name], cwd=REPO, env=other, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert "exists under another run root" in proc.stderr
    assert twin_json("status", "--name", lab_name)["healthy"]

    twin("down", "--name", lab_name)
    assert leftovers(lab_name) == []
    assert _pids_of(lab_name) == []
