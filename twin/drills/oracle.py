"""What every switch's FIB should hold with some nodes and links out: the yardstick of convergence.

eBGP in a Clos is a path-vector protocol with AS-path loop prevention and multipath over equal
AS-path lengths (`bestpath as-path multipath-relax`). Iterating that rule over the plan's graph
until nothing changes gives each switch's next hops for every prefix the fabric advertises.
Spines sharing one ASN is what stops a spine from reaching a leaf through another leaf.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

from twin.checks.fibwatch import Fib  # switch -> prefix -> next-hop addresses
from twin.drills.faults.base import Fault, LinkKey, link_key
from twin.drills.schedule import fault_scope
from twin.model.plan import Plan


def fabric_graph(plan: Plan, down_nodes: Iterable[str] = (), down_links: Iterable[LinkKey] = ()) -> nx.MultiGraph:
    """Switches that run BGP, joined by the links that carry a session, minus what is down."""
    out_nodes, out_links = set(down_nodes), set(down_links)
    g = nx.MultiGraph()
    bgp = {n.name: n for n in plan.switches if n.asn is not None}
    for name in bgp:
        if name not in out_nodes:
            g.add_node(name)
    for node in bgp.values():
        for nb in node.neighbors:
            port = node.iface(nb.iface)
            peer = port.peer_node
            if peer not in g or node.name not in g or node.name > peer:
                continue
            key = link_key((node.name, port.name), (peer, port.peer_iface))
            if key in out_links:
                continue
            peer_nb = [p for p in bgp[peer].neighbors if p.iface == port.peer_iface]
            if peer_nb:
                g.add_edge(node.name, peer, key=key, via={node.name: str(nb.ip), peer: str(peer_nb[0].ip)})
    return g


def expected_fibs(plan: Plan, down_nodes: Iterable[str] = (), down_links: Iterable[LinkKey] = ()) -> Fib:
    """Each live switch's BGP routes: prefix -> the next hops it should use (absent: unreachable)."""
    g = fabric_graph(plan, down_nodes, down_links)
    asn = {n.name: n.asn or 0 for n in plan.switches}
    origin = {str(p): n.name for n in plan.switches if n.name in g for p in n.networks}
    # best[node][prefix] = (as_path, next hops); the originator holds the empty path
    best: dict[str, dict[str, tuple[tuple[int, ...], frozenset[str]]]] = {n: {} for n in g}
    for prefix, node in origin.items():
        best[node][prefix] = ((), frozenset())
    for _ in range(len(g) + 1):
        changed = False
        new: dict[str, dict[str, tuple[tuple[int, ...], frozenset[str]]]] = {}
        for node in sorted(g):
            mine = asn[node]
            routes: dict[str, tuple[tuple[int, ...], frozenset[str]]] = {}
            for prefix, holder in origin.items():
                if holder == node:
                    routes[prefix] = ((), frozenset())
                    continue
                offers: list[tuple[tuple[int, ...], str]] = []
                for peer in sorted(g.neighbors(node)):
                    if prefix not in best[peer]:
                        continue
                    path = (asn[peer], *best[peer][prefix][0])
                    if mine in path:
                        continue
                    for data in g.get_edge_data(node, peer).values():
                        offers.append((path, data["via"][node]))
                if not offers:
                    continue
                shortest = min(len(p) for p, _ in offers)
                paths = sorted(p for p, _ in offers if len(p) == shortest)
                hops = frozenset(h for p, h in offers if len(p) == shortest)
                if len(hops) > plan.max_paths:
                    hops = frozenset(sorted(hops)[:plan.max_paths])
                routes[prefix] = (paths[0], hops)
            new[node] = routes
            if routes != best[node]:
                changed = True
        best = new
        if not changed:
            break
    return {node: {p: hops for p, (path, hops) in routes.items() if path} for node, routes in best.items()}


def mismatches(expected: Fib, actual: Fib, ignore: Iterable[str] = ()) -> list[str]:
    """Where the FIBs differ from what is expected, one line per switch and prefix."""
    skip = set(ignore)
    out = []
    for node in sorted(expected):
        if node in skip:
            continue
        want, have = expected[node], actual.get(node, {})
        for prefix in sorted(set(want) | set(have)):
            if want.get(prefix, frozenset()) != have.get(prefix, frozenset()):
                out.append(f"{node} {prefix}: has {sorted(have.get(prefix, ()))}, "
                           f"expected {sorted(want.get(prefix, ()))}")
    return out


def ecmp_widths(plan: Plan, fib: Fib, exclude: Iterable[str] = ()) -> dict[str, int]:
    """Per live leaf: the fewest next hops it has towards another live leaf's loopback (0: one is missing)."""
    out_nodes = set(exclude)
    leaves = [n for n in plan.by_role("leaf") if n.loopback is not None and n.name not in out_nodes]
    out = {}
    for leaf in leaves:
        if leaf.name not in fib:
            continue
        widths = [len(fib[leaf.name].get(f"{other.loopback}/32", ())) for other in leaves
                  if other.name != leaf.name and other.name in fib]
        out[leaf.name] = min(widths) if widths else 0
    return out


class Expectation:
    """What every FIB should hold while some of a drill's faults are active, and which switches not to
    look at (the ones out of the fabric); computed once per set of active faults."""

    def __init__(self, plan: Plan, faults: Sequence[Fault]) -> None:
        self.plan, self.faults = plan, list(faults)
        self._cache: dict[frozenset[int], tuple[Fib, set[str]]] = {}

    def __call__(self, active: frozenset[int]) -> tuple[Fib, set[str]]:
        """`active`: indexes into the drill's faults."""
        if active not in self._cache:
            nodes, links = fault_scope([self.faults[i] for i in active])
            self._cache[active] = (expected_fibs(self.plan, nodes, links), nodes)
        return self._cache[active]
