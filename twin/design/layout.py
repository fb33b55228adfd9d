"""Where everything goes in a drawing of the fabric: tiers top to bottom, rails side by side. Pure.

Rows: spines (and routers that face no host) on top, leaves (and routers that face hosts) in the
middle, servers at the bottom with one port mark per NIC, coloured by the rail of the leaf it lands on.
Leaves are ordered by pod, then rail; servers sit under the leaves they reach (barycentre order).

Large fabrics are summarised (`detail="summary"`, or "auto" beyond SUMMARY_SWITCHES switches,
SUMMARY_HOSTS servers or SUMMARY_LINKS links): every spine is a dot, one group of leaves (rail 1 on a
rail fabric, else pod 1, else the first LEAF_CHUNK leaves) is drawn leaf by leaf with all its uplinks,
each other group is one box with its counts, its uplinks one bundle to each spine dot they reach, and
servers are counted per expanded leaf.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict

from twin.design.fabric_graph import HOSTS, FabricGraph, GraphLink, GraphNode

Detail = Literal["auto", "full", "summary"]

SUMMARY_SWITCHES = 48
SUMMARY_HOSTS = 64
SUMMARY_LINKS = 512
LEAF_CHUNK = 16
MAX_DRAWN_UPLINKS = 4096

MARGIN_X = 170      # room for the row labels on the left
MARGIN_TOP = 80
ROW_GAP = 150
SWITCH_W, SWITCH_H = 76, 28
HOST_H = 30
PORT = 8
GAP = 14
GROUP_GAP = 34
DOT = 10

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd")
ROLE_FILL = {"spine": "#264653", "leaf": "#2a9d8f", "router": "#6d597a", "server": "#f1f3f5", "host": "#f1f3f5"}
ROLE_TEXT = {"spine": "#ffffff", "leaf": "#ffffff", "router": "#ffffff", "server": "#212529", "host": "#212529"}
FABRIC_EDGE = "#8d99ae"


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PortMark(Frozen):
    iface: str
    x: float
    y: float
    color: str


class NodeBox(Frozen):
    """A node (kind "node" or "dot") or a group of nodes drawn as one box (kind "group")."""

    name: str
    role: str
    tier: int
    kind: Literal["node", "dot", "group"] = "node"
    x: float
    y: float
    w: float
    h: float
    label: str
    fill: str
    text: str
    rail: int | None = None
    pod: int | None = None
    ports: list[PortMark] = []
    members: list[str] = []

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


class EdgeLine(Frozen):
    """One link (kind fabric or server) or a bundle of links drawn as one (kind bundle; `members` are keys).
    The `a` end is the one drawn at (x1, y1)."""

    key: str
    kind: Literal["fabric", "server", "bundle"]
    a: str
    b: str
    a_iface: str = ""
    b_iface: str = ""
    x1: float
    y1: float
    x2: float
    y2: float
    bend: float = 0.0      # a same-row link bows up by this much (quadratic curve)
    color: str
    width: float = 1.2
    label: str = ""
    members: list[str] = []


class RowLabel(Frozen):
    text: str
    y: float


class Layout(Frozen):
    title: str
    kind: str
    summary: bool
    width: float
    height: float
    nodes: list[NodeBox]
    edges: list[EdgeLine]
    rows: list[RowLabel]
    legend: list[tuple[str, str]]
    counts: dict[str, int]
    notes: list[str] = []

    def box(self, name: str) -> NodeBox:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)


def _natural(text: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def text_width(text: str, bold: bool = False) -> float:
    """About how wide `text` is at the drawing's 11-12 px font, with room for the box's padding."""
    return len(text) * (7.4 if bold else 6.6) + 14


def rail_color(rail: int) -> str:
    return PALETTE[(rail - 1) % len(PALETTE)]


def tiers(graph: FabricGraph) -> dict[str, int]:
    """0 = top (spines), 1 = middle (leaves), 2 = bottom (servers). A router is a leaf when it faces a host."""
    g = nx.Graph()
    g.add_nodes_from(n.name for n in graph.nodes)
    g.add_edges_from((lk.a, lk.b) for lk in graph.links)
    roles = {n.name: n.role for n in graph.nodes}
    out = {}
    for n in graph.nodes:
        if n.role == "spine":
            out[n.name] = 0
        elif n.role == "leaf":
            out[n.name] = 1
        elif n.role in HOSTS:
            out[n.name] = 2
        else:
            out[n.name] = 1 if any(roles.get(m) in HOSTS for m in g.neighbors(n.name)) else 0
    return out


def wants_summary(graph: FabricGraph, detail: Detail) -> bool:
    if detail != "auto":
        return detail == "summary"
    return (len(graph.switches) > SUMMARY_SWITCHES or len(graph.hosts) > SUMMARY_HOSTS
            or len(graph.links) > SUMMARY_LINKS)


def layout(graph: FabricGraph, detail: Detail = "auto") -> Layout:
    return summary_layout(graph) if wants_summary(graph, detail) else full_layout(graph)


def _counts(graph: FabricGraph) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for n in graph.nodes:
        counts[n.role] += 1
    counts["links"] = len(graph.links)
    return dict(counts)


def _row_y(tier: int, present: list[int]) -> float:
    return MARGIN_TOP + present.index(tier) * ROW_GAP


def _legend(graph: FabricGraph, nodes: list[GraphNode]) -> list[tuple[str, str]]:
    roles = sorted({n.role for n in nodes}, key=["spine", "router", "leaf", "server", "host"].index)
    legend = [(role, ROLE_FILL[role]) for role in roles]
    rails = sorted({n.rail for n in graph.nodes if n.rail is not None})
    legend += [(f"rail {r}", rail_color(r)) for r in rails]
    return legend


def _row_label(role_counts: dict[str, int]) -> str:
    words = {"spine": "spines", "leaf": "leaves", "router": "routers", "server": "servers", "host": "hosts"}
    return " + ".join(f"{count:,} {words[role] if count != 1 else role}" for role, count in role_counts.items())


# -- every node drawn -----------------------------------------------------------------------------------------------


def full_layout(graph: FabricGraph) -> Layout:
    tier = tiers(graph)
    by_tier: dict[int, list[GraphNode]] = defaultdict(list)
    for n in graph.nodes:
        by_tier[tier[n.name]].append(n)
    by_tier[0].sort(key=lambda n: (n.role != "spine", n.index, _natural(n.name)))
    by_tier[1].sort(key=lambda n: (n.pod or 0, n.rail or 0, n.role != "leaf", n.index, _natural(n.name)))
    adjacency: dict[str, list[tuple[str, str, str]]] = defaultdict(list)   # node -> (its iface, peer, peer iface)
    for lk in graph.links:
        adjacency[lk.a].append((lk.a_iface, lk.b, lk.b_iface))
        adjacency[lk.b].append((lk.b_iface, lk.a, lk.a_iface))
    order1 = {n.name: i for i, n in enumerate(by_tier[1])}
    order0 = {n.name: i for i, n in enumerate(by_tier[0])}

    def barycentre(n: GraphNode) -> float:
        peers: list[float] = [order1[p] for _, p, _ in adjacency[n.name] if p in order1]
        if not peers:
            peers = [order0[p] + 0.5 for _, p, _ in adjacency[n.name] if p in order0]
        return sum(peers) / len(peers) if peers else float(len(order1))

    by_tier[2].sort(key=lambda n: (barycentre(n), n.index, _natural(n.name)))
    present = sorted(t for t in by_tier if by_tier[t])
    node_rail = {n.name: n.rail for n in graph.nodes}

    widths: dict[str, float] = {}
    ports_of: dict[str, list[str]] = {}
    for n in graph.nodes:
        if tier[n.name] == 2:
            ports_of[n.name] = sorted((iface for iface, _, _ in adjacency[n.name]), key=_natural)
            widths[n.name] = max(56.0, len(ports_of[n.name]) * (PORT + 4) + 12, text_width(n.name))
        else:
            widths[n.name] = max(SWITCH_W, text_width(n.name))

    def gap_before(row: list[GraphNode], i: int) -> float:
        if i == 0:
            return 0.0
        if row[i].pod is not None and row[i - 1].pod is not None and row[i].pod != row[i - 1].pod:
            return GROUP_GAP
        return GAP

    row_width = {t: sum(widths[n.name] + gap_before(by_tier[t], i) for i, n in enumerate(by_tier[t]))
                 for t in present}
    width = max(row_width.values(), default=0) + MARGIN_X + 40
    boxes: dict[str, NodeBox] = {}
    for t in present:
        x = MARGIN_X + (width - MARGIN_X - 40 - row_width[t]) / 2
        y = _row_y(t, present)
        for i, n in enumerate(by_tier[t]):
            x += gap_before(by_tier[t], i)
            w = widths[n.name]
            h = HOST_H if t == 2 else SWITCH_H
            ports = []
            if t == 2:
                step = w / (len(ports_of[n.name]) + 1)
                for j, iface in enumerate(ports_of[n.name], start=1):
                    peer = next(p for f, p, _ in adjacency[n.name] if f == iface)
                    rail = node_rail.get(peer)
                    color = rail_color(rail) if rail is not None else rail_color(j)
                    ports.append(PortMark(iface=iface, x=x + j * step, y=y, color=color))
            fill = rail_color(n.rail) if n.role == "leaf" and n.rail is not None else ROLE_FILL[n.role]
            boxes[n.name] = NodeBox(name=n.name, role=n.role, tier=t, x=x, y=y, w=w, h=h, label=n.name, fill=fill,
                                    text=ROLE_TEXT[n.role], rail=n.rail, pod=n.pod, ports=ports)
            x += w
    edges = _full_edges(graph, boxes)
    rows = []
    for t in present:
        counts: dict[str, int] = defaultdict(int)
        for n in by_tier[t]:
            counts[n.role] += 1
        middle = _row_y(t, present) + (HOST_H if t == 2 else SWITCH_H) / 2
        rows.append(RowLabel(text=_row_label(dict(counts)), y=middle))
    height = MARGIN_TOP + (len(present) - 1) * ROW_GAP + HOST_H + 30
    return Layout(title=graph.name, kind=graph.kind, summary=False, width=width, height=height,
                  nodes=list(boxes.values()), edges=edges, rows=rows, legend=_legend(graph, graph.nodes),
                  counts=_counts(graph))


def _full_edges(graph: FabricGraph, boxes: dict[str, NodeBox]) -> list[EdgeLine]:
    pairs: dict[tuple[str, str], list[GraphLink]] = defaultdict(list)
    for lk in graph.links:
        pairs[(lk.a, lk.b) if lk.a <= lk.b else (lk.b, lk.a)].append(lk)
    edges = []
    for links in pairs.values():
        links.sort(key=lambda lk: (_natural(lk.a_iface), _natural(lk.b_iface)))
        for k, lk in enumerate(links):
            offset = (k - (len(links) - 1) / 2) * min(4.0, 40 / max(len(links), 1))
            edges.append(_edge(lk, boxes, offset))
    return edges


def _anchor(box: NodeBox, iface: str, upper: bool, offset: float) -> tuple[float, float]:
    """Where a link meets a box: a host's port mark, else the bottom (upper box) or top edge."""
    for port in box.ports:
        if port.iface == iface:
            return port.x, port.y
    return box.cx + offset, (box.y + box.h if upper else box.y)


