"""The traffic of AI collectives through a running fabric: GPUs, their flows (one per RoCE queue pair),
the paths the switches' forwarding gives them, and the link-load metrics of the IETF BMWG draft
draft-calabria-bmwg-ai-fabric-training-bench (DESIGN.md §4 and §12b fix the JSON fields)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PatternName = Literal["ring-allreduce", "all-gather", "reduce-scatter", "all-to-all", "pairs"]
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
    """One direction of a link the pattern uses: between two switches, or a server's NIC link."""

    a: str                     # the sending node
    b: str                     # the receiving node
    a_port: str                # the port it leaves a by (parallel links between a and b are apart)
    b_port: str
    flows: int
    load: float                # offered load as a share of the link's line rate (1.0 = full)
    uplink: bool = False       # a leaf's link towards a spine
    capacity_gbps: float = 0.0  # the link's line rate in this direction


Hop = tuple[str, str]          # one link crossed: (from node, to node), or (its port, the peer's port)


class FlowRow(Strict):
    """One send of the flow-level model: a chunk over one queue pair, when it started and ended."""

    src: str                   # GPU name (server/index)
    dst: str
    qp: int
    step: int = 0              # its ring step (0 for the collectives without steps)
    bytes: int
    after: list[int] = Field(default_factory=list)   # the rows (indices in this table) it waits for
    path: list[Hop]            # the links it crosses, source server to destination server
    ports: list[Hop]           # the same hops as (port of the sender, port of the receiver)
    start_ms: float | None     # None: it never started (a send it waits for never ended)
    end_ms: float | None       # None: it never ended (no path)
    waited_ms: float = 0.0     # the failure iteration: time it stood still because its path crossed the fault
    new_path: list[Hop] | None = None    # the failure iteration: the path it moved to once the fabric converged
    new_ports: list[Hop] | None = None


class GroupFigures(Strict):
    """A rail's or a pod's share of the collective: when its GPUs' last send ended."""

    gpus: int
    completion_ms: float | None
    algbw_gbps: float
    busbw_gbps: float


class CollectiveFigures(Strict):
    """The collective by flow-level simulation (a model): its size, time and bandwidths as the IETF BMWG
    drafts define them (algbw = message_bytes / completion; busbw = algbw x algo_factor)."""

    collective: str = "SendRecv"       # AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv
    n: int = 0                         # ranks
    message_bytes: int = 0             # per rank, as nccl-tests' size
    algo_factor: float = 1.0
    completion_ms: float | None = None  # the last send's end (None: the collective never completes)
    algbw_gbps: float = 0.0
    busbw_gbps: float = 0.0
    line_rate_gbps: float = 0.0        # the slowest NIC taking part (busbw_share = busbw_gbps / this)
    by_rail: dict[str, GroupFigures] = Field(default_factory=dict)
    by_pod: dict[str, GroupFigures] = Field(default_factory=dict)
    # and each model built on these figures ends with `flow_table`, every send as a FlowRow


class Metrics(CollectiveFigures):
    """What the pattern does to the fabric at one moment, and its collective's figures on the fabric as
    it is then."""

    flows: int
    resolved: int              # flows whose path reached the destination GPU's NIC
    links: list[LinkLoad]
    uplinks: int               # the ECMP members (leaf -> spine) of the leaves whose flows cross a spine
    uplink_loads: list[LinkLoad] = Field(default_factory=list)   # each of them, idle ones included
    mmr: float | None          # max / mean offered load over those uplinks (None: no flow crosses a spine)
    jfi: float | None          # Jain's fairness index over the same uplinks
    idle_uplinks: int
    busbw_share: float         # the collective's bus bandwidth as a share of NIC line rate
    pair_share: dict[str, float] = Field(default_factory=dict)   # "src->dst": max-min fair share of line rate
    flow_table: list[FlowRow] = Field(default_factory=list)


class FailureIteration(CollectiveFigures):
    """The iteration a fault lands in (at its start): the sends whose path crosses the failed element
    stand still for the outage, then every send takes its path of the converged fabric."""

    outage_ms: float
    busbw_share: float
    flow_table: list[FlowRow] = Field(default_factory=list)


