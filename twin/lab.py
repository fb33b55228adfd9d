"""Lab files (labs/*.yaml): a topology plus how to run and judge it. Also accepts a bare topology."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twin.errors import PlanError
from twin.plan.allocate import plan_topology
from twin.plan.models import Plan
from twin.topology.loader import load_topology, pydantic_problems
from twin.topology.source import load_yaml


class HealthSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    timeout_s: float = Field(60, gt=0, le=3600, description="how long `up` waits for a healthy fabric")


class GnmiSettings(BaseModel):
    """How the switches' gNMI agents listen; SONiC's gNMI port and default credentials."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    port: int = Field(8080, ge=1, le=65535)
    username: str = "admin"
    password: str = "YourPaSsWoRd"
    tls: bool = Field(True, description="self-signed TLS (clients use skip_verify); false = plaintext")
    ssh_port: int = Field(22, ge=1, le=65535, description="SSH with the SONiC-like shell, same credentials")


class LabFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    topology: Path
    runtime: str = "netns"
    description: str = ""
    health: HealthSettings = HealthSettings()
    gnmi: GnmiSettings = GnmiSettings()


class Lab(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    runtime: str
    health: HealthSettings
    gnmi: GnmiSettings = GnmiSettings()
    plan: Plan


def load_lab(path: Path) -> Lab:
    """A lab file (has `topology: <path>`) or a topology file (then the lab is named after it)."""
    doc = load_yaml(path)
    if isinstance(doc.data.get("topology"), str):
        try:
            spec = LabFile.model_validate(doc.data)
        except ValidationError as exc:
            raise PlanError(pydantic_problems(doc, exc)) from None
        topo_path = spec.topology if spec.topology.is_absolute() else path.parent / spec.topology
        if not topo_path.is_file():
            raise PlanError([doc.problem(("topology",), f"topology file {topo_path} does not exist",
                                         "fix the path (it is relative to the lab file)")])
        plan = plan_topology(load_topology(topo_path))
        return Lab(name=spec.name, runtime=spec.runtime, health=spec.health, gnmi=spec.gnmi, plan=plan)
    plan = plan_topology(load_topology(path))
    return Lab(name=plan.name, runtime="netns", health=HealthSettings(), plan=plan)