def _edge(lk: GraphLink, boxes: dict[str, NodeBox], offset: float) -> EdgeLine:
    a, b = boxes[lk.a], boxes[lk.b]
    host = a.role in HOSTS or b.role in HOSTS
    color = FABRIC_EDGE
    if host:
        other = b if b.role in HOSTS else a
        port = next((p for p in other.ports if p.iface in (lk.a_iface, lk.b_iface)), None)
        color = port.color if port else FABRIC_EDGE
    # the edge's `a` end is the one drawn at (x1, y1): the upper node, or the left one in a row
    if a.tier == b.tier:
        upper, lower = (a, b) if a.x <= b.x else (b, a)
        up_if, low_if = (lk.a_iface, lk.b_iface) if upper is a else (lk.b_iface, lk.a_iface)
        x1, y1 = upper.cx + offset, upper.y
        x2, y2 = lower.cx + offset, lower.y
        bend = 30 + abs(x2 - x1) * 0.15
    else:
        upper, lower = (a, b) if a.tier < b.tier else (b, a)
        up_if, low_if = (lk.a_iface, lk.b_iface) if upper is a else (lk.b_iface, lk.a_iface)
        x1, y1 = _anchor(upper, up_if, True, offset)
        x2, y2 = _anchor(lower, low_if, False, offset)
        bend = 0.0
    return EdgeLine(key=lk.key, kind="server" if host else "fabric", a=upper.name, b=lower.name, a_iface=up_if,
                    b_iface=low_if, x1=x1, y1=y1, x2=x2, y2=y2, bend=bend, color=color,
                    width=1.6 if host else 1.2)


