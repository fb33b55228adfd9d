"""The one place a drill writes the lab's health: a drill that could not restore the fabric marks the
lab unhealthy (`twin status` and the next drill say so); one that did clears an earlier mark."""

from __future__ import annotations

from twin.host.rundir import save_state
from twin.model.drill import DrillReport
from twin.model.state import LabState


def record_lab_health(state: LabState, report: DrillReport, why: str) -> None:
    """Mark the lab unhealthy with `why` when the drill left it unrestored; clear an old mark otherwise.
    Saves the lab's state only when the mark changes."""
    if not report.restored:
        state.unhealthy = f"drill {report.drill} on {report.target} could not restore the fabric: {why}"
    elif state.unhealthy:
        state.unhealthy = None
    else:
        return
    save_state(state)


def record_unrestored(state: LabState, drill: str, why: str) -> None:
    """Mark the lab unhealthy after a drill that was cut short and could not take its faults back."""
    state.unhealthy = f"drill {drill} could not restore the fabric: {why}"
    save_state(state)
