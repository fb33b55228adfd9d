"""A drill's schedule: a scenario expanded into single faults and their timed (or settle-driven)
injections and restores. Pure: what `twin drill` runs and what the SLOs' cycle bound is computed from."""

from __future__ import annotations

from dataclasses import dataclass

from twin.drills.faults.base import Fault, LinkKey
from twin.drills.faults.registry import fault_kind
from twin.model.drill import Scenario, Step


@dataclass
class Action:
    at: float | None          # seconds after the drill's zero; None: once the fabric has settled
    inject: bool
    index: int                # which fault
    timed: bool = True        # the fault's length is fixed by the scenario, not by the fabric settling
    t: float = 0.0            # when it was done
    how: str = ""             # what was done, as the runtime or injector says


def plan_actions(scenario: Scenario) -> tuple[list[Step], list[Action]]:
    """Expand a scenario into single faults and their timed (or settle-driven) actions."""
    steps: list[Step] = []
    actions: list[Action] = []
    for step in scenario.steps:
        kind = fault_kind(step.kind)
        if kind.repeated:
            hold = (step.hold_ms or step.period_ms / 2) / 1000
            for k in range(step.flaps):
                steps.append(step)
                at = step.at_ms / 1000 + k * step.period_ms / 1000
                actions += [Action(at, True, len(steps) - 1), Action(at + hold, False, len(steps) - 1)]
            continue
        steps.append(step)
        at = step.at_ms / 1000
        held: float | None = step.hold_ms or kind.hold_ms
        actions.append(Action(at, True, len(steps) - 1, timed=held is not None))
        actions.append(Action(at + held / 1000 if held else None, False, len(steps) - 1, timed=held is not None))
    return steps, actions


def fault_scope(faults: list[Fault]) -> tuple[set[str], set[LinkKey]]:
    nodes: set[str] = set()
    links: set[LinkKey] = set()
    for f in faults:
        if f.topology_change:
            nodes |= f.nodes
            links |= f.links
    return nodes, links