# -- summarised: counts, one group expanded ---------------------------------------------------------------------------


def leaf_groups(leaves: list[GraphNode]) -> list[tuple[str, list[GraphNode]]]:
    """Rails on a rail fabric, else pods, else runs of LEAF_CHUNK leaves: (label, leaves)."""
    if any(n.rail is not None for n in leaves):
        rails: dict[int, list[GraphNode]] = defaultdict(list)
        for n in leaves:
            rails[n.rail or 0].append(n)
        return [(f"rail {r}", rails[r]) for r in sorted(rails)]
    if any(n.pod is not None for n in leaves):
        pods: dict[int, list[GraphNode]] = defaultdict(list)
        for n in leaves:
            pods[n.pod or 0].append(n)
        return [(f"pod {p}", pods[p]) for p in sorted(pods)]
    return [(f"{chunk[0].name} … {chunk[-1].name}" if len(chunk) > 1 else chunk[0].name, chunk)
            for chunk in (leaves[i:i + LEAF_CHUNK] for i in range(0, len(leaves), LEAF_CHUNK))]


def summary_layout(graph: FabricGraph) -> Layout:
    tier = tiers(graph)
    top = sorted((n for n in graph.nodes if tier[n.name] == 0), key=lambda n: (n.role != "spine", n.index))
    middle = sorted((n for n in graph.nodes if tier[n.name] == 1), key=lambda n: (n.pod or 0, n.rail or 0, n.index))
    hosts = [n for n in graph.nodes if tier[n.name] == 2]
    groups = leaf_groups(middle)
    expanded_label, expanded = groups[0] if groups else ("", [])
    expanded_names = {n.name for n in expanded}
    adjacency: dict[str, list[GraphLink]] = defaultdict(list)
    for lk in graph.links:
        adjacency[lk.a].append(lk)
        adjacency[lk.b].append(lk)

    def peer(lk: GraphLink, name: str) -> str:
        return lk.b if lk.a == name else lk.a

    boxes: dict[str, NodeBox] = {}
    y0, y1, y2 = MARGIN_TOP, MARGIN_TOP + ROW_GAP, MARGIN_TOP + 2 * ROW_GAP
    # the middle row decides the width: expanded leaves one by one, then one box per other group
    hosted = {n.name: sorted({peer(lk, n.name) for lk in adjacency[n.name] if tier.get(peer(lk, n.name)) == 2},
                             key=_natural) for n in expanded}
    leaf_w = max([56.0] + [text_width(n.name) for n in expanded]
                 + [text_width(f"{len(h):,} servers", bold=True) for h in hosted.values() if h])
    group_labels = [f"{label}: {len(members):,} leaves" for label, members in groups[1:]]
    group_w = {label: max(132.0, text_width(label, bold=True)) for label in group_labels}
    middle_width = (len(expanded) * (leaf_w + 6) + sum(w + GAP for w in group_w.values()) + GROUP_GAP)
    rest_w = max(132.0, text_width(f"{len(hosts):,} more servers", bold=True))
    top_width = len(top) * (DOT + 4) if len(top) <= 256 else 132.0
    width = max(middle_width, top_width, 400) + MARGIN_X + 40
    x = MARGIN_X + (width - MARGIN_X - 40 - top_width) / 2
    if len(top) <= 256:
        for n in top:
            boxes[n.name] = NodeBox(name=n.name, role=n.role, tier=0, kind="dot", x=x, y=y0, w=DOT, h=DOT,
                                    label=n.name, fill=ROLE_FILL[n.role], text=ROLE_TEXT[n.role])
            x += DOT + 4
    else:
        boxes["top"] = NodeBox(name="top", role="spine", tier=0, kind="group", x=x, y=y0, w=top_width, h=SWITCH_H,
                               label=f"{len(top):,} spines", fill=ROLE_FILL["spine"], text=ROLE_TEXT["spine"],
                               members=[n.name for n in top])
    x = MARGIN_X + (width - MARGIN_X - 40 - middle_width) / 2
    for n in expanded:
        fill = rail_color(n.rail) if n.rail is not None else ROLE_FILL[n.role]
        boxes[n.name] = NodeBox(name=n.name, role=n.role, tier=1, x=x, y=y1, w=leaf_w, h=SWITCH_H, label=n.name,
                                fill=fill, text=ROLE_TEXT[n.role], rail=n.rail, pod=n.pod)
        x += leaf_w + 6
    x += GROUP_GAP
    for (label, members), text in zip(groups[1:], group_labels, strict=True):
        rail = members[0].rail if all(m.rail == members[0].rail for m in members) else None
        boxes[f"group:{label}"] = NodeBox(
            name=f"group:{label}", role="leaf", tier=1, kind="group", x=x, y=y1, w=group_w[text], h=SWITCH_H + 8,
            label=text, fill=rail_color(rail) if rail else ROLE_FILL["leaf"],
            text=ROLE_TEXT["leaf"], rail=rail, members=[m.name for m in members])
        x += group_w[text] + GAP
    # servers: per expanded leaf, the servers whose NICs land on it (one box each), the rest counted at the end
    drawn_hosts: set[str] = set()
    for n in expanded:
        mine = hosted[n.name]
        if not mine:
            continue
        leaf = boxes[n.name]
        boxes[f"servers:{n.name}"] = NodeBox(
            name=f"servers:{n.name}", role="server", tier=2, kind="group", x=leaf.x, y=y2, w=leaf_w, h=HOST_H,
            label=f"{len(mine):,} servers", fill=ROLE_FILL["server"], text=ROLE_TEXT["server"], members=mine)
        drawn_hosts.update(mine)
    rest = [h.name for h in hosts if h.name not in drawn_hosts]
    if rest:
        boxes["servers:rest"] = NodeBox(
            name="servers:rest", role="server", tier=2, kind="group", x=x - rest_w - GAP if len(groups) > 1 else x,
            y=y2, w=rest_w, h=HOST_H, label=f"{len(rest):,} more servers", fill=ROLE_FILL["server"],
            text=ROLE_TEXT["server"], members=rest)
    edges = _summary_edges(graph, boxes, groups, expanded_names, tier)
    present = [0, 1] + ([2] if hosts else [])
    rows = [RowLabel(text=_row_label({"spine": len(top)}) if all(n.role == "spine" for n in top)
                     else f"{len(top):,} switches", y=y0 + DOT / 2),
            RowLabel(text=f"{len(middle):,} leaves", y=y1 + SWITCH_H / 2)]
    if hosts:
        rows.append(RowLabel(text=f"{len(hosts):,} servers", y=y2 + HOST_H / 2))
    height = MARGIN_TOP + (len(present) - 1) * ROW_GAP + HOST_H + 30
    notes = [f"summarised: {expanded_label} drawn leaf by leaf with all its uplinks; every other group of leaves is "
             "one box, its uplinks one bundle to each spine it reaches"
             + ("; a server box counts the servers on the leaf above it" if hosts else "")] if groups else []
    return Layout(title=graph.name, kind=graph.kind, summary=True, width=width, height=height,
                  nodes=list(boxes.values()), edges=edges, rows=rows, legend=_legend(graph, graph.nodes),
                  counts=_counts(graph), notes=notes)


