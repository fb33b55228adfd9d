"""`twin graph`: positions per tier and rail, the summary of large fabrics, SVG/PNG/HTML, and state colours."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twin.cli.app import app
from twin.design.fabric_graph import FabricGraph, from_plan, link_key
from twin.design.html import render_html
from twin.design.layout import Layout, layout, rail_color, tiers
from twin.design.live_state import LiveState, link_states, node_states, operstates_of, session_states
from twin.design.png import write_png
from twin.design.svg import STATE_COLOR, canvas_height, legend_items, render_svg
from twin.model.errors import PlanError
from twin.model.plan import Plan
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]


def plan_of(path: str) -> Plan:
    return load_lab(REPO / path).plan


@pytest.fixture(scope="module")
def default_plan() -> Plan:
    return plan_of("labs/default.yaml")


@pytest.fixture(scope="module")
def default_graph(default_plan: Plan) -> FabricGraph:
    return from_plan(default_plan)


@pytest.fixture(scope="module")
def rail_graph() -> FabricGraph:
    return from_plan(plan_of("labs/rail.yaml"))


def ys(lay: Layout, role: str) -> set[float]:
    return {b.y for b in lay.nodes if b.role == role}


@pytest.mark.parametrize("lab", ["labs/default.yaml", "labs/rail.yaml", "labs/gate.yaml"])
def test_tiers_top_to_bottom(lab: str) -> None:
    lay = layout(from_plan(plan_of(lab)))
    assert not lay.summary
    spine, leaf, server = ys(lay, "spine"), ys(lay, "leaf"), ys(lay, "server")
    assert len(spine) == len(leaf) == len(server) == 1          # one row per tier
    assert max(spine) < min(leaf) < min(server)


def test_every_node_drawn_once_without_overlap(default_graph: FabricGraph) -> None:
    lay = layout(default_graph)
    assert sorted(b.name for b in lay.nodes) == sorted(n.name for n in default_graph.nodes)
    for row in {b.y for b in lay.nodes}:
        boxes = sorted((b for b in lay.nodes if b.y == row), key=lambda b: b.x)
        assert all(a.x + a.w < b.x for a, b in itertools.pairwise(boxes))
    assert all(b.x > 0 and b.x + b.w < lay.width for b in lay.nodes)


def test_clos_order_and_servers_under_their_leaf(default_graph: FabricGraph) -> None:
    lay = layout(default_graph)
    leaves = sorted((b for b in lay.nodes if b.role == "leaf"), key=lambda b: b.x)
    assert [b.name for b in leaves] == [f"leaf{i}" for i in range(1, 9)]
    spines = sorted((b for b in lay.nodes if b.role == "spine"), key=lambda b: b.x)
    assert [b.name for b in spines] == [f"spine{i}" for i in range(1, 5)]
    servers = sorted((b for b in lay.nodes if b.role == "server"), key=lambda b: b.x)
    assert [b.name for b in servers] == [f"server{i}" for i in range(1, 17)]   # server1, 2 under leaf1, ...
    # each server's NIC is a port mark on the box's top edge, and its link ends there
    server1 = lay.box("server1")
    assert [p.iface for p in server1.ports] == ["eth1"]
    link = next(e for e in lay.edges if "server1" in (e.a, e.b))
    assert (link.x2, link.y2) == (server1.ports[0].x, server1.ports[0].y)
    assert link.a == "leaf1" and link.kind == "server"


def test_rails_side_by_side_and_nics_coloured_by_rail(rail_graph: FabricGraph) -> None:
    lay = layout(rail_graph)
    leaves = sorted((b for b in lay.nodes if b.role == "leaf"), key=lambda b: b.x)
    assert [b.name for b in leaves] == [f"pod{p}-rail{r}" for p in (1, 2) for r in range(1, 9)]
    assert all(b.fill == rail_color(b.rail or 0) for b in leaves)
    pod1, pod2 = leaves[7], leaves[8]
    assert pod2.x - (pod1.x + pod1.w) > leaves[1].x - (leaves[0].x + leaves[0].w)   # a wider gap between pods
    server = lay.box("pod2-server1")
    assert [p.iface for p in server.ports] == [f"eth{r}" for r in range(1, 9)]
    assert [p.color for p in server.ports] == [rail_color(r) for r in range(1, 9)]
    assert pod2.x <= server.x <= leaves[-1].x + leaves[-1].w                      # under its pod's leaves


def test_routers_take_the_tier_their_neighbours_give() -> None:
    graph = from_plan(plan_of("topologies/frr01/frr01.clab.yml"))
    assert tiers(graph) == {"router1": 1, "router2": 1, "router3": 1, "PC1": 2, "PC2": 2, "PC3": 2}
    lay = layout(graph)
    same_row = [e for e in lay.edges if e.bend]
    assert len(same_row) == 3                    # router-router links bow above the row


def test_parallel_links_are_spread(tmp_path: Path) -> None:
    topo = tmp_path / "p.yaml"
    topo.write_text("name: p\nkind: clos\nclos: {spines: 2, leaves: 2, links_per_spine: 4}\n")
    lay = layout(from_plan(load_lab(topo).plan))
    pair = [e for e in lay.edges if {e.a, e.b} == {"leaf1", "spine1"}]
    assert len(pair) == 4 and len({e.x2 for e in pair}) == 4


def test_large_fabric_is_summarised() -> None:
    graph = from_plan(plan_of("topologies/fabric-64x128.yaml"))
    lay = layout(graph)
    assert lay.summary
    dots = [b for b in lay.nodes if b.kind == "dot"]
    assert len(dots) == 64 and all(b.role == "spine" for b in dots)
    expanded = [b for b in lay.nodes if b.role == "leaf" and b.kind == "node"]
    assert [b.name for b in expanded] == [f"leaf{i}" for i in range(1, 17)]
    groups = [b for b in lay.nodes if b.kind == "group"]
    assert len(groups) == 7 and sum(len(g.members) for g in groups) == 112
    assert groups[0].label == "leaf17 … leaf32: 16 leaves"
    drawn = [e for e in lay.edges if e.kind == "fabric"]
    assert len(drawn) == 16 * 64                  # every uplink of the expanded group
    bundles = [e for e in lay.edges if e.kind == "bundle"]
    assert sum(len(e.members) for e in bundles) == 112 * 64
    assert [e.label for e in bundles if e.label] == ["1,024 links"] * 7     # one count per group
    assert lay.counts == {"spine": 64, "leaf": 128, "links": 8192}


def test_summary_bundles_are_drawn_to_their_own_spines() -> None:
    """Each group's uplinks fan out to every spine dot they reach, not to one point of the spine row."""
    lay = layout(from_plan(plan_of("topologies/fabric-64x128.yaml")))
    dots = {b.name: b for b in lay.nodes if b.kind == "dot"}
    for group in (b for b in lay.nodes if b.kind == "group"):
        fan = [e for e in lay.edges if e.kind == "bundle" and e.b == group.name]
        assert {e.a for e in fan} == set(dots)
        assert {(e.x1, e.y1) for e in fan} == {(d.cx, d.y + d.h) for d in dots.values()}   # 64 distinct ends
        assert {(e.x2, e.y2) for e in fan} == {(group.cx, group.y)}
        for e in fan:
            assert len(e.members) == 16 and all(f"{e.a}:" in key for key in e.members)
            assert all(any(f"{m}:" in key for m in group.members) for key in e.members)


