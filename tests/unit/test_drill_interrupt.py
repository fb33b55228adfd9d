"""Ctrl-C while a fault is being injected: the drill's clean-up takes back the fault that may already be
in place (the nftables table exists before `nft` returns), and says so when it cannot."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from twin.drills.faults.base import Fault
from twin.drills.runner import Drill
from twin.drills.schedule import Action
from twin.model.drill import Step
from twin.model.errors import DrillError


class CutShortInjector:
    """Puts the fault in place, then the user presses Ctrl-C before the command returns."""

    def __init__(self, restore_fails: bool = False) -> None:
        self.in_place: set[str] = set()
        self.restore_fails = restore_fails

    def apply(self, fault: Fault, step: Step, inject: bool) -> str:
        if inject:
            self.in_place.add(fault.target)
            raise KeyboardInterrupt
        if self.restore_fails:
            raise RuntimeError("Error: No such file or directory")
        self.in_place.discard(fault.target)
        return "restored"


def drill_with(injector: CutShortInjector) -> Drill:
    drill = object.__new__(Drill)  # only what _do and _restore_all use
    drill.faults = [Fault(kind="spine-silent", target="spine2")]
    drill.steps = [Step(kind="spine-silent", target="spine2")]
    drill.injector = injector  # type: ignore[assignment]
    drill.progress = lambda _: None
    drill.notes = []
    drill._active = set()
    drill._injecting = set()
    drill.scenario = SimpleNamespace(name="spine-silent")  # type: ignore[assignment]
    drill.state = SimpleNamespace(lab="d")  # type: ignore[assignment]
    return drill


def test_an_inject_cut_short_is_restored() -> None:
    injector = CutShortInjector()
    drill = drill_with(injector)
    with pytest.raises(KeyboardInterrupt):
        drill._do(Action(at=0.0, inject=True, index=0), set())
    drill._restore_all()
    assert injector.in_place == set()
    assert drill.notes == []


def test_an_inject_cut_short_that_cannot_be_restored_is_reported() -> None:
    drill = drill_with(CutShortInjector(restore_fails=True))
    with pytest.raises(KeyboardInterrupt):
        drill._do(Action(at=0.0, inject=True, index=0), set())
    drill._restore_all()
    assert len(drill.notes) == 1
    assert "spine-silent spine2 was cut short while being injected" in drill.notes[0]


def test_a_signal_whose_restore_fails_marks_the_lab_and_says_what_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM (a KeyboardInterrupt here, twin.host.signals) mid-drill and the restore fails: the user is told,
    and `twin status` says the lab is unhealthy."""
    marked: list[str] = []
    monkeypatch.setattr("twin.drills.runner.record_unrestored", lambda state, drill, why: marked.append(why))
    drill = drill_with(CutShortInjector(restore_fails=True))
    with pytest.raises(KeyboardInterrupt) as cut:
        drill._do(Action(at=0.0, inject=True, index=0), set())
    with pytest.raises(DrillError, match="interrupted, and spine-silent spine2 was cut short") as said:
        drill._cut_short(cut.value)
    assert "marked unhealthy" in str(said.value)
    assert marked and "Error: No such file or directory" in marked[0]


def test_a_signal_whose_restore_works_ends_as_the_signal() -> None:
    injector = CutShortInjector()
    drill = drill_with(injector)
    with pytest.raises(KeyboardInterrupt) as cut:
        drill._do(Action(at=0.0, inject=True, index=0), set())
    drill._cut_short(cut.value)  # nothing raised here: the caller re-raises the interrupt
    assert injector.in_place == set()
