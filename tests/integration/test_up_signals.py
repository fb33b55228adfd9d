"""`twin up` ended by SIGTERM or SIGHUP (or Ctrl-C) before it judged the lab leaves nothing behind,
whether it was creating the nodes or waiting for the fabric to converge, and exits 128 + the signal."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from labtools import DATA, REPO, TWIN, leftovers, twin, unique


@pytest.mark.parametrize(("signum", "moment"), [(signal.SIGTERM, "state.json"), (signal.SIGHUP, "agent.ready"),
                                                (signal.SIGINT, "agent.ready")],
                         ids=["TERM-creating", "HUP-converging", "INT-converging"])
def test_an_interrupted_up_leaves_nothing(signum: signal.Signals, moment: str) -> None:
    name = unique("t")
    run_dir = Path("/run/twin") / name
    proc = subprocess.Popen([*TWIN, "up", str(DATA / "mini.yaml"), "--name", name], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / moment).exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "twin up ended before the signal"
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signum, err
        assert f"interrupted by {signum.name}" in err
        assert leftovers(name) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        twin("down", "--name", name, check=False)
