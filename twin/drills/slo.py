"""The limits a drill must meet (built-in SLOs under the lab's, under the scenario's) and the scenarios
a lab's drills and `twin drill KIND` stand for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twin.drills.faults.registry import FAULT_KINDS
from twin.drills.schedule import plan_actions
from twin.model.drill import LabDrill, Scenario, Slo, Step
from twin.model.lab import DrillSettings
from twin.stages.load.scenario import load_scenario

# What a drill must meet when the lab says nothing: the targets this project holds itself to, set by each
# fault kind's class (its `slo`).
DEFAULT_SLO: dict[str, Slo] = {name: cls.slo for name, cls in FAULT_KINDS.items() if cls.slo is not None}


def own_duration_s(scenario: Scenario) -> float:
    """The least time a drill of `scenario` takes from its first injection, set by its own parameters:
    the last of its timed actions (at_ms, hold_ms, link-flap's flaps x period + hold) and the settle
    waits (one after recovery, and one before an untimed fault is restored)."""
    _, actions = plan_actions(scenario)
    last = max((a.at for a in actions if a.at is not None), default=0.0)
    settles = 2 if any(a.at is None for a in actions) else 1
    return last + settles * scenario.settle_ms / 1000


# A default `cycle_s` (DEFAULT_SLO's, or a lab's `default:` section) bounds a drill of this one: one
# fault held until the fabric has converged, with the default settle time. A drill whose own
# parameters take longer gets the difference on top (scheduled_cycle_s).
REFERENCE = Scenario(name="reference", steps=[Step(kind="link-down")])


def scheduled_cycle_s(cycle_s: float, scenario: Scenario) -> float:
    """A default cycle bound for `scenario`: `cycle_s` plus the time its own parameters take beyond
    the reference drill's (20 flaps every 1.5 s add their 28.5 s, a scenario's at_ms offsets theirs)."""
    return round(cycle_s + max(0.0, own_duration_s(scenario) - own_duration_s(REFERENCE)), 3)


def slo_for(settings: DrillSettings, kind: str, scenario: Scenario | None = None) -> Slo:
    """Built-in limits, under the lab's `default:`, under the kind's own, under the scenario's.
    A default cycle_s (built in or `default:`) grows with the scenario's own duration
    (scheduled_cycle_s); one set for the kind or by the scenario is taken as written."""
    base = DEFAULT_SLO.get(kind, Slo()).merged(settings.slo.get("default"))
    if scenario is not None and base.cycle_s is not None:
        base = base.merged(Slo(cycle_s=scheduled_cycle_s(base.cycle_s, scenario)))
    return base.merged(settings.slo.get(kind)).merged(scenario.slo if scenario else None)




def single(kind: str, target: str | None, **params: Any) -> Scenario:
    """The scenario of `twin drill KIND`: one fault, held until the fabric has converged."""
    return Scenario(name=kind, steps=[Step.model_validate({"kind": kind, "target": target, **params})])


def scenario_of(drill: LabDrill) -> Scenario:
    """A drill a lab lists: its scenario file (already resolved to an absolute path), or its kind."""
    return load_scenario(Path(drill.scenario)) if drill.scenario else single(str(drill.kind), drill.target)
