"""`twin push` and the push of `twin ci`: the configs pushed over gNMI, observed until they have
taken effect (twin.checks.observed_change), with what they did on every switch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from twin.checks.observed_change import ObservedChange, observe_change
from twin.gnmi.push import PushResult, push
from twin.lab.running import RunningLab


def push_observed(lab: RunningLab, configs: Path | None,
                  tick: Callable[[PushResult], None] = lambda r: None) -> tuple[list[PushResult], ObservedChange]:
    results: list[PushResult] = []
    observed = observe_change(lab, lambda: results.extend(push(lab, configs, tick)),
                              [n.name for n in lab.plan.switches], fields=None)
    fields = {r.switch: [*(f"{k} added" for k in r.added), *(f"{k} removed" for k in r.removed),
                         *(f"{k} changed" for k in r.changed)] for r in results if r.ok}
    for effect in observed.effects:
        effect.fields = fields.get(effect.switch, [])
    return results, observed