def _summary_edges(graph: FabricGraph, boxes: dict[str, NodeBox], groups: list[tuple[str, list[GraphNode]]],
                   expanded: set[str], tier: dict[str, int]) -> list[EdgeLine]:
    edges: list[EdgeLine] = []
    uplinks = [lk for lk in graph.links if (lk.a in expanded and tier.get(lk.b) == 0)
               or (lk.b in expanded and tier.get(lk.a) == 0)]
    if len(uplinks) <= MAX_DRAWN_UPLINKS and "top" not in boxes:
        for lk in uplinks:
            leaf, spine = (lk.a, lk.b) if lk.a in expanded else (lk.b, lk.a)
            leaf_if, spine_if = (lk.a_iface, lk.b_iface) if leaf == lk.a else (lk.b_iface, lk.a_iface)
            lb, sb = boxes[leaf], boxes[spine]
            edges.append(EdgeLine(key=lk.key, kind="fabric", a=spine, b=leaf, a_iface=spine_if, b_iface=leaf_if,
                                  x1=sb.cx, y1=sb.y + sb.h, x2=lb.cx, y2=lb.y, color=FABRIC_EDGE, width=0.6))
    else:
        for name in sorted(expanded, key=_natural):
            edges += _fan(graph, boxes, boxes[name], {name}, tier, FABRIC_EDGE, 1.0)
    for label, members in groups[1:]:
        gb = boxes[f"group:{label}"]
        edges += _fan(graph, boxes, gb, {m.name for m in members}, tier, gb.fill, 0.8)
    for box in [b for b in boxes.values() if b.name.startswith("servers:") and b.name != "servers:rest"]:
        leaf = box.name.removeprefix("servers:")
        hosted = set(box.members)
        keys = [lk.key for lk in graph.links if {lk.a, lk.b} & hosted and leaf in (lk.a, lk.b)]
        lb = boxes[leaf]
        edges.append(EdgeLine(key=f"bundle:{box.name}", kind="bundle", a=leaf, b=box.name, x1=lb.cx, y1=lb.y + lb.h,
                              x2=box.cx, y2=box.y, color=lb.fill, width=2.0, label=f"{len(keys):,} links",
                              members=keys))
    return edges


