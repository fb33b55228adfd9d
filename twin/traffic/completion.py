"""A collective's figures by flow-level simulation of its sends over the resolved paths (pure, a model).

The sends of a Schedule (twin.traffic.collectives) become transfers along their flows' paths, the
simulation (twin.traffic.flowsim) times them over the links' line rates, and the figures follow the
IETF BMWG drafts: completion = the last send's end, algbw = message size per rank / completion, busbw
= algbw x algo_factor; the same per rail and per pod (the sends of their GPUs). Every send becomes a
row of the flow table, so anyone can time the sends again from the JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from twin.model.plan import Plan
from twin.model.traffic import CollectiveFigures, Flow, FlowRow, Gpu, GroupFigures, Hop
from twin.traffic.collectives import Schedule
from twin.traffic.flowsim import Outage, Timing, Transfer, simulate
from twin.traffic.links import LinkId, link_id, port_name
from twin.traffic.resolve import Path


@dataclass(frozen=True)
class Fault:
    """A fault at the start of an iteration: what it takes out, how long until the fabric has routed
    around it, and every flow's path then."""

    outage_ms: float
    nodes: set[str]
    links: set[frozenset[str]]
    paths: list[Path]


@dataclass
class Outcome:
    figures: CollectiveFigures
    rows: list[FlowRow] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)


def crosses(path: Path, nodes: set[str], links: set[frozenset[str]]) -> bool:
    """Whether the path goes through a failed node or over a failed link."""
    return any(n in nodes for n in path.nodes) or any(frozenset((h.a, h.b)) in links for h in path.hops)


def route(path: Path) -> tuple[LinkId, ...] | None:
    return tuple(link_id(h) for h in path.hops) if path.complete else None


def gbps(message_bytes: int, ms: float | None) -> float:
    return round(message_bytes * 8 / (ms * 1e6), 3) if ms else 0.0


def _last(timings: list[Timing], members: list[int]) -> float | None:
    ends = [timings[k].end_ms for k in members]
    return None if not ends or any(e is None for e in ends) else max(e for e in ends if e is not None)


def _group(sched: Schedule, timings: list[Timing], members: list[int], gpus: int) -> GroupFigures:
    last = _last(timings, members)
    algbw = gbps(sched.message_bytes, last)
    return GroupFigures(gpus=gpus, completion_ms=None if last is None else round(last, 6), algbw_gbps=algbw,
                        busbw_gbps=round(algbw * sched.algo_factor, 3))


def _groups(sched: Schedule, flows: list[Flow], gpus: Mapping[str, Gpu], timings: list[Timing],
            of: str) -> dict[str, GroupFigures]:
    members: dict[str, list[int]] = {}
    for k, s in enumerate(sched.sends):
        key = getattr(gpus[flows[s.flow].src], of)
        if key is not None:
            members.setdefault(str(key), []).append(k)
    counts: dict[str, int] = {}
    for g in gpus.values():
        if getattr(g, of) is not None:
            counts[str(getattr(g, of))] = counts.get(str(getattr(g, of)), 0) + 1
    return {key: _group(sched, timings, ks, counts.get(key, 0))
            for key, ks in sorted(members.items(), key=lambda kv: (len(kv[0]), kv[0]))}


def _hops(plan: Plan, path: Path) -> tuple[list[Hop], list[Hop]]:
    names = [(h.a, h.b) for h in path.hops]
    ports = [(port_name(plan, h.a, h.a_if), port_name(plan, h.b, h.b_if)) for h in path.hops]
    return names, ports


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def run(plan: Plan, sched: Schedule, flows: list[Flow], gpus: Mapping[str, Gpu], paths: list[Path],
        caps: Mapping[LinkId, float], fault: Fault | None = None) -> Outcome:
    """The schedule timed over `paths` (and with `fault`, the iteration it lands in)."""
    transfers = [Transfer(s.bytes * 8.0, route(paths[s.flow]), s.after) for s in sched.sends]
    outage = None
    if fault is not None:
        hit = frozenset(k for k, s in enumerate(sched.sends) if crosses(paths[s.flow], fault.nodes, fault.links))
        outage = Outage(fault.outage_ms, hit, [route(fault.paths[s.flow]) for s in sched.sends])
    timings = simulate(transfers, caps, outage)
    rows = []
    for s, t in zip(sched.sends, timings, strict=True):
        f = flows[s.flow]
        path, ports = _hops(plan, paths[s.flow])
        new_path: list[Hop] | None = None
        new_ports: list[Hop] | None = None
        if fault is not None:
            later, later_ports = _hops(plan, fault.paths[s.flow])
            if t.start_ms is not None and t.start_ms >= fault.outage_ms:
                path, ports = later, later_ports        # it started on the converged fabric
            elif (later, later_ports) != (path, ports) and (t.end_ms is None or t.end_ms > fault.outage_ms):
                new_path, new_ports = later, later_ports
        rows.append(FlowRow(src=f.src, dst=f.dst, qp=f.qp, step=s.step, bytes=s.bytes, after=list(s.after),
                            path=path, ports=ports,
                            start_ms=_ms(t.start_ms), end_ms=_ms(t.end_ms), waited_ms=round(t.waited_ms, 6),
                            new_path=new_path, new_ports=new_ports))
    everyone = list(range(len(sched.sends)))
    whole = _group(sched, timings, everyone, len(gpus))
    ends = {f.src for f in flows} | {f.dst for f in flows}
    line = min((gpus[g].speed_mbps for g in ends), default=0) / 1000
    figures = CollectiveFigures(collective=sched.collective, n=sched.n, message_bytes=sched.message_bytes,
                                algo_factor=round(sched.algo_factor, 6), completion_ms=whole.completion_ms,
                                algbw_gbps=whole.algbw_gbps, busbw_gbps=whole.busbw_gbps, line_rate_gbps=line,
                                by_rail=_groups(sched, flows, gpus, timings, "rail"),
                                by_pod=_groups(sched, flows, gpus, timings, "pod"))
    return Outcome(figures, rows, timings)


def share(figures: CollectiveFigures) -> float:
    """busbw as a share of the slowest NIC's line rate."""
    return round(figures.busbw_gbps / figures.line_rate_gbps, 4) if figures.line_rate_gbps else 0.0
