"""What a drill is (kinds, targets, timed steps, SLOs) and what it reports (DESIGN.md §4)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from twin.model.traffic import TrafficReport

Kind = Literal["spine-loss", "spine-silent", "leaf-loss", "link-down", "link-flap", "link-gray",
               "session-reset", "mtu-mismatch", "warm-reboot"]
# Each kind is one class in twin/drills/faults/ (registry.py), which says what it targets.
KINDS: tuple[str, ...] = get_args(Kind)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slo(Strict):
    """Limits a drill must meet; unset limits are not judged. Times in milliseconds."""

    detect_ms: float | None = Field(None, gt=0)
    converge_ms: float | None = Field(None, gt=0)
    loss_ms: float | None = Field(None, ge=0)
    recovery_converge_ms: float | None = Field(None, gt=0)
    recovery_loss_ms: float | None = Field(None, ge=0)
    imbalance: float | None = Field(None, ge=1, description="busiest spine's share / fair share, during")
    cycle_s: float | None = Field(None, gt=0, description="inject, measure, restore and verify")

    def merged(self, other: Slo | None) -> Slo:
        if other is None:
            return self
        return Slo.model_validate({**self.model_dump(exclude_none=True), **other.model_dump(exclude_none=True)})


class Step(Strict):
    """One fault of a scenario. `hold_ms` unset: restore once the fabric has converged and settled."""

    kind: Kind
    target: str | None = None
    at_ms: float = Field(0, ge=0, description="when to inject, from the start of the scenario")
    hold_ms: float | None = Field(None, gt=0, description="how long the fault lasts")
    loss_pct: float = Field(5.0, gt=0, le=100, description="link-gray: random loss on the link, both ways")
    mtu: int = Field(1500, ge=68, le=9216, description="mtu-mismatch: the MTU set on one end")
    flaps: int = Field(3, ge=1, le=100, description="link-flap: how many times the link goes down")
    period_ms: float = Field(3000, gt=0, description="link-flap: time from one flap to the next")


class Scenario(Strict):
    name: str
    description: str = ""
    steps: list[Step] = Field(min_length=1)
    settle_ms: float = Field(1000, ge=0, description="quiet time after convergence before acting again")
    slo: Slo | None = None


class LabDrill(Strict):
    """A drill a lab lists for `twin ci` and `twin rehearse`: a kind with a target, or a scenario file."""

    kind: Kind | None = None
    target: str | None = None
    scenario: str | None = None
    slo: Slo | None = None


class SessionEvent(Strict):
    t: float            # seconds, wall clock (the one clock of a drill)
    node: str
    peer: str
    state: Literal["down", "up"]
    reason: str = ""


class LossRun(Strict):
    """Consecutive probe packets of one flow that never arrived."""

    flow: int
    first_seq: int
    count: int
    t_start: float      # when the first lost packet was sent (schedule)
    t_end: float        # when the first packet after the run was sent


class ActionReport(BaseModel):
    """One injection or restore and what the fabric did after it."""

    action: Literal["inject", "restore"]
    kind: str
    target: str
    t_ms: float                       # from the start of the drill
    detect_ms: float | None = None    # sessions declared down (inject) or Established again (restore)
    detect_target_ms: float | None = None  # the failed node's own view (spine-silent: the other way)
    converge_ms: float | None = None  # every FIB as expected
    unmatched: list[str] = []         # when they never were: how the FIBs differed at the end ("leaf1 10.1.4.2/32 ...")
    loss_ms: float = 0.0              # longest per-flow outage that began after this action
    lost_packets: int = 0
    settled: bool = False             # sessions and FIBs settled before the next action
    timed: bool = False               # done at a time the scenario fixed, not once the fabric settled
    how: str = ""                     # what was done: "all 8 links of spine1 down at once", "docker pause ..."


class DrillReport(BaseModel):
    drill: str
    target: str
    lab: str
    passed: bool
    restored: bool
    detect_ms: float | None = None
    detect_target_ms: float | None = None
    converge_ms: float | None = None
    loss_ms: float = 0.0
    recovery: dict[str, float | None] = {}
    noticed: bool = True
    paths_before: dict[str, int] = {}
    paths_during: dict[str, int] = {}
    paths_after: dict[str, int] = {}
    distribution: dict[str, float] = {}
    distribution_before: dict[str, float] = {}
    distribution_after: dict[str, float] = {}
    imbalance: float | None = None
    flows: int = 0
    flows_moved: int = 0
    flows_moved_healthy: int = 0
    probe: dict[str, float] = {}
    cycle_s: float = 0.0
    actions: list[ActionReport] = []
    sessions: list[SessionEvent] = []
    checks: dict[str, bool] = {}
    figures: dict[str, float] = {}    # the fault kind's own measurements (warm-reboot: control_plane_down_ms, ...)
    slo: dict[str, float] = {}
    violations: list[str] = []
    timeline: dict[str, list[list[float]]] = {}
    notes: list[str] = []
    traffic: TrafficReport | None = None   # `twin drill --traffic PATTERN`: the pattern before, during, after