def test_summary_bundles_of_spine_planes_reach_only_their_plane(tmp_path: Path) -> None:
    """48 leaves in three runs of 16: the first reaches every spine, the second spines 1-2, the third 3-4."""
    nodes = {f"spine{j}": {"role": "spine"} for j in range(1, 5)} | {f"leaf{i}": {"role": "leaf"} for i in range(1, 49)}
    planes = {1: [1, 2, 3, 4], 2: [1, 2], 3: [3, 4]}
    links = [{"endpoints": [f"leaf{i}", f"spine{j}"]} for i in range(1, 49) for j in planes[(i - 1) // 16 + 1]]
    topo = tmp_path / "planes.yaml"
    topo.write_text(json.dumps({"name": "planes", "kind": "explicit", "nodes": nodes, "links": links}))
    lay = layout(from_plan(load_lab(topo).plan))
    assert lay.summary
    dot = {b.name: (b.cx, b.y + b.h) for b in lay.nodes if b.kind == "dot"}
    ends = {g.label: {(e.x1, e.y1) for e in lay.edges if e.kind == "bundle" and e.b == g.name}
            for g in lay.nodes if g.kind == "group"}
    assert ends == {"leaf17 … leaf32: 16 leaves": {dot["spine1"], dot["spine2"]},
                    "leaf33 … leaf48: 16 leaves": {dot["spine3"], dot["spine4"]}}
    labels = {e.b: e.label for e in lay.edges if e.kind == "bundle" and e.label}
    assert labels == {"group:leaf17 … leaf32": "32 links", "group:leaf33 … leaf48": "32 links"}


def test_summary_expands_one_rail(tmp_path: Path) -> None:
    topo = tmp_path / "r.yaml"
    topo.write_text("name: r\nkind: rail\nrail: {pods: 4, rails: 4, spines: 2, servers_per_pod: 3}\n"
                    "fabric: {radix: 64}\n")
    lay = layout(from_plan(load_lab(topo).plan), "summary")
    expanded = [b.name for b in lay.nodes if b.role == "leaf" and b.kind == "node"]
    assert expanded == ["pod1-rail1", "pod2-rail1", "pod3-rail1", "pod4-rail1"]
    groups = {b.label for b in lay.nodes if b.kind == "group" and b.role == "leaf"}
    assert groups == {"rail 2: 4 leaves", "rail 3: 4 leaves", "rail 4: 4 leaves"}
    servers = [b for b in lay.nodes if b.name.startswith("servers:")]
    assert [b.label for b in servers] == ["3 servers"] * 4
    assert layout(from_plan(load_lab(topo).plan), "full").summary is False


def test_svg_has_every_node_and_link(default_graph: FabricGraph) -> None:
    svg = render_svg(layout(default_graph))
    names = re.findall(r'<g class="node[^"]*" data-name="([^"]+)"', svg)
    assert sorted(names) == sorted(n.name for n in default_graph.nodes)
    assert len(re.findall(r'class="link ', svg)) == len(default_graph.links)
    assert svg.startswith("<svg") and "4 spines, 8 leaves, 16 servers, 48 links" in svg


def test_png_is_written(tmp_path: Path, rail_graph: FabricGraph) -> None:
    out = tmp_path / "rail.png"
    write_png(layout(rail_graph), out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    lay = layout(rail_graph)
    assert (width, height) == (round(lay.width), round(canvas_height(lay, None)))


def test_legend_wraps_inside_the_drawing(default_graph: FabricGraph, default_plan: Plan) -> None:
    lay = layout(default_graph)
    items = legend_items(lay, live_of(default_plan, ("leaf1", "Ethernet128")))
    assert [label for label, *_ in items][-2:] == ["BGP Established", "BGP not"]
    assert all(x + 26 + 6.5 * len(label) <= lay.width for label, _, x, _ in items)
    assert all(y > lay.height for *_, y in items)


def test_html_is_one_self_contained_file(default_graph: FabricGraph) -> None:
    page = render_html(default_graph, layout(default_graph), generated=1_700_000_000.0)
    assert not re.search(r'<script[^>]+src=|<link[^>]+href=|@import|https?://(?!www\.w3\.org/2000/svg)', page)
    data = json.loads(re.search(r'<script type="application/json" id="twin-data">(.*?)</script>', page, re.S)
                      .group(1))  # type: ignore[union-attr]
    assert [n["name"] for n in data["nodes"]] == [n.name for n in default_graph.nodes]
    assert len(data["links"]) == 48 and data["refresh"] == 0 and data["live"] is None
    assert 'document.body.setAttribute("data-ready", "1")' in page
    assert "</script>" not in data.__repr__()


def test_html_data_cannot_close_its_script(tmp_path: Path) -> None:
    graph = FabricGraph(name="x</script><b>", kind="air", nodes=[], links=[])
    page = render_html(graph, layout(graph))
    body = page.split('id="twin-data">', 1)[1].split("</script>", 1)[0]
    assert "</script" not in body and "\\u003c/script" in body


# -- a running lab's state --------------------------------------------------------------------------------------------

IP_LINK = [{"ifname": "lo", "operstate": "UNKNOWN"}, {"ifname": "Ethernet128", "operstate": "LOWERLAYERDOWN"},
           {"ifname": "Ethernet132", "operstate": "UP"}, {"ifname": "Ethernet0", "operstate": "UP"}]


def live_of(plan: Plan, down: tuple[str, str]) -> LiveState:
    """Every interface UP but `down` (node, kernel name) DOWN; BGP Established except over that link."""
    operstates = {n.name: {i.kernel: "UP" for i in n.interfaces} for n in plan.nodes}
    operstates[down[0]][down[1]] = "DOWN"
    outputs: dict[str, dict[str, object]] = {}
    for n in plan.nodes:
        ends = {nb.ip: {(n.name, nb.iface), (n.iface(nb.iface).peer_node, n.iface(nb.iface).peer_iface)}
                for nb in n.neighbors}
        peers = {str(ip): {"state": "Active" if down in pair else "Established"} for ip, pair in ends.items()}
        outputs[n.name] = {"bgp_summary": {"ipv4Unicast": {"peers": peers}}}
    return LiveState(lab="t", runtime="netns", taken_at=0.0, healthy=False, bgp={"established": 62, "total": 64},
                     links=link_states(plan, operstates), sessions=session_states(plan, outputs),
                     nodes=node_states(plan, {"leaf2": {"bgpd": {"pid": 1, "running": False}}}, operstates),
                     problems=["bgp-sessions: leaf1 -> spine1: expected Established, seen Active"])


def test_operstates_of() -> None:
    assert operstates_of(IP_LINK) == {"lo": "UNKNOWN", "Ethernet128": "LOWERLAYERDOWN", "Ethernet132": "UP",
                                      "Ethernet0": "UP"}
    assert operstates_of({"not": "a list"}) is None


def test_link_and_session_states(default_plan: Plan) -> None:
    live = live_of(default_plan, ("leaf1", "Ethernet128"))
    key = link_key("leaf1", "Ethernet128", "spine1", "Ethernet0")
    assert live.links[key] == "down"
    assert sum(1 for s in live.links.values() if s == "up") == 47
    assert live.sessions["leaf1:Ethernet128"] == "Active"
    assert live.sessions["spine1:Ethernet0"] == "Active"
    assert live.sessions["leaf1:Ethernet132"] == "Established"
    assert live.nodes["leaf2"] == "failed" and live.nodes["leaf1"] == "ok"


def test_link_state_unknown_when_a_node_cannot_be_read(default_plan: Plan) -> None:
    operstates: dict[str, dict[str, str] | None] = {n.name: {i.kernel: "UP" for i in n.interfaces}
                                                    for n in default_plan.nodes}
    operstates["spine2"] = None
    states = link_states(default_plan, operstates)
    assert states[link_key("leaf1", "Ethernet132", "spine2", "Ethernet0")] == "unknown"
    assert node_states(default_plan, {}, operstates)["spine2"] == "failed"


def test_no_bgp_answer(default_plan: Plan) -> None:
    assert session_states(default_plan, {})["leaf1:Ethernet128"] == "no BGP"


def test_svg_colours_links_sessions_and_nodes_by_state(default_graph: FabricGraph, default_plan: Plan) -> None:
    live = live_of(default_plan, ("leaf1", "Ethernet128"))
    svg = render_svg(layout(default_graph), live)
    key = link_key("leaf1", "Ethernet128", "spine1", "Ethernet0")
    down = re.search(rf'<line [^>]*data-key="{re.escape(key)}"[^>]*>', svg)
    assert down is not None
    assert f'stroke="{STATE_COLOR["down"]}"' in down.group() and 'data-state="down"' in down.group()
    assert len(re.findall(r'class="link (?:fabric|server) state-up"', svg)) == 47
    assert len(re.findall(r'class="session state-down"', svg)) == 2
    assert len(re.findall(r'class="session state-established"', svg)) == 62
    assert re.search(r'<g class="node role-leaf node state-failed" data-name="leaf2"', svg)
    assert "lab t NOT healthy: links up 47/48, BGP 62/64 Established" in svg


def test_html_of_a_running_lab_refreshes(default_graph: FabricGraph, default_plan: Plan) -> None:
    live = live_of(default_plan, ("leaf1", "Ethernet128"))
    page = render_html(default_graph, layout(default_graph), live, refresh=5)
    data = json.loads(page.split('id="twin-data">', 1)[1].split("</script>", 1)[0])
    assert data["refresh"] == 5 and data["live"]["healthy"] is False
    link = next(lk for lk in data["links"] if lk["key"] == link_key("leaf1", "Ethernet128", "spine1", "Ethernet0"))
    assert link["state"] == "down" and link["sessions"] == {"leaf1:Ethernet128": "Active",
                                                            "spine1:Ethernet0": "Active"}
    assert "refreshes every 5 s from the running lab" in page and 'class="unhealthy"' in page


def test_png_of_a_running_lab(tmp_path: Path, default_graph: FabricGraph, default_plan: Plan) -> None:
    out = tmp_path / "live.png"
    write_png(layout(default_graph), out, live_of(default_plan, ("leaf1", "Ethernet128")))
    assert out.stat().st_size > 10_000


# -- the command ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".svg", ".png", ".html"])
def test_cli_graph_writes(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"fabric{suffix}"
    result = CliRunner().invoke(app, ["graph", str(REPO / "labs/rail.yaml"), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["nodes"], doc["links"], doc["summary"], doc["live"]) == (24, 96, False, None)
    assert out.stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


@pytest.mark.parametrize(("args", "words"), [
    (["-o", "x.svg"], "give a topology file or --name"),
    (["labs/default.yaml", "--name", "a", "-o", "x.svg"], "give a topology file or --name"),
    (["labs/default.yaml", "-o", "x.pdf"], "'x.pdf' is not a picture twin writes"),
    (["labs/default.yaml", "-o", "x.html", "--watch", "2"], "--watch: refreshes the HTML page of a running lab"),
])
def test_cli_graph_bad_input(args: list[str], words: str) -> None:
    result = CliRunner().invoke(app, ["graph", *args], standalone_mode=False)
    assert isinstance(result.exception, PlanError)
    assert words in str(result.exception)
