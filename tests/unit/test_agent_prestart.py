"""The agent started ahead of its switches: it waits for agent.json at nice 19, then takes the normal
priority back; it gives up when the lab's run directory goes away (its `up` failed)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from twin.switch.agent import await_settings


def test_it_gives_up_when_the_run_directory_goes_away(tmp_path: Path) -> None:
    run_dir = tmp_path / "lab"
    run_dir.mkdir()
    threading.Timer(0.1, run_dir.rmdir).start()
    started = time.monotonic()
    assert await_settings(run_dir) is False
    assert time.monotonic() - started < 5


@pytest.mark.skipif(os.geteuid() != 0, reason="taking a lower nice value back needs root (CAP_SYS_NICE)")
def test_it_waits_for_its_settings_then_runs_at_normal_priority(tmp_path: Path) -> None:
    code = ("import os, sys; from pathlib import Path; from twin.switch.agent import await_settings; "
            "print(os.getpriority(os.PRIO_PROCESS, 0), flush=True); "
            "print(await_settings(Path(sys.argv[1])), os.getpriority(os.PRIO_PROCESS, 0))")
    proc = subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", code, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().split() == ["19"]  # started niced, now waiting
    time.sleep(0.2)
    assert proc.poll() is None  # still waiting: no settings yet
    (tmp_path / "agent.json").write_text("{}")
    out, _ = proc.communicate(timeout=120)
    assert out.split() == ["True", "0"]
