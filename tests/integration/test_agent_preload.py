"""The agent `twin up` starts before its lab exists (twin.lab.agent_preload): it goes on only when
handed over, and ends by itself when `twin up` ends before that."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from twin.lab.agent_preload import PreloadedAgent


def test_a_preloaded_agent_whose_twin_up_ended_first_exits() -> None:
    agent = PreloadedAgent(Path("/run/twin/never-made"))
    proc = agent.proc
    assert proc is not None and proc.stdin is not None
    proc.stdin.close()   # as when `twin up` dies: its end of the pipe closes
    assert proc.wait(timeout=60) == 0
    agent.close()
    assert not Path("/run/twin/never-made").exists()


def test_a_handed_over_agent_writes_its_log_in_the_run_directory_and_ends_with_the_lab() -> None:
    run_dir = Path(tempfile.mkdtemp(prefix="twin-preload-"))
    try:
        agent = PreloadedAgent(run_dir)
        proc = agent.hand_over()
        assert proc is not None and agent.proc is None
        agent.close()                    # handed over: no longer close's to end
        assert proc.poll() is None
        deadline = time.monotonic() + 60  # it loads its modules, then opens agent.log
        while not (run_dir / "agent.log").exists() and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.05)
        assert (run_dir / "agent.log").exists()
    finally:
        shutil.rmtree(run_dir)           # the lab went away before its settings came: the agent leaves
    assert proc.wait(timeout=30) == 0
