"""The traffic of AI collectives through a running fabric: GPUs, their flows (one per RoCE queue pair),
the paths the switches' forwarding gives them, and the link-load metrics of the IETF BMWG draft
draft-calabria-bmwg-ai-fabric-training-bench (DESIGN.md §4 and §12b fix the JSON fields)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PatternName = Literal["ring-allreduce", "all-to-all", "pairs"]
ROCE_DPORT = 4791   # RoCEv2: UDP destination port 4791 (IANA), every queue pair


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Gpu(Strict):
    """One GPU and the NIC it owns (rail-optimised servers: NIC i belongs to GPU i)."""

    server: str
    index: int                 # the GPU's (and its NIC's) number on its server, from 0
    ip: str                    # the NIC's address
    nic: str                   # the NIC's interface on the server
    leaf: str                  # the switch the NIC is cabled to
    leaf_port: str             # the leaf's kernel interface facing the NIC
    rail: int | None = None
    pod: int | None = None
    speed_mbps: int            # the NIC's line rate

    @property
    def name(self) -> str:
        return f"{self.server}/{self.index}"


class Flow(Strict):
    """One queue pair between two GPUs: its own UDP source port, RoCEv2's destination port."""

    src: str                   # GPU name (server/index)
    dst: str
    qp: int                    # the queue pair's number within its GPU pair, from 0
    src_ip: str
    dst_ip: str
    sport: int
    dport: int = ROCE_DPORT


class LinkLoad(Strict):
    """One direction of a fabric link (switch to switch) the pattern uses."""

    a: str                     # the sending node
    b: str                     # the receiving node
    a_port: str                # the port it leaves a by (parallel links between a and b are apart)
    b_port: str
    flows: int
    load: float                # offered load as a share of the link's line rate (1.0 = full)
    uplink: bool = False       # a leaf's link towards a spine


class Metrics(Strict):
    """What the pattern does to the fabric at one moment."""

    flows: int
    resolved: int              # flows whose path reached the destination GPU's NIC
    links: list[LinkLoad]
    uplinks: int               # the ECMP members (leaf -> spine) of the leaves whose flows cross a spine
    uplink_loads: list[LinkLoad] = Field(default_factory=list)   # each of them, idle ones included
    mmr: float | None          # max / mean offered load over those uplinks (None: no flow crosses a spine)
    jfi: float | None          # Jain's fairness index over the same uplinks
    idle_uplinks: int
    busbw_share: float         # the collective's bus bandwidth as a share of NIC line rate
    pair_share: dict[str, float] = Field(default_factory=dict)   # "src->dst": achieved share of line rate


class BlastRadius(Strict):
    """Who loses bandwidth while the fault is in place."""

    pairs: dict[str, float]    # "src->dst": share of its bandwidth lost (1.0: cut off)
    rails: dict[str, float]    # rail -> worst loss among its pairs
    moved_healthy: int         # flows that changed path although their path did not touch the fault
    moved_healthy_share: float  # ... as a share of the flows whose path did not touch the fault


class Confirmation(Strict):
    """Real packets sent along the resolved flows, counted on every switch port they leave by."""

    packets_per_flow: int
    links: int                 # switch ports that carried (or were predicted to carry) flow packets
    matched: int               # ... whose counted packets equal the prediction
    mismatches: list[str] = Field(default_factory=list)


class TrafficReport(Strict):
    lab: str
    pattern: PatternName
    qps: int
    gpus: int
    flows: int
    links: list[LinkLoad]
    mmr: float | None
    jfi: float | None
    idle_uplinks: int
    busbw_share: float
    uplinks: int
    seed_mode: str = "kernel"
    fault: str | None = None
    before: Metrics | None = None
    during: Metrics | None = None
    after: Metrics | None = None
    blast_radius: BlastRadius | None = None
    outage_ms: float | None = None           # injection -> every FIB converged (the failed flows stall)
    jct_overhead: float | None = None        # the failure iteration's extra time, as a share of a normal one
    iteration_ms: float | None = None
    paths: dict[str, list[str]] = Field(default_factory=dict)   # flow key -> nodes, for `--json` readers
    confirmation: Confirmation | None = None


class TrafficSlo(Strict):
    """Bounds a lab may set on its traffic patterns (`twin ci` fails when one is crossed)."""

    mmr_max: float | None = Field(None, ge=1)
    jfi_min: float | None = Field(None, gt=0, le=1)
    busbw_min: float | None = Field(None, gt=0, le=1, description="least bus bandwidth share of line rate")
    busbw_drop_max: float | None = Field(None, ge=0, le=1, description="largest drop of that share during a fault")


class LabTraffic(Strict):
    """A pattern a lab lists for `twin ci`: run on the healthy fabric, and with a fault when one is named."""

    pattern: PatternName
    pairs: str | None = None
    qps: int = Field(4, ge=1, le=64)
    fault: str | None = Field(None, description="KIND:TARGET, e.g. spine-loss:spine1")
    slo: TrafficSlo = TrafficSlo()

