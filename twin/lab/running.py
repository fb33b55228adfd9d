"""A running lab as one object: its state (the inventory the runtime wrote), the plan it was brought up
from, the drill settings its lab file declared and its gNMI agent's settings. Loaded once from the
lab's run directory and passed down to whatever reads or drills the lab.

Files under <run dir>/<lab>/: state.json and plan.json (the runtime writes them before anything is
created, so a crash can be cleaned up), drills.json (written here at bring-up) and agent.json (the
agent's settings, twin.lab.agent; 0600, it holds the password).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twin.host.rundir import lab_dir, load_plan, load_state
from twin.lab import agent as agent_settings
from twin.model.agent import AgentSettings
from twin.model.errors import TwinError
from twin.model.lab import DrillSettings
from twin.model.plan import Plan
from twin.model.state import LabState


def save_settings(lab: str, settings: DrillSettings) -> None:
    (lab_dir(lab) / "drills.json").write_text(settings.model_dump_json(indent=1, exclude_none=True))


def load_settings(lab: str) -> DrillSettings:
    path = lab_dir(lab) / "drills.json"
    if not path.exists():
        return DrillSettings()
    return DrillSettings.model_validate(json.loads(path.read_text()))


def load_agent_settings(lab: str) -> AgentSettings | None:
    """The agent's settings (agent.json), or None for a lab without an agent."""
    path = lab_dir(lab) / "agent.json"
    try:
        return AgentSettings.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


@dataclass
class RunningLab:
    """One lab that is up: read once with `RunningLab.load(name)`, then handed to every reader."""

    state: LabState
    plan: Plan
    settings: DrillSettings = field(default_factory=DrillSettings)
    agent: AgentSettings | None = None   # agent.json: port, credentials, TLS, the switches it serves

    @property
    def name(self) -> str:
        return self.state.lab

    @classmethod
    def read(cls, name: str) -> RunningLab | None:
        """The lab whatever its phase (a failed or half-created one too), or None when it has no state."""
        state = load_state(name)
        if state is None:
            return None
        return cls(state=state, plan=load_plan(name), settings=load_settings(name),
                   agent=load_agent_settings(name))

    @classmethod
    def load(cls, name: str) -> RunningLab:
        """A lab that is up; TwinError otherwise."""
        lab = cls.read(name)
        if lab is None or lab.state.phase != "up":
            raise TwinError(f"lab '{name}' is not running; start it with 'twin up'")
        return lab

    @property
    def sonic_templates(self) -> Path | None:
        """The SONiC release templates the lab's switches render FRR with (None: twin's own renderer)."""
        value = self.agent.sonic_templates if self.agent is not None else None
        return Path(value) if value else None

    def gnmi_target(self, node: str) -> dict[str, Any] | None:
        """Keyword arguments for pygnmi's gNMIclient, or None for nodes without an agent."""
        return agent_settings.gnmi_target(self.agent, self.state, node)

    def ssh_target(self, node: str) -> dict[str, Any] | None:
        """What netmiko's ConnectHandler needs, or None for nodes without an agent."""
        return agent_settings.ssh_target(self.agent, self.state, node)
