"""Start a lab: the runtime creates its nodes and links, then its gNMI agent starts and its drill
settings are kept; a failure removes all of it. Waiting for health is twin.flows.bringup's job."""

from __future__ import annotations

from pathlib import Path

from twin.lab.agent import start_agent
from twin.lab.running import RunningLab, save_settings
from twin.model import phases
from twin.model.lab import Lab
from twin.runtime.registry import ProgressFn, get_runtime


def start_lab(lab: Lab, name: str, runtime: str | None, on_step: ProgressFn, image: str | None = None,
              templates: Path | None = None) -> RunningLab:
    """`runtime` and `image` override the lab file's; `templates` is a SONiC release's FRR templates
    that twin's switches render with (their config daemons too), instead of twin's own renderer."""
    rt = get_runtime(runtime or lab.runtime, image or lab.image, templates)
    state = rt.up(name, lab.plan, on_step)
    on_step("starting gNMI agents", 0, 0)
    try:
        agent = start_agent(state, lab.plan, lab.gnmi, templates)
        phases.reach("agents_ready")
        save_settings(name, lab.drills)
    except BaseException:
        rt.down(name)
        raise
    return RunningLab(state=state, plan=lab.plan, settings=lab.drills, agent=agent)
