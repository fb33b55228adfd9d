"""The settings of a lab file (labs/*.yaml): how to run a lab, reach its switches and judge it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from twin.model.drill import KINDS, LabDrill, Slo
from twin.model.plan import Plan
from twin.model.traffic import LabTraffic


class RoceSettings(BaseModel):
    """The `roce:` section of a lab file: what the fabric's RDMA design requires."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    mtu: int | None = Field(None, ge=1280, le=9216, description="smallest port MTU that carries RoCE frames")
    lossless: list[int] | None = Field(None, description="priorities PFC must pause, e.g. [3, 4]")
    compute_dscp: int | None = Field(None, ge=0, le=63, description="DSCP of GPU-to-GPU RDMA")
    storage_dscp: int | None = Field(None, ge=0, le=63, description="DSCP of storage RDMA")


class DrillSettings(BaseModel):
    """What a running lab's gate judges by: the `slo:`, `drills:`, `accept_not_emulated:` and `roce:`
    sections of its lab file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    slo: dict[str, Slo] = {}
    drills: list[LabDrill] = []
    accept_not_emulated: list[str] = []
    roce: RoceSettings = RoceSettings()

    @field_validator("slo")
    @classmethod
    def _known_kinds(cls, value: dict[str, Slo]) -> dict[str, Slo]:
        for key in value:
            if key != "default" and key not in KINDS:
                raise ValueError(f"'{key}' is not a drill kind; use 'default' or one of {', '.join(KINDS)}")
        return value


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


class RebootSettings(BaseModel):
    """How long a switch's reboot (gNOI System.Reboot COLD or WARM) keeps its management plane in each
    phase. A model of what a namespace does not go through: SONiC's reboot script stopping its
    services while SSH and gNMI still answer, then the platform's firmware, kernel and systemd until
    sshd and the gnmi container answer again. What happens to FRR, the kernel and CONFIG_DB in between
    is real (twin.switch.restart.reboot)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    shutdown_s: float = Field(5, ge=0.5, le=600, description="the management address answers this long after "
                              "the request, while the switch stops its services (RebootStatus reads active)")
    boot_s: float = Field(30, ge=1, le=1800, description="then it answers nothing (SSH, gNMI, gNOI) this long, "
                          "as a switch rebooting its CPU; sonic-mgmt's reboot helpers look for it down 10 s after "
                          "the request")


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
    traffic: list[LabTraffic] = Field([], description="collective patterns `twin ci` runs, with their bounds")
    roce: RoceSettings = RoceSettings()
    reboot: RebootSettings = RebootSettings()
    accept_not_emulated: list[str] = Field(
        [], description="CONFIG_DB tables SONiC's routing stack reads and twin does not emulate that verify, ci and "
        "rehearse may let pass (they fail on any other; `twin validate --accept` does the same)")


class Lab(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    runtime: str
    health: HealthSettings
    image: str | None = None
    gnmi: GnmiSettings = GnmiSettings()
    reboot: RebootSettings = RebootSettings()
    drills: DrillSettings = DrillSettings()
    traffic: list[LabTraffic] = []
    roce: RoceSettings = RoceSettings()
    plan: Plan
