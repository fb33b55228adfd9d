"""What a drill observed, typed: the probe's spec and result, and everything the run loop recorded
(`Observations`). The run loop (runner.py) fills it; assemble.py and judge.py read it and do no I/O,
so both can be tested on hand-made observations."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from twin.checks.fibwatch import Fib
from twin.drills.faults.base import Fault
from twin.drills.schedule import Action
from twin.model.drill import LossRun, SessionEvent, Step

# [(when, switch, its BGP routes then)], in time order: every FIB change the netlink watch saw
FibHistory = list[tuple[float, str, dict[str, frozenset[str]]]]
# [(when, {spine: packets the leaves have sent up to it so far})]
CounterSamples = list[tuple[float, dict[str, int]]]
# flow id -> the spine its source leaf hashes it to (None: no route)
FlowPaths = dict[int, str | None]


class _Json(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ProbePair(_Json):
    """One server sending to another, over `len(sports)` flows (one UDP source port each)."""

    src: str
    src_ns: str
    src_ip: str
    src_leaf: str
    src_port: str        # the source leaf's kernel interface facing the sending NIC
    dst: str
    dst_ns: str
    dst_ip: str
    dst_leaf: str
    dport: int
    sports: list[int]


class ProbeSpec(_Json):
    """What the probe process sends (written as JSON for it): flows are numbered pair by pair."""

    rate_hz: float
    pairs: list[ProbePair]

    def flows(self) -> Iterator[tuple[int, ProbePair, int]]:
        """(flow id, its pair, its source port) for every flow, in flow-id order."""
        fid = 0
        for pair in self.pairs:
            for sport in pair.sports:
                yield fid, pair, sport
                fid += 1


class FlowResult(_Json):
    flow: int
    sent: int
    received: int
    reordered: int = 0
    runs: list[list[float]] = []     # [first_seq, count, t_start, t_end] per loss run


class ProbeResult(_Json):
    """What the probe process wrote when it stopped (observe/probe.py's `result`)."""

    t0: float                        # when sending began (wall clock)
    stopped: float                   # when sending stopped
    rate_hz: float                   # packets per second per flow
    bin_s: float = 0.05
    send_errors: int = 0
    flows: list[FlowResult] = []
    sent_bins: list[tuple[int, int]] = []   # (bin, packets sent in it), by send time
    recv_bins: list[tuple[int, int]] = []   # (bin, packets received of those sent in it)

    def loss_runs(self) -> list[LossRun]:
        return [LossRun(flow=f.flow, first_seq=int(r[0]), count=int(r[1]), t_start=r[2], t_end=r[3])
                for f in self.flows for r in f.runs]


@dataclass(frozen=True)
class During:
    """The fabric with every untimed fault in place, once it had converged and settled."""

    window: tuple[float, float]      # the settle time before the restores: the traffic shares' window
    fib: Fib
    paths: FlowPaths


@dataclass
class Observations:
    """Everything one drill recorded, on one wall clock (seconds)."""

    faults: list[Fault]                  # one per injection (a flap's flaps are one fault each)
    steps: list[Step]                    # the scenario step of each fault
    actions: list[Action]                # injections and restores, `t` set once done
    spec: ProbeSpec
    probe: ProbeResult
    started: float                       # probe traffic started
    zero: float                          # the drill's zero: action times count from here
    before: tuple[float, float]          # the healthy baseline's window (warm-up)
    during: During | None                # None: a timed scenario (every fault's length fixed)
    recovered_at: float | None           # the fabric back at its baseline (None: it did not come back)
    restored: bool                       # back at its baseline and healthy
    why: str                             # why not restored ("" when restored)
    ended: float                         # after the health check
    paths_before: FlowPaths
    paths_after: FlowPaths               # {} when not restored
    fib_before: Fib
    fib_after: Fib
    fib_history: FibHistory
    samples: CounterSamples
    events: list[SessionEvent]           # BGP session changes bgpd logged
    checks: dict[str, bool] = field(default_factory=dict)   # named pass/fail checks (health_after, MTU, ...)
    notes: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)  # a kind's own measurements (KindCheck.figures)
    detect_by_check: dict[int, float | None] = field(default_factory=dict)  # fault -> a kind's own detection
