"""The gNMI agent started while its lab's switches boot: a switch is set up only once the bring-up
has written its programmed.json (twin.switch.agent.wait_booted)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from twin.model.agent import AgentSwitch
from twin.switch.agent import wait_booted
from twin.switch.cfgmgr import PROGRAMMED


def test_waits_until_programmed_json_is_written(tmp_path: Path) -> None:
    sw = AgentSwitch(name="leaf1", netns="tw.x.leaf1", mgmt="172.20.0.2", rundir=str(tmp_path), starting=True)
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (wait_booted(sw, poll=0.01), done.set()))
    waiter.start()
    time.sleep(0.2)
    assert not done.is_set(), "set up before the switch was booted"
    (tmp_path / PROGRAMMED).write_text("{}")
    waiter.join(timeout=5)
    assert done.is_set()


def test_a_booted_switch_is_not_waited_for(tmp_path: Path) -> None:
    (tmp_path / PROGRAMMED).write_text("{}")
    start = time.monotonic()
    wait_booted(AgentSwitch(name="leaf1", rundir=str(tmp_path), starting=True), poll=5)
    assert time.monotonic() - start < 1


def test_a_switch_without_a_run_directory_is_refused() -> None:
    with pytest.raises(ValueError, match="leaf1"):
        wait_booted(AgentSwitch(name="leaf1", starting=True))
