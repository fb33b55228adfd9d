"""The arithmetic of the IETF BMWG draft's AI-fabric metrics over resolved paths (pure, no I/O).

- offered load of a link: the flows crossing it, each asking its NIC's line rate divided among the
  queue pairs its GPU sends (a GPU drives its NIC at line rate), as a share of the link's rate;
- MMR: max / mean offered load over the uplinks the pattern can use (every leaf -> spine link of the
  leaves whose flows cross a spine, idle ones included, failed ones not);
- JFI: Jain's fairness index (sum x)^2 / (n * sum x^2) over the same uplinks;
- pair shares: max-min fair rates (progressive filling) over every link, NICs included, all flows at once;
- the collective's completion, algbw and busbw by flow-level simulation (twin.traffic.completion), busbw
  share its busbw as a share of the slowest NIC's line rate;
- blast radius: the pairs whose share drops, the healthy flows that moved, and from the failure
  iteration the flows that stood still for the outage and the pairs whose last byte came later;
- JCT: the failure iteration's completion minus a normal one's, and that as a share of an iteration.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from twin.model.plan import Plan
from twin.model.traffic import BlastRadius, FailureIteration, Flow, FlowRow, Gpu, LinkLoad, Metrics
from twin.traffic import completion
from twin.traffic.collectives import DEFAULT_MESSAGE_BYTES, Schedule, schedule
from twin.traffic.fairshare import max_min
from twin.traffic.links import LinkId, capacities, link_id, port_name
from twin.traffic.resolve import Path

LATE_MS = 1e-3   # a pair whose last byte comes later than this is delayed


def mmr(values: list[float]) -> float | None:
    mean = sum(values) / len(values) if values else 0.0
    return round(max(values) / mean, 4) if mean > 0 else None


def jfi(values: list[float]) -> float | None:
    squares = sum(x * x for x in values)
    return round(sum(values) ** 2 / (len(values) * squares), 4) if squares > 0 else None


def uplinks(plan: Plan, leaves: Iterable[str], failed_nodes: set[str],
            failed_links: set[frozenset[str]]) -> list[LinkId]:
    """The leaf -> spine links of `leaves`, but those of failed nodes and links."""
    out: list[LinkId] = []
    for name in sorted(set(leaves)):
        for iface in plan.node(name).interfaces:
            peer = plan.node(iface.peer_node)
            if peer.role != "spine" or peer.name in failed_nodes or name in failed_nodes:
                continue
            if frozenset((name, peer.name)) in failed_links:
                continue
            out.append((name, iface.kernel, peer.name, peer.iface(iface.peer_iface).kernel))
    return out


def max_min_rates(paths: list[Path], caps: dict[LinkId, float]) -> list[float]:
    """Max-min fair rates (Mb/s) of the complete paths (0 for the others), by progressive filling."""
    return max_min([completion.route(p) for p in paths], caps)


def demands(flows: list[Flow], gpus: dict[str, Gpu]) -> list[float]:
    """Each flow's offered rate (Mb/s): its NIC's line rate divided among the queue pairs its GPU sends."""
    sent: dict[str, int] = defaultdict(int)
    for f in flows:
        sent[f.src] += 1
    return [gpus[f.src].speed_mbps / sent[f.src] for f in flows]


def _load(plan: Plan, lk: LinkId, flows: int, load: float, caps: dict[LinkId, float], uplink: bool) -> LinkLoad:
    return LinkLoad(a=lk[0], b=lk[2], a_port=port_name(plan, lk[0], lk[1]), b_port=port_name(plan, lk[2], lk[3]),
                    flows=flows, load=round(load, 4), uplink=uplink, capacity_gbps=caps.get(lk, 0.0) / 1000)


def measure(plan: Plan, flows: list[Flow], paths: list[Path], gpus: dict[str, Gpu],
            failed_nodes: set[str] | None = None, failed_links: set[frozenset[str]] | None = None,
            sched: Schedule | None = None) -> Metrics:
    """The pattern's link loads, MMR and JFI, and its collective timed over these paths (`sched`, by
    default each GPU pair sending the default message once)."""
    failed_nodes, failed_links = failed_nodes or set(), failed_links or set()
    caps = capacities(plan, gpus.values())
    demand = demands(flows, gpus)
    offered: dict[LinkId, float] = defaultdict(float)
    count: dict[LinkId, int] = defaultdict(int)
    spine_leaves: set[str] = set()
    roles = {n.name: n.role for n in plan.nodes}
    switches = {n.name for n in plan.switches}
    for k, p in enumerate(paths):
        for hop in p.hops:
            lk = link_id(hop)
            offered[lk] += demand[k]
            count[lk] += 1
            if roles.get(hop.a) == "leaf" and roles.get(hop.b) == "spine":
                spine_leaves.add(gpus[flows[k].src].leaf)
    members = uplinks(plan, spine_leaves, failed_nodes, failed_links)
    up = set(members)
    loads = [offered.get(lk, 0.0) / caps.get(lk, 1.0) for lk in members]
    fabric_first = sorted(count, key=lambda lk: (not (lk[0] in switches and lk[2] in switches), lk))
    links = [_load(plan, lk, count[lk], offered[lk] / caps.get(lk, 1.0), caps, lk in up) for lk in fabric_first]
    member_loads = [_load(plan, lk, count.get(lk, 0), x, caps, True) for lk, x in zip(members, loads, strict=True)]
    rates = max_min_rates(paths, caps)
    pair: dict[str, float] = defaultdict(float)
    for k, f in enumerate(flows):
        pair[f"{f.src}->{f.dst}"] += rates[k]
    outcome = completion.run(plan, sched or schedule("pairs", flows, gpus, DEFAULT_MESSAGE_BYTES), flows, gpus,
                             paths, caps)
    return Metrics(**dict(outcome.figures), flows=len(flows), resolved=sum(p.complete for p in paths), links=links,
                   uplinks=len(members), uplink_loads=member_loads,
                   mmr=mmr(loads), jfi=jfi(loads), idle_uplinks=sum(1 for x in loads if x <= 0),
                   busbw_share=completion.share(outcome.figures),
                   pair_share={k: round(v / gpus[k.split("->")[0]].speed_mbps, 4) for k, v in sorted(pair.items())},
                   flow_table=outcome.rows)


def _last_by_pair(rows: list[FlowRow]) -> dict[str, float | None]:
    last: dict[str, float | None] = {}
    for r in rows:
        key = f"{r.src}->{r.dst}"
        was = last.get(key, 0.0)
        last[key] = None if was is None or r.end_ms is None else max(was, r.end_ms)
    return last


def blast_radius(before: Metrics, during: Metrics, flows: list[Flow], gpus: dict[str, Gpu],
                 paths_before: list[Path], paths_during: list[Path], failed_nodes: set[str],
                 failed_links: set[frozenset[str]], threshold: float = 0.01,
                 failure: FailureIteration | None = None) -> BlastRadius:
    """The GPU pairs and rails whose bandwidth drops, the flows that crossed the fault and the healthy ones
    that moved anyway, and with the failure iteration the pairs whose last byte came later."""
    pairs: dict[str, float] = {}
    for key, was in before.pair_share.items():
        now = during.pair_share.get(key, 0.0)
        if was > 0 and (was - now) / was > threshold:
            pairs[key] = round((was - now) / was, 4)
    rails: dict[str, float] = {}
    for key, loss in pairs.items():
        g = gpus[key.split("->")[0]]
        rail = str(g.rail if g.rail is not None else g.index)
        rails[rail] = max(rails.get(rail, 0.0), loss)
    healthy = [k for k, p in enumerate(paths_before)
               if p.complete and not completion.crosses(p, failed_nodes, failed_links)]
    moved = [k for k in healthy if [link_id(h) for h in paths_before[k].hops] !=
             [link_id(h) for h in paths_during[k].hops]]
    crossed = sum(1 for p in paths_before if completion.crosses(p, failed_nodes, failed_links))
    delayed: dict[str, float | None] = {}
    if failure is not None:
        normal = _last_by_pair(before.flow_table)
        for key, end in _last_by_pair(failure.flow_table).items():
            usual = normal.get(key)
            if usual is None:
                continue      # it never arrives on the healthy fabric either
            if end is None or end - usual > LATE_MS:
                delayed[key] = None if end is None else round(end - usual, 6)
    return BlastRadius(pairs=dict(sorted(pairs.items())), rails=dict(sorted(rails.items())), moved_healthy=len(moved),
                       moved_healthy_share=round(len(moved) / len(healthy), 4) if healthy else 0.0,
                       crossed_flows=crossed, delayed_pairs=dict(sorted(delayed.items())))


def jct(normal_ms: float | None, failure_ms: float | None, iteration_ms: float) -> tuple[float | None, float | None]:
    """The failure iteration's extra time (its collective's completion minus a normal one's) and that as a
    share of a training iteration (`iteration_ms`, at least the collective itself); (None, None) when
    the collective cannot complete."""
    if normal_ms is None or failure_ms is None:
        return None, None
    late = failure_ms - normal_ms
    return round(late, 6), round(late / max(iteration_ms, normal_ms), 4)
