"""One result model for every check, and the reports built from it (a lab's health, `twin ci`, `twin rehearse`),
feeding every reporter."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, computed_field

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
    resets: dict[str, int] = {}   # switch -> its planned sessions that went down after Established (twin.checks.bgp)


class SwitchDiff(BaseModel):
    switch: str
    added: list[str] = []
    removed: list[str] = []
    changed: list[str] = []    # TABLE|key field: old -> new


class Settle(BaseModel):
    """How long a change took to take effect: from the moment it was applied until every switch's FIB
    and BGP sessions stopped changing (and FRR's own delay for what it applies later had passed),
    judged after they stayed unchanged for `window_ms`."""

    settled: bool
    settle_ms: float            # applied -> the last change seen (or the end of FRR's delay)
    waited_ms: float            # applied -> judged settled (or gave up)
    window_ms: float
    frr_delay_ms: float = 0.0   # FRR applies route-map and list changes after its route-map delay-timer
    changes: int = 0            # FIB and session changes seen while settling
    still_changing: list[str] = []   # switches that had not settled when the wait gave up


class RouteChange(BaseModel):
    prefix: str
    before: list[str] = []      # next hops ([]: no route)
    after: list[str] = []


class SwitchEffect(BaseModel):
    """What a change did on one switch: FRR's running config (per daemon), its routes in the RIB
    (zebra) and the FIB (the kernel), its BGP sessions and its links. `fields`: the CONFIG_DB fields
    the change set on this switch, named when they did nothing."""

    switch: str
    frr_added: list[str] = []       # "bgpd: route-map RM permit 10 > match ip address prefix-list PL"
    frr_removed: list[str] = []
    rib: list[RouteChange] = []
    fib: list[RouteChange] = []
    sessions: list[str] = []        # "10.0.0.64: Established -> Idle"
    links: list[str] = []           # "Ethernet0: mtu 9100 -> 9000"
    fields: list[str] = []

    @computed_field  # type: ignore[prop-decorator]  # in the JSON reports too
    @property
    def no_effect(self) -> bool:
        """Nothing a packet or a peer would notice changed: no route, session or link (FRR's config
        may have: a line FRR keeps but does not act on, such as global timers every neighbor overrides)."""
        return not (self.rib or self.fib or self.sessions or self.links)


class RehearsalReport(BaseModel):
    lab: str
    change: str
    passed: bool = False
    rolled_back: bool = False
    stopped_at: str = ""
    diffs: list[SwitchDiff] = []
    results: list[CheckResult] = []
    settles: dict[str, Settle] = {}         # step ("applying to leaf1", "the rollback") -> how it settled
    effects: list[SwitchEffect] = []        # what the change did, switch by switch (before any rollback)


class CiReport(BaseModel):
    lab: str
    name: str
    passed: bool
    stopped_at: str = ""        # the stage that failed, if any
    seconds: float = 0.0
    results: list[CheckResult] = []
    settles: dict[str, Settle] = {}     # "push" (or "up" without configs) -> how the fabric settled
    effects: list[SwitchEffect] = []    # what the push did, switch by switch
    drills: list[DrillReport] = []
    traffic: list[TrafficReport] = []