def _fan(graph: FabricGraph, boxes: dict[str, NodeBox], target: NodeBox, names: set[str], tier: dict[str, int],
         color: str, width: float) -> list[EdgeLine]:
    """The uplinks of `names` (drawn as `target`, a leaf or a group of leaves) as one bundle per top-row switch
    they reach, each drawn to that switch's dot (to the one box of the top row when it is a single box); the
    middle bundle carries the total count."""
    per_top: dict[str, list[str]] = defaultdict(list)
    for lk in graph.links:
        for mine, other in ((lk.a, lk.b), (lk.b, lk.a)):
            if mine in names and tier.get(other) == 0:
                per_top[other if other in boxes else "top"].append(lk.key)
    ends = sorted(per_top, key=lambda t: (boxes[t].cx, _natural(t)))
    total = sum(len(keys) for keys in per_top.values())
    middle = ends[len(ends) // 2] if ends else ""
    out = []
    for top in ends:
        tb = boxes[top]
        out.append(EdgeLine(key=f"bundle:{target.name}:{top}" if len(ends) > 1 else f"bundle:{target.name}",
                            kind="bundle", a=top, b=target.name, x1=tb.cx, y1=tb.y + tb.h, x2=target.cx,
                            y2=target.y, color=color, width=width if len(ends) > 1 else 3.0,
                            label=f"{total:,} links" if top == middle else "", members=per_top[top]))
    return out
