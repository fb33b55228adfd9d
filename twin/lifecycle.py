"""Bring a lab up (runtime, gNMI agents, drill settings) and wait until it is healthy: what
`twin up` and `twin ci` share."""

from __future__ import annotations

from pathlib import Path

from twin.checks.health import Health, HealthProgress, wait_healthy
from twin.drills.settings import save_settings
from twin.lab import Lab
from twin.runtime.base import ProgressFn, get_runtime
from twin.runtime.state import LabState
from twin.switch.agent_process import start_agent


def bring_up(lab: Lab, name: str, runtime: str | None, on_step: ProgressFn, on_poll: HealthProgress,
             timeout: float | None = None, image: str | None = None,
             templates: Path | None = None) -> tuple[LabState, Health]:
    """`runtime` and `image` override the lab file's; `templates` is a SONiC release's FRR templates
    that twin's switches render with (their config daemons too), instead of twin's own renderer."""
    rt = get_runtime(runtime or lab.runtime, image or lab.image, templates)
    state = rt.up(name, lab.plan, on_step)
    on_step("starting gNMI agents", 0, 0)
    try:
        start_agent(state, lab.plan, lab.gnmi, templates)
        save_settings(name, lab.drills)
    except BaseException:
        rt.down(name)
        raise
    return state, wait_healthy(state, lab.plan, timeout or lab.health.timeout_s, on_poll)
