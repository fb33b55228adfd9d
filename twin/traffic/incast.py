"""Incast what-if: the egress queues a pattern offers more than their port's line rate, what a burst
leaves waiting in each, and whether ECN marks before PFC pauses there (pure; a model, in bytes).

- a switch's egress port is congested when the ports its flows arrive on bring more than its line rate:
  each ingress port brings the flows' offered rates (twin.traffic.metrics.demands: a NIC's line rate
  shared among its GPU's queue pairs), at most its own line rate;
- the burst is each flow's first sends (those that wait for nothing: S/n per pair of an all-to-all, S of
  a pair, S/m of a ring's first step), all starting at once; it arrives at the offered rate and drains at
  line rate, so when it has arrived `burst x (1 - capacity / offered)` bytes wait in the queue, the
  most it holds;
- ECN marks from the queue's Kmin (twin.stages.port_ecn); an ingress priority group pauses its sender
  once it holds its reserved size plus its share of the pool (twin.stages.port_buffers.limit, shared
  with the other ingress ports of the queue filling at once); it holds the share of the backlog its port
  brings, so the queue is `limit x offered / brought` deep when that port's group pauses. The first to
  act is ECN when the backlog reaches Kmin no deeper than the first pause, PFC when it reaches the
  pause first or only, else neither.

RoCE's queue and priority groups are its class's (twin.stages.roce_class) for the lab's DSCP. No
congestion control reacts, nothing is lost, upstream queues are not followed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from twin.model.plan import Plan
from twin.model.traffic import Flow, Gpu, IncastQueue
from twin.stages import port_buffers
from twin.stages.port_ecn import MarkedQueue, marked_queues
from twin.stages.roce_class import SwitchClass
from twin.traffic.collectives import Schedule
from twin.traffic.links import LinkId, capacities, link_id, port_name
from twin.traffic.metrics import demands
from twin.traffic.resolve import Path

OVER = 1e-9     # offered load this far above line rate counts as more


@dataclass
class _Egress:
    flows: list[int] = field(default_factory=list)
    ingress: dict[LinkId, list[int]] = field(default_factory=lambda: defaultdict(list))


def bursts(sched: Schedule, count: int) -> list[int]:
    """Each flow's first sends: the bytes it puts on the wire at the start, waiting for nothing."""
    out = [0] * count
    for s in sched.sends:
        if not s.after:
            out[s.flow] += s.bytes
    return out


def _egresses(plan: Plan, paths: list[Path]) -> dict[LinkId, _Egress]:
    """Every switch egress link the paths cross, with the flows on it by the link they arrived over."""
    switches = {n.name for n in plan.switches}
    out: dict[LinkId, _Egress] = defaultdict(_Egress)
    for k, p in enumerate(paths):
        for before, hop in zip(p.hops, p.hops[1:], strict=False):
            if hop.a in switches:
                e = out[link_id(hop)]
                e.flows.append(k)
                e.ingress[link_id(before)].append(k)
    return out


@dataclass
class _Buffers:
    """One switch's RoCE class, ECN-marking queues and pools."""

    cls: SwitchClass
    marked: dict[tuple[str, int], MarkedQueue]
    pools: dict[str, port_buffers.Pool]

    @classmethod
    def of(cls, switch: SwitchClass) -> _Buffers:
        return cls(switch, {(q.port, q.queue): q for q in marked_queues(switch.db)}, port_buffers.pools(switch.db))


def _pause(b: _Buffers, ports: dict[str, float], dscp: int, offered: float) -> tuple[int | None, int | None, int]:
    """(queue depth at which the first ingress group pauses, its xoff, RoCE's traffic class) over the
    ingress ports {port: rate brought}."""
    best: tuple[int, int | None] | None = None
    tc = 0
    for n, (port, brought) in enumerate(sorted(ports.items())):
        port_tc, pg, _ = b.cls.ingress(port, dscp)
        tc = port_tc if n == 0 else tc
        bound = b.cls.pgs.get(port, {}).get(pg)
        profile = b.cls.profiles.get(bound[1]) if bound is not None else None
        if profile is None or not profile.lossless or brought <= 0:
            continue
        depth = int(port_buffers.limit(profile, b.pools.get(profile.pool), len(ports)) * offered / brought)
        if best is None or depth < best[0]:
            best = (depth, profile.xoff)
    return (best[0], best[1], tc) if best is not None else (None, None, tc)


def incast_queues(plan: Plan, flows: list[Flow], gpus: dict[str, Gpu], paths: list[Path], sched: Schedule,
                  classes: Mapping[str, SwitchClass], dscp: int) -> list[IncastQueue]:
    """The congested egress queues, deepest backlog first."""
    caps = capacities(plan, gpus.values())
    rate, burst = demands(flows, gpus), bursts(sched, len(flows))
    buffers = {name: _Buffers.of(c) for name, c in classes.items()}
    out = []
    for lk, e in _egresses(plan, paths).items():
        brought = {i: min(sum(rate[k] for k in ks), caps.get(i, float("inf"))) for i, ks in e.ingress.items()}
        offered, capacity = sum(brought.values()), caps.get(lk, 0.0)
        if capacity <= 0 or offered <= capacity * (1 + OVER):
            continue
        total = sum(burst[k] for k in e.flows)
        backlog = int(total * (1 - capacity / offered))
        switch, port = lk[0], port_name(plan, lk[0], lk[1])
        ports = {port_name(plan, switch, i[3]): r for i, r in brought.items()}
        row = {"switch": switch, "port": port, "peer": lk[2], "flows": len(e.flows), "ingress_ports": sorted(ports),
               "offered_gbps": round(offered / 1000, 3), "capacity_gbps": round(capacity / 1000, 3),
               "burst_bytes": total, "backlog_bytes": backlog}
        b = buffers.get(switch)
        if b is None:
            out.append(IncastQueue(**row, queue=None, ecn_min_bytes=None, ecn_max_bytes=None, pfc_pause_bytes=None,
                                   pg_xoff_bytes=None, ecn_marks=False, pfc_pauses=False, first="unknown"))
            continue
        pause, xoff, tc = _pause(b, ports, dscp, offered)
        queue = b.cls.egress(port, tc)[0]
        marked = b.marked.get((port, queue))
        kmin = marked.thresholds.kmin if marked is not None else None
        marks, pauses = kmin is not None and backlog >= kmin, pause is not None and backlog >= pause
        first = ("ECN" if marks and kmin is not None and (pause is None or kmin <= pause) else
                 "PFC" if pauses else "neither")
        out.append(IncastQueue(**row, queue=queue, ecn_min_bytes=kmin,
                               ecn_max_bytes=marked.thresholds.kmax if marked is not None else None,
                               pfc_pause_bytes=pause, pg_xoff_bytes=xoff, ecn_marks=marks, pfc_pauses=pauses,
                               first=first))
    return sorted(out, key=lambda q: (-q.backlog_bytes, q.switch, q.port))
