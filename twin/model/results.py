"""One result model for every check, and the reports built from it (a lab's health, `twin ci`, `twin rehearse`),
feeding every reporter."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from twin.model.drill import DrillReport
from twin.model.traffic import TrafficReport

Status = Literal["success", "failure", "skipped", "error"]


class ItemResult(BaseModel):
    subject: str            # the switch, peer, prefix or server pair the line is about
    status: Status
    message: str = ""


class CheckResult(BaseModel):
    name: str
    description: str
    status: Status
    items: list[ItemResult] = []
    measurements: dict[str, float] = {}

    @property
    def failures(self) -> list[ItemResult]:
        return [i for i in self.items if i.status != "success"]


def summarize(name: str, description: str, items: list[ItemResult],
              measurements: dict[str, float] | None = None) -> CheckResult:
    if any(i.status == "error" for i in items):
        status: Status = "error"
    elif any(i.status == "failure" for i in items):
        status = "failure"
    elif not items:
        status = "skipped"
    else:
        status = "success"
    return CheckResult(name=name, description=description, status=status, items=items,
                       measurements=measurements or {})


class Health(BaseModel):
    healthy: bool
    results: list[CheckResult]
    bgp: dict[str, int]
    ecmp: dict[str, dict[str, int]]
    seconds: float = 0.0
    agent: dict[str, Any] = {}                       # {pid, running, serving} of the lab's gNMI agent
    daemons: dict[str, dict[str, dict[str, Any]]] = {}  # node -> process -> {pid, running}


class CiReport(BaseModel):
    lab: str
    name: str
    passed: bool
    stopped_at: str = ""        # the stage that failed, if any
    seconds: float = 0.0
    results: list[CheckResult] = []
    drills: list[DrillReport] = []
    traffic: list[TrafficReport] = []


class SwitchDiff(BaseModel):
    switch: str
    added: list[str] = []
    removed: list[str] = []
    changed: list[str] = []    # TABLE|key field: old -> new


class RehearsalReport(BaseModel):
    lab: str
    change: str
    passed: bool = False
    rolled_back: bool = False
    stopped_at: str = ""
    diffs: list[SwitchDiff] = []
    results: list[CheckResult] = []
