"""The arithmetic of the IETF BMWG draft's AI-fabric metrics over resolved paths (pure, no I/O).

- offered load of a link: the flows crossing it, each asking its NIC's line rate divided among the
  queue pairs its GPU sends (a GPU drives its NIC at line rate), as a share of the link's rate;
- MMR: max / mean offered load over the uplinks the pattern can use (every leaf -> spine link of the
  leaves whose flows cross a spine, idle ones included, failed ones not);
- JFI: Jain's fairness index (sum x)^2 / (n * sum x^2) over the same uplinks;
- rates: max-min fair shares (progressive filling) over every link, NICs included;
- busbw share: a collective advances at the pace of its slowest GPU, so its bus bandwidth (nccl-tests'
  busbw; algbw * 2(n-1)/n for AllReduce, which for a ring is each GPU's send rate) is the least
  send rate of any GPU, as a share of its NIC's line rate;
- JCT overhead of the failure iteration: its flows stall for the outage, then the rest of the
  iteration runs at the degraded bus bandwidth: (outage + T * (busbw_before / busbw_during - 1)) / T.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from twin.model.plan import Plan
from twin.model.traffic import BlastRadius, Flow, Gpu, LinkLoad, Metrics
from twin.traffic.resolve import Hop, Path

LinkId = tuple[str, str, str, str]   # (a, a kernel interface, b, b kernel interface), one direction
EPS = 1e-9


def link_id(hop: Hop) -> LinkId:
    return (hop.a, hop.a_if, hop.b, hop.b_if)


def mmr(values: list[float]) -> float | None:
    mean = sum(values) / len(values) if values else 0.0
    return round(max(values) / mean, 4) if mean > 0 else None


def jfi(values: list[float]) -> float | None:
    squares = sum(x * x for x in values)
    return round(sum(values) ** 2 / (len(values) * squares), 4) if squares > 0 else None


def capacities(plan: Plan, gpus: Iterable[Gpu]) -> dict[LinkId, float]:
    """Every cabled direction's line rate (Mb/s): the port's speed, else the fabric's."""
    caps: dict[LinkId, float] = {}
    for node in plan.nodes:
        for iface in node.interfaces:
            try:
                far = plan.node(iface.peer_node).iface(iface.peer_iface)
            except KeyError:
                continue
            caps[(node.name, iface.kernel, iface.peer_node, far.kernel)] = float(
                iface.speed or far.speed or plan.fabric.speed)
    nics = {(g.server, g.nic): float(g.speed_mbps) for g in gpus}   # a NIC runs at its own rate, both ways
    for key in caps:
        rate = nics.get((key[0], key[1])) or nics.get((key[2], key[3]))
        if rate:
            caps[key] = rate
    return caps


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
    rates = [0.0] * len(paths)
    active = {k for k, p in enumerate(paths) if p.complete}
    remaining = dict(caps)
    crossing: dict[LinkId, set[int]] = defaultdict(set)
    for k in active:
        for hop in paths[k].hops:
            crossing[link_id(hop)].add(k)
    while active:
        shares = {lk: remaining.get(lk, 0.0) / len(fl & active) for lk, fl in crossing.items() if fl & active}
        if not shares:
            break
        inc = max(min(shares.values()), 0.0)
        for k in active:
            rates[k] += inc
        for lk, fl in crossing.items():
            n = len(fl & active)
            if n:
                remaining[lk] = remaining.get(lk, 0.0) - inc * n
        saturated = {lk for lk, fl in crossing.items() if fl & active and remaining.get(lk, 0.0) <= EPS * max(
            caps.get(lk, 1.0), 1.0)}
        frozen = {k for lk in saturated for k in crossing[lk] & active}
        if not frozen:   # numerical safety: nothing saturated means nothing left to share
            break
        active -= frozen
    return rates


def measure(plan: Plan, flows: list[Flow], paths: list[Path], gpus: dict[str, Gpu],
            failed_nodes: set[str] | None = None, failed_links: set[frozenset[str]] | None = None) -> Metrics:
    failed_nodes, failed_links = failed_nodes or set(), failed_links or set()
    caps = capacities(plan, gpus.values())
    sent: dict[str, int] = defaultdict(int)
    for f in flows:
        sent[f.src] += 1
    demand = [gpus[f.src].speed_mbps / sent[f.src] for f in flows]
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
    links = [LinkLoad(a=lk[0], b=lk[2], a_port=_port(plan, lk[0], lk[1]), b_port=_port(plan, lk[2], lk[3]),
                      flows=count[lk], load=round(offered[lk] / caps.get(lk, 1.0), 4), uplink=lk in up)
             for lk in sorted(count) if lk[0] in switches and lk[2] in switches]
    member_loads = [LinkLoad(a=lk[0], b=lk[2], a_port=_port(plan, lk[0], lk[1]), b_port=_port(plan, lk[2], lk[3]),
                             flows=count.get(lk, 0), load=round(x, 4), uplink=True) for lk, x in zip(members, loads,
                                                                                                     strict=True)]
    rates = max_min_rates(paths, caps)
    send: dict[str, float] = defaultdict(float)
    pair: dict[str, float] = defaultdict(float)
    for k, f in enumerate(flows):
        send[f.src] += rates[k]
        pair[f"{f.src}->{f.dst}"] += rates[k]
    busbw = min(send[g] / gpus[g].speed_mbps for g in sent) if sent else 0.0
    return Metrics(flows=len(flows), resolved=sum(p.complete for p in paths), links=links, uplinks=len(members),
                   uplink_loads=member_loads,
                   mmr=mmr(loads), jfi=jfi(loads), idle_uplinks=sum(1 for x in loads if x <= 0),
                   busbw_share=round(busbw, 4),
                   pair_share={k: round(v / gpus[k.split("->")[0]].speed_mbps, 4) for k, v in sorted(pair.items())})


def _port(plan: Plan, node: str, kernel: str) -> str:
    return next((i.name for i in plan.node(node).interfaces if i.kernel == kernel), kernel)


def touches(path: Path, failed_nodes: set[str], failed_links: set[frozenset[str]]) -> bool:
    return any(n in failed_nodes for n in path.nodes) or any(
        frozenset((h.a, h.b)) in failed_links for h in path.hops)


def blast_radius(before: Metrics, during: Metrics, flows: list[Flow], gpus: dict[str, Gpu],
                 paths_before: list[Path], paths_during: list[Path], failed_nodes: set[str],
                 failed_links: set[frozenset[str]], threshold: float = 0.01) -> BlastRadius:
    """The GPU pairs and rails whose bandwidth drops, and the healthy flows that moved anyway."""
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
    healthy = [k for k, p in enumerate(paths_before) if p.complete and not touches(p, failed_nodes, failed_links)]
    moved = [k for k in healthy if [link_id(h) for h in paths_before[k].hops] !=
             [link_id(h) for h in paths_during[k].hops]]
    return BlastRadius(pairs=dict(sorted(pairs.items())), rails=dict(sorted(rails.items())), moved_healthy=len(moved),
                       moved_healthy_share=round(len(moved) / len(healthy), 4) if healthy else 0.0)


def jct_overhead(outage_ms: float, iteration_ms: float, busbw_before: float, busbw_during: float) -> float | None:
    """The failure iteration's extra time over a normal one's; None when the collective cannot run at all."""
    if busbw_during <= 0 or busbw_before <= 0:
        return None
    return round((outage_ms + iteration_ms * (busbw_before / busbw_during - 1)) / iteration_ms, 4)
