"""A lab's state on disk, written before anything is created, so a crash can be cleaned up.

Layout under the run directory (default /run/twin, env TWIN_RUN_DIR):
  <lab>/state.json       the inventory: runtime, phase, namespaces, management addresses
  <lab>/plan.json        the plan the lab was brought up from
  <lab>/nodes/<node>/    per-node files: config_db.json, frr.conf, FRR pid files and vty sockets
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from twin.model.errors import TwinError
from twin.model.plan import Plan

Phase = Literal["creating", "up", "failed"]


def run_root() -> Path:
    return Path(os.environ.get("TWIN_RUN_DIR", "/run/twin"))


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


def lab_dir(lab: str) -> Path:
    return run_root() / lab


def node_dir(lab: str, node: str) -> Path:
    return lab_dir(lab) / "nodes" / node


def save_state(state: LabState) -> None:
    path = lab_dir(state.lab) / "state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(state.model_dump_json(indent=2))
    tmp.replace(path)


def load_state(lab: str) -> LabState | None:
    path = lab_dir(lab) / "state.json"
    try:
        return LabState.model_validate_json(path.read_text())
    except FileNotFoundError:
        return None


def save_plan(lab: str, plan: Plan) -> None:
    path = lab_dir(lab) / "plan.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan.model_dump_json(indent=1))


def load_plan(lab: str) -> Plan:
    path = lab_dir(lab) / "plan.json"
    try:
        return Plan.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        raise TwinError(f"lab '{lab}' is not running (no {path}); start it with 'twin up'") from None


def known_labs() -> list[str]:
    root = run_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def remove_lab_dir(lab: str) -> None:
    shutil.rmtree(lab_dir(lab), ignore_errors=True)