class BlastRadius(Strict):
    """Who loses bandwidth while the fault is in place."""

    pairs: dict[str, float]    # "src->dst": share of its bandwidth lost (1.0: cut off)
    rails: dict[str, float]    # rail -> worst loss among its pairs
    moved_healthy: int         # flows that changed path although their path did not touch the fault
    moved_healthy_share: float  # ... as a share of the flows whose path did not touch the fault
    crossed_flows: int = 0     # flows (queue pairs) whose path crossed the fault: they stand still for the outage
    delayed_pairs: dict[str, float | None] = Field(default_factory=dict)   # "src->dst": ms its last byte came
    #                                                  later in the failure iteration (None: it never came)


class Confirmation(Strict):
    """Real packets sent along the resolved flows, counted on every switch port they leave by."""

    packets_per_flow: int
    links: int                 # switch ports that carried (or were predicted to carry) flow packets
    matched: int               # ... whose counted packets equal the prediction
    mismatches: list[str] = Field(default_factory=list)


class RoceBreak(Strict):
    """A place where RoCE's class stops being lossless on the flows' paths, and how many flows cross it."""

    switch: str
    port: str
    side: Literal["ingress", "egress"]
    where: str                 # TABLE|key field
    problem: str
    fix: str
    flows: int


class IncastQueue(Strict):
    """An egress queue the pattern offers more than its port's line rate: what a burst leaves waiting in it,
    and whether ECN marks before PFC pauses (a model, bytes at line rate)."""

    switch: str
    port: str                  # the egress port
    peer: str                  # the node it sends to
    queue: int | None          # RoCE's queue there, its traffic class through TC_TO_QUEUE_MAP (None: unknown)
    flows: int
    ingress_ports: list[str]   # the ports of `switch` the flows arrive on
    offered_gbps: float        # what those ports bring (each at most its line rate)
    capacity_gbps: float
    burst_bytes: int           # what the flows put through the queue at once (their first sends)
    backlog_bytes: int         # burst_bytes x (1 - capacity / offered): left waiting when the burst has arrived
    ecn_min_bytes: int | None  # the queue's Kmin (None: no ECN-marking WRED profile)
    ecn_max_bytes: int | None
    pfc_pause_bytes: int | None  # the queue's depth when the first ingress priority group pauses its sender
    pg_xoff_bytes: int | None  # that priority group's headroom (xoff)
    ecn_marks: bool            # the backlog reaches Kmin
    pfc_pauses: bool           # the backlog reaches pfc_pause_bytes
    first: Literal["ECN", "PFC", "neither", "unknown"]   # unknown: the switch's config could not be read


class RoceWhatIf(Strict):
    """RoCE on the pattern's paths, from the switches' running QoS and buffer config (a model)."""

    model: str                 # what the figures are, in words
    dscp: int                  # RoCE's DSCP judged
    dscp_from: Literal["lab", "twin"]   # the lab file's roce.compute_dscp, or twin's RoCE class (26)
    flows: int
    lossless_flows: int        # flows whose every hop keeps RoCE lossless
    breaks: list[RoceBreak] = Field(default_factory=list)
    incast: list[IncastQueue] = Field(default_factory=list)


class TrafficReport(CollectiveFigures):
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
    failed_nodes: list[str] = Field(default_factory=list)        # what the fault takes out of the fabric
    failed_links: list[tuple[str, str]] = Field(default_factory=list)
    before: Metrics | None = None
    during: Metrics | None = None
    after: Metrics | None = None
    blast_radius: BlastRadius | None = None
    outage_ms: float | None = None           # the measured outage: the flows that crossed the fault stall for it
    failure_iteration: FailureIteration | None = None
    jct_extra_ms: float | None = None        # the failure iteration's collective time minus a normal one's
    jct_overhead: float | None = None        # jct_extra_ms as a share of a training iteration
    iteration_ms: float | None = None
    paths: dict[str, list[str]] = Field(default_factory=dict)   # flow key -> nodes, for `--json` readers
    confirmation: Confirmation | None = None
    roce: RoceWhatIf | None = None           # RoCE's class and incast queues on the fabric (before a fault)
    flow_table: list[FlowRow] = Field(default_factory=list)


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

