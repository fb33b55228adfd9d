"""A drill's instants on the lab's event log (twin.lab.events), where twin telemetry's Prometheus and a
Grafana annotation query find them: each injection and restore as it happens, and once the drill is
judged, when the fabric detected and converged after each."""

from __future__ import annotations

from twin.lab import events
from twin.lab.events import LabEvent
from twin.model.drill import DrillReport


def run_id(scenario: str, zero: float) -> str:
    return f"{scenario}@{zero:.3f}"


def action_event(lab: str, run: str, kind: str, target: str, phase: str, t: float) -> None:
    """An injection or a restore, at `t` (time.time())."""
    events.record(lab, [LabEvent(t, "drill", kind, target, phase, run)])


def judged_events(report: DrillReport, zero: float, run: str) -> list[LabEvent]:
    """When each injection was detected and converged, and each restore recovered."""
    out = []
    for action in report.actions:
        t = zero + action.t_ms / 1000
        names = ("detect", "converge") if action.action == "inject" else ("restore_detect", "recovered")
        for phase, ms in zip(names, (action.detect_ms, action.converge_ms), strict=True):
            if ms is not None:
                out.append(LabEvent(t + ms / 1000, "drill", action.kind, action.target, phase, run))
    return out
