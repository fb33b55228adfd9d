"""The held start of `twin up`: bfdd released once every node runs, the gNMI agent started
meanwhile (twin.kinds.held_start, twin.runtime.bringup._release)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from twin.kinds.held_start import HeldStart
from twin.model import phases
from twin.model.errors import RuntimeBackendError
from twin.runtime import bringup

STATE: Any = object()  # _release hands the state to on_started untouched


def test_every_held_daemon_starts_and_ends_the_launch_phase() -> None:
    started: list[str] = []
    held = HeldStart(daemons={"leaf1": lambda: started.append("bfdd leaf1"),
                              "spine1": lambda: started.append("bfdd spine1")})
    recorder = phases.Phases()
    with phases.recording(recorder):
        held.release()
    assert sorted(started) == ["bfdd leaf1", "bfdd spine1"]
    assert recorder.reached("daemon_launch")      # the held daemons end the launch phase


def test_a_held_daemon_that_fails_fails_the_release() -> None:
    def fails() -> None:
        raise RuntimeBackendError("leaf1: FRR daemons did not start")

    with pytest.raises(RuntimeBackendError, match="leaf1"):
        HeldStart(daemons={"leaf1": fails}).release()


class BlockingHeld(HeldStart):
    """A release that finishes only once on_started has begun: run one after the other, it times out."""

    def __init__(self, started: threading.Event, fail: bool = False) -> None:
        super().__init__()
        self.started, self.fail, self.finished = started, fail, threading.Event()

    def release(self) -> None:
        concurrent = self.started.wait(timeout=5)
        self.finished.set()
        if self.fail:
            raise RuntimeBackendError("spine1: bfdd did not start")
        assert concurrent, "on_started did not run while the release was under way"


def test_the_agent_starts_while_the_fabric_comes_up() -> None:
    started = threading.Event()
    held = BlockingHeld(started)
    seen: list[Any] = []

    def on_started(state: Any) -> None:
        seen.append(state)
        started.set()

    bringup._release(held, STATE, on_started)
    assert seen == [STATE] and held.finished.is_set()


def test_a_failed_agent_start_waits_for_the_release_before_failing() -> None:
    """Nothing may still be starting daemons when the failed `up` tears the lab down."""
    started = threading.Event()
    held = BlockingHeld(started)

    def on_started(state: Any) -> None:
        started.set()
        raise TimeoutError("the agent did not serve")

    with pytest.raises(TimeoutError, match="did not serve"):
        bringup._release(held, STATE, on_started)
    assert held.finished.is_set()


def test_a_failed_release_fails_the_bring_up_after_the_agent_started() -> None:
    started = threading.Event()
    with pytest.raises(RuntimeBackendError, match="spine1"):
        bringup._release(BlockingHeld(started, fail=True), STATE, lambda state: started.set())


def test_without_on_started_the_release_runs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    released: list[str] = []
    monkeypatch.setattr(HeldStart, "release", lambda self: released.append("released"))
    bringup._release(HeldStart(), STATE, None)
    assert released == ["released"]
