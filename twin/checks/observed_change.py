"""Apply a change to a running lab and observe it: every switch read before, the change applied
under a FIB watch, waited for until it has taken effect (twin.checks.settle), every switch read
after, and what differs, switch by switch (twin.checks.effect). What `twin push`, `twin rehearse`
and `twin ci` judge a change by."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from twin.checks.effect import SwitchSnapshot, frr_delay_s, switch_effect
from twin.checks.settle import Settling
from twin.checks.snapshot import frr_configs, snapshots
from twin.lab.running import RunningLab
from twin.model.results import Settle, SwitchEffect

SETTLE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ObservedChange:
    settle: Settle
    effects: list[SwitchEffect]          # every switch's, in the lab's order
    after: dict[str, SwitchSnapshot]     # the lab once the change took effect (the next change's before)


def lab_switches(lab: RunningLab) -> list[str]:
    return [n.name for n in lab.plan.switches if lab.state.node(n.name).netns]


def observe_change(lab: RunningLab, apply: Callable[[], None], touched: Sequence[str],
                   fields: Mapping[str, list[str]] | None = None, before: dict[str, SwitchSnapshot] | None = None,
                   timeout_s: float = SETTLE_TIMEOUT_S) -> ObservedChange:
    """`apply()` the change to the switches `touched`, wait until it has taken effect and say what
    it did; `fields`: the CONFIG_DB fields it sets per switch (named where it did nothing); `before`:
    the lab as an earlier observation left it (read now when None)."""
    switches = lab_switches(lab)
    if before is None:
        before = snapshots(lab, switches)
    with Settling(lab, switches) as watch:
        begun = time.time()
        apply()
        applied = time.time()
        now = frr_configs(lab, touched)
        delay = max([frr_delay_s(before[s].frr, now[s]) for s in touched if s in before], default=0.0)
        settle = watch.wait(begun, delay, timeout_s, applied=applied)
    after = snapshots(lab, switches)
    fields = fields or {}
    effects = [switch_effect(s, before[s], after[s], fields.get(s, [])) for s in switches]
    return ObservedChange(settle=settle, effects=effects, after=after)
