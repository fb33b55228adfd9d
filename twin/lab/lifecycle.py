"""Start a lab: the runtime creates its nodes and links, its gNMI agent sets itself up while the
switches' FRR launches and the fabric comes up, and its drill settings are kept; a failure removes
all of it. Waiting for health is twin.flows.bringup's job."""

from __future__ import annotations

import subprocess
from pathlib import Path

from twin.host.lablock import LabLock
from twin.host.rundir import check_room
from twin.lab.agent import await_agent, configure_agent, prestart_agent
from twin.lab.agent_preload import PreloadedAgent
from twin.lab.running import RunningLab, save_settings
from twin.model import phases
from twin.model.agent import AgentSettings
from twin.model.errors import RuntimeBackendError
from twin.model.lab import Lab
from twin.model.state import LabState
from twin.runtime.protocol import UpHooks
from twin.runtime.registry import ProgressFn, get_runtime


def start_lab(lab: Lab, name: str, runtime: str | None, on_step: ProgressFn, image: str | None = None,
              templates: Path | None = None, preloaded: PreloadedAgent | None = None) -> RunningLab:
    """`runtime` and `image` override the lab file's; `templates` is a SONiC release's FRR templates
    that twin's switches render with (their config daemons too), instead of twin's own renderer;
    `preloaded`: the agent `twin up` started as it started (twin.lab.agent_preload)."""
    rt = get_runtime(runtime or lab.runtime, image or lab.image, templates)
    agents: list[AgentSettings] = []
    prestarted: list[subprocess.Popen[bytes]] = []

    def prestart(lab_name: str) -> None:  # before the switches: it loads itself while they are prepared
        prestarted.append(prestart_agent(lab_name, preloaded))

    def configure(state: LabState) -> None:  # the switches are prepared: it sets them up while FRR launches
        agents.append(configure_agent(state, lab.plan, lab.gnmi, templates, lab.reboot))

    def serving(state: LabState) -> None:  # every switch runs: wait for it while the fabric comes up
        on_step("waiting for the gNMI agent", 0, 0)
        await_agent(name, next(iter(prestarted), None))
        phases.reach("agents_ready")

    check_room(len(lab.plan.nodes))
    with LabLock(name, "up"):  # one command at a time on a lab name, across run roots (twin.host.lablock)
        state = rt.up(name, lab.plan, on_step, UpHooks(created=prestart, prepared=configure, started=serving))
        try:
            if not agents:
                raise RuntimeBackendError(f"the {rt.name} runtime brought lab '{name}' up without starting its "
                                          "gNMI agent")
            save_settings(name, lab.drills)
        except BaseException:
            rt.down(name)
            raise
    return RunningLab(state=state, plan=lab.plan, settings=lab.drills, agent=agents[0])
