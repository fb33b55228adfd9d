"""A running lab's inventory (state.json): its runtime, phase, namespaces and management addresses,
written by the runtime before anything is created, so a crash can be cleaned up (twin.host.rundir)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from twin.model.errors import TwinError

Phase = Literal["creating", "up", "failed"]


class NodeState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    role: str
    kind: str
    netns: str
    mgmt: str | None = None


class LabState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lab: str
    runtime: str
    phase: Phase
    topology: str
    created: float
    mgmt_subnet: str | None = None
    mgmt_host: str | None = None
    mgmt_netns: str | None = None
    host_iface: str | None = None
    image: str | None = None       # the container image of the switches (container runtimes)
    netns: list[str] = []
    nodes: list[NodeState] = []
    notes: list[str] = []
    unhealthy: str | None = None   # set by a drill that could not restore the fabric

    def node(self, name: str) -> NodeState:
        for n in self.nodes:
            if n.name == name:
                return n
        known = ", ".join(n.name for n in self.nodes)
        raise TwinError(f"lab '{self.lab}' has no node '{name}'; nodes: {known}")
