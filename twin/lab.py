"""Lab files (labs/*.yaml): a topology plus how to run and judge it. Also accepts a bare topology."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twin.drills.models import LabDrill, Slo
from twin.drills.settings import DrillSettings
from twin.errors import PlanError
from twin.plan.allocate import plan_topology
from twin.plan.models import Plan
from twin.topology.loader import load_topology, pydantic_problems
from twin.topology.source import load_yaml
from twin.validate.qos import RoceSettings


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
    runtime: Literal["netns", "docker", "clab"] = "netns"
    image: str | None = Field(None, description="switch image of the container runtimes "
                              "(default: the local twin-switch image; docker-sonic-vs:<tag> boots SONiC-VS)")
    description: str = ""
    health: HealthSettings = HealthSettings()
    gnmi: GnmiSettings = GnmiSettings()
    slo: dict[str, Slo] = Field({}, description="limits per drill kind (or 'default') that drills must meet")
    drills: list[LabDrill] = Field([], description="the drills `twin ci` and `twin rehearse` run")
    roce: RoceSettings = RoceSettings()


class Lab(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    runtime: str
    health: HealthSettings
    image: str | None = None
    gnmi: GnmiSettings = GnmiSettings()
    drills: DrillSettings = DrillSettings()
    roce: RoceSettings = RoceSettings()
    plan: Plan


def load_lab(path: Path) -> Lab:
    """A lab file (has `topology: <path>`) or a topology file (then the lab is named after it)."""
    from twin.design.air import is_air_file

    if is_air_file(path):  # an NVIDIA Air topology (.dot, or .json of Air's shape) is never a lab file
        plan = plan_topology(load_topology(path))
        return Lab(name=plan.name, runtime="netns", health=HealthSettings(), plan=plan)
    doc = load_yaml(path)
    named = doc.data.get("topology")
    if named is not None and not isinstance(named, str | dict):  # a dict: a containerlab file's own topology
        raise PlanError([doc.problem(("topology",), f"expected the path of a topology file, got {type(named).__name__}",
                                     "write it as 'topology: ../topologies/clos-4x8.yaml' (relative to the lab file)")])
    if isinstance(named, str):
        try:
            spec = LabFile.model_validate(doc.data)
        except ValidationError as exc:
            raise PlanError(pydantic_problems(doc, exc)) from None
        topo_path = spec.topology if spec.topology.is_absolute() else path.parent / spec.topology
        if not topo_path.exists():  # what exists but is no text file, twin.userfile says when reading it
            raise PlanError([doc.problem(("topology",), f"topology file {topo_path} does not exist",
                                         "fix the path (it is relative to the lab file)")])
        problems = []
        drills = []
        for i, d in enumerate(spec.drills):
            if (d.kind is None) == (d.scenario is None):
                problems.append(doc.problem(("drills", i), "a drill needs exactly one of 'kind' or 'scenario'",
                                            "write 'kind: spine-loss' (with 'target:') or 'scenario: FILE'"))
                continue
            if d.scenario is not None:
                scenario = Path(d.scenario) if Path(d.scenario).is_absolute() else path.parent / d.scenario
                if not scenario.is_file():
                    problems.append(doc.problem(("drills", i, "scenario"), f"scenario file {scenario} does not exist",
                                                "fix the path (it is relative to the lab file)"))
                    continue
                d = d.model_copy(update={"scenario": str(scenario.resolve())})
            drills.append(d)
        try:
            settings = DrillSettings(slo=spec.slo, drills=drills)
        except ValidationError as exc:
            problems += pydantic_problems(doc, exc)
        if problems:
            raise PlanError(problems)
        plan = plan_topology(load_topology(topo_path))
        return Lab(name=spec.name, runtime=spec.runtime, image=spec.image, health=spec.health, gnmi=spec.gnmi,
                   drills=settings,
                   roce=spec.roce, plan=plan)
    plan = plan_topology(load_topology(path))
    return Lab(name=plan.name, runtime="netns", health=HealthSettings(), plan=plan)
