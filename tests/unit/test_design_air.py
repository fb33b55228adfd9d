"""NVIDIA Air topologies: hand-written JSON and DOT samples in, twin's labs out and back in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twin.cli.app import app
from twin.model.errors import PlanError
from twin.model.plan import Plan
from twin.stages.lab_file import load_lab
from twin.stages.load.air import read_air, to_air_dot, to_air_json
from twin.stages.load.loader import load_topology

REPO = Path(__file__).resolve().parents[2]

# Air's documented sample (1 spine, 2 leaves, 2 servers), in its export envelope
AIR_JSON = {
    "format": "JSON", "title": "Demo", "ztp": None,
    "content": {
        "nodes": {
            "leaf01": {"cpu": 2, "memory": 4096, "storage": 10, "os": "sonic-vs-202305",
                       "features": {"uefi": False, "tpm": False}, "pxehost": False, "oob": False},
            "leaf02": {"cpu": 2, "memory": 4096, "storage": 10, "os": "sonic-vs-202305"},
            "server01": {"cpu": 2, "memory": 2048, "storage": 10, "os": "generic/ubuntu2404"},
            "server02": {"cpu": 2, "memory": 2048, "storage": 10, "os": "generic/ubuntu2404"},
            "spine01": {"cpu": 2, "memory": 4096, "storage": 10, "os": "sonic-vs-202305"},
        },
        "links": [
            [{"interface": "eth1", "node": "leaf01"}, {"interface": "eth1", "node": "server01"}],
            [{"interface": "eth2", "node": "leaf01"}, {"interface": "eth1", "node": "spine01"}],
            [{"interface": "eth1", "node": "leaf02"}, {"interface": "eth1", "node": "server02"}],
            [{"interface": "eth2", "node": "leaf02"}, {"interface": "eth2", "node": "spine01"}],
        ],
    },
}

AIR_DOT = """graph "Demo" {
  "spine01" [ function="spine" memory="4096" os="sonic-vs-202305" cpu="2" ]
  "leaf01" [ function="leaf" memory="4096" os="sonic-vs-202305" cpu="2" nic_model="e1000"]
  "leaf02" [ function="leaf" memory="4096" os="sonic-vs-202305" cpu="2" secureboot="true"]
  "server01" [ function="server" memory="2048" os="generic/ubuntu2404" cpu="2"]
  "server02" [ function="server" memory="2048" os="generic/ubuntu2204" cpu="3" storage="20"]
    "leaf01":"eth1" -- "server01":"eth1"
    "leaf02":"eth1" -- "server02":"eth1"
    "leaf01":"eth2" -- "spine01":"eth1"
    "spine01":"eth2" -- "leaf02":"eth2"
}
"""

DEMO_ROLES = {"spine01": "spine", "leaf01": "leaf", "leaf02": "leaf", "server01": "server", "server02": "server"}
# Air's eth1 on a switch is its first front-panel port: Ethernet0 of twin's 128 x 400G model, eth2 Ethernet4
DEMO_LINKS = {frozenset(ends) for ends in ([("leaf01", "Ethernet0"), ("server01", "eth1")],
                                           [("leaf02", "Ethernet0"), ("server02", "eth1")],
                                           [("leaf01", "Ethernet4"), ("spine01", "Ethernet0")],
                                           [("spine01", "Ethernet4"), ("leaf02", "Ethernet4")])}


def write(tmp_path: Path, name: str, content: str | dict[str, object]) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def links_of(plan: Plan) -> set[frozenset[tuple[str, str]]]:
    """Every link as its two ends, whichever way round the file wrote it."""
    return {frozenset({(lk.a_node, lk.a_iface), (lk.b_node, lk.b_iface)}) for lk in plan.links}


@pytest.mark.parametrize(("name", "content"), [("demo.json", AIR_JSON), ("demo.json", AIR_JSON["content"]),
                                               ("demo.dot", AIR_DOT)], ids=["json", "bare json", "dot"])
def test_import_documented_sample(tmp_path: Path, name: str, content: str | dict[str, object]) -> None:
    path = write(tmp_path, name, content)
    assert read_air(path) is not None
    plan = load_lab(path).plan
    assert plan.kind == "air"
    assert {n.name: n.role for n in plan.nodes} == DEMO_ROLES
    assert links_of(plan) == DEMO_LINKS
    assert plan.name == ("Demo" if content is not AIR_JSON["content"] else "demo")
    assert sum(len(n.neighbors) for n in plan.nodes) // 2 == 2          # two eBGP sessions: leaf01, leaf02 to spine01


def test_twin_json_topology_is_not_air(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", {"name": "j", "kind": "clos", "clos": {"spines": 1, "leaves": 2}})
    assert read_air(path) is None
    assert load_topology(path).kind == "clos"        # JSON that is twin's own YAML still loads as before


def test_roles_from_os_and_the_graph(tmp_path: Path) -> None:
    """Names that say nothing: the OS says switch or server, and a switch facing a server is a leaf."""
    doc = {"nodes": {"a": {"os": "cumulus-vx-5.16.1"}, "b": {"os": "cumulus-vx-5.16.1"}, "c": {"os": "sonic-vs"},
                     "m1": {"os": "generic/ubuntu2404"}, "m2": {"os": "generic/ubuntu2404"}},
           "links": [[{"node": "a", "interface": "swp1"}, {"node": "m1", "interface": "eth1"}],
                     [{"node": "b", "interface": "swp1"}, {"node": "m2", "interface": "eth1"}],
                     [{"node": "a", "interface": "swp49"}, {"node": "c", "interface": "swp1"}],
                     [{"node": "b", "interface": "swp49"}, {"node": "c", "interface": "swp2"}]]}
    topo = load_topology(write(tmp_path, "x.json", doc))
    assert {n.name: n.role for n in topo.nodes} == {"a": "leaf", "b": "leaf", "c": "spine", "m1": "server",
                                                    "m2": "server"}
    ports = {(lk.a.node, lk.a.iface) for lk in topo.links}
    assert ("a", "Ethernet192") in ports   # swp49 is front-panel port 49 of the 128-port model
    assert topo.fabric.radix == 64


def test_air_management_and_netq_nodes_are_left_out(tmp_path: Path) -> None:
    doc = AIR_DOT.replace('}\n', '  "oob-mgmt-switch" [ function="oob-switch" ]\n'
                          '  "oob-mgmt-switch":"swp1" -- "leaf01":"eth0"\n}\n')
    plan = load_lab(write(tmp_path, "m.dot", doc)).plan
    assert {n.name for n in plan.nodes} == set(DEMO_ROLES)
    assert links_of(plan) == DEMO_LINKS


def test_dot_forms(tmp_path: Path) -> None:
    """Unquoted names, ';' separators, comments, node defaults, a chain of links, graph attributes."""
    dot = """// a comment
strict graph fabric {
  label = "x"; node [os="sonic-vs-202305"]
  /* block
     comment */
  spine1; leaf1 [function=leaf]; leaf2 [function=leaf]
  # a shell comment
  srv1 [os="generic/ubuntu2404"]
  leaf1:swp1 -- spine1:swp1 [ left_mac="00:00:00:00:00:01" ];
  leaf2:swp1 -- spine1:swp2
  srv1:eth1 -- leaf1:swp2
}
"""
    topo = load_topology(write(tmp_path, "f.dot", dot))
    assert topo.name == "fabric"
    assert {n.name: n.role for n in topo.nodes} == {"spine1": "spine", "leaf1": "leaf", "leaf2": "leaf",
                                                    "srv1": "server"}
    assert len(topo.links) == 3


@pytest.mark.parametrize(("name", "content", "field", "words"), [
    ("bad.json", {"nodes": {"sw": {"os": "sonic-vs"}, "x": {"os": "sonic-vs"}},
                  "links": [[{"node": "sw", "interface": "eth1"}, {"node": "x", "interface": "eth1"}]]},
     "nodes.sw", "cannot tell whether sw is a spine, a leaf or a server"),
    ("bad.json", {"nodes": {"leaf1": {}, "server1": {}},
                  "links": [[{"node": "leaf1", "interface": "eth1", "mac": "02:00:00:00:00:07"}, "outbound"]]},
     "links.0.1", "an 'outbound' link leaves the simulation"),
    ("bad.json", {"nodes": {"leaf1": {}, "server1": {}},
                  "links": [[{"node": "leaf1", "interface": "eth0"}, {"node": "server1", "interface": "eth1"}]]},
     "links.0", "eth0 is the management port of switch leaf1"),
    ("bad.json", {"nodes": {"leaf1": {}, "server1": {}},
                  "links": [[{"node": "leaf1", "interface": "swp1s0"}, {"node": "server1", "interface": "eth1"}]]},
     "links.0", "breakout ports such as swp1s0 have no counterpart"),
    ("bad.json", {"nodes": {"leaf1": {}, "server1": {}},
                  "links": [[{"node": "leaf1", "interface": "swp200"}, {"node": "server1", "interface": "eth1"}]]},
     "links.0", "swp200 is port 200, but twin's switch model Arista-7060X6-64PE-B-O128 has 128"),
    ("bad.json", {"nodes": {"leaf1": {}}, "links": [[{"node": "leaf1", "interface": "eth1"},
                                                     {"node": "ghost", "interface": "eth1"}]]},
     "links.0", "link to unknown node 'ghost'"),
    ("bad.json", {"nodes": {"leaf.1": {"function": "leaf"}}, "links": []},
     "nodes.leaf.1", "node name 'leaf.1' does not suit twin"),
    ("bad.dot", 'graph g {\n "a" [function="firewall"]\n}\n', "nodes.a.function", "function 'firewall' is not one"),
    ("bad.dot", 'graph g {\n "leaf1" -- "spine1"\n}\n', "line 2", "does not name the interface on both ends"),
    ("bad.dot", 'digraph g {\n subgraph x { a }\n}\n', "line 2", "subgraphs are not part of Air's topologies"),
    ("bad.dot", 'graph g {\n "leaf1":"swp1" -- "spine1":"swp1"\n', "(document)", "no closing '}'"),
    ("bad.dot", 'network { }', "(document)", "a DOT topology starts with 'graph NAME {'"),
])
def test_clear_errors(tmp_path: Path, name: str, content: str | dict[str, object], field: str, words: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(PlanError) as err:
        load_topology(path)
    problem = next((p for p in err.value.problems if words in p.message), None)
    assert problem is not None, str(err.value)
    assert problem.file == str(path) and problem.field == field
    assert problem.fix


def test_dot_errors_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "l.dot", 'graph g {\n  "spine1"\n  "leaf1" -- "spine1"\n}\n')
    with pytest.raises(PlanError) as err:
        load_topology(path)
    assert err.value.problems[0].line == 3
    assert f"{path}:3: line 3:" in str(err.value)


@pytest.mark.parametrize("lab", ["labs/default.yaml", "labs/rail.yaml", "labs/gate.yaml"])
@pytest.mark.parametrize("fmt", ["json", "dot"])
def test_round_trip_keeps_every_node_and_link(tmp_path: Path, lab: str, fmt: str) -> None:
    plan = load_lab(REPO / lab).plan
    text = to_air_json(plan) if fmt == "json" else to_air_dot(plan)
    back = load_lab(write(tmp_path, f"x.{fmt}", text)).plan
    assert [(n.name, n.role, n.pod, n.rail) for n in back.nodes] == [(n.name, n.role, n.pod, n.rail)
                                                                     for n in plan.nodes]
    assert links_of(back) == links_of(plan)
    assert back.name == plan.name


def test_round_trip_of_an_imported_containerlab_file(tmp_path: Path) -> None:
    """Routers and plain hosts come back as routers and servers; every node and every link stays."""
    plan = load_lab(REPO / "topologies/frr01/frr01.clab.yml").plan
    back = load_lab(write(tmp_path, "frr01.dot", to_air_dot(plan))).plan
    assert {n.name for n in back.nodes} == {n.name for n in plan.nodes}
    assert {n.name: n.role for n in back.nodes if n.role == "router"} == {"router1": "router", "router2": "router",
                                                                         "router3": "router"}
    assert {frozenset((lk.a_node, lk.b_node)) for lk in back.links} == {frozenset((lk.a_node, lk.b_node))
                                                                        for lk in plan.links}


def test_written_json_is_air_shaped(tmp_path: Path) -> None:
    doc = json.loads(to_air_json(load_lab(REPO / "labs/default.yaml").plan, switch_os="cumulus-vx-5.16.1"))
    assert (doc["format"], doc["title"]) == ("JSON", "clos-4x8")
    assert doc["content"]["nodes"]["spine1"] == {"os": "cumulus-vx-5.16.1"}
    assert doc["content"]["nodes"]["server1"] == {"os": "generic/ubuntu2404"}
    assert [{"node": "leaf1", "interface": "eth33"}, {"node": "spine1", "interface": "eth1"}] in doc["content"]["links"]
    assert len(doc["content"]["links"]) == 48


def test_cli_export_air(tmp_path: Path) -> None:
    out = tmp_path / "rail.dot"
    result = CliRunner().invoke(app, ["export", "air", str(REPO / "labs/rail.yaml"), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"written": str(out), "format": "dot", "topology": "rail-2x8", "nodes": 24,
                                         "links": 96}
    assert out.read_text().startswith('graph "rail-2x8" {\n  "spine1" [ function="spine" os="sonic-vs-202305" ]')


def test_cli_export_air_needs_a_format(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", "air", str(REPO / "labs/rail.yaml"), "-o", str(tmp_path / "x.txt")])
    assert result.exit_code == 2
    assert "cannot tell the format of 'x.txt'" in result.stderr
    result = CliRunner().invoke(app, ["export", "air", str(REPO / "labs/rail.yaml"), "-o", str(tmp_path / "x.txt"),
                                      "--format", "json"])
    assert result.exit_code == 0
    assert json.loads((tmp_path / "x.txt").read_text())["format"] == "JSON"


@pytest.mark.parametrize(("name", "content"), [("demo.json", AIR_JSON), ("demo.dot", AIR_DOT)], ids=["json", "dot"])
def test_an_air_file_is_read_once(tmp_path: Path, name: str, content: str | dict[str, object],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from twin.host import userfile

    reads: list[Path] = []
    original = userfile.read_text   # read_json reads through it too
    monkeypatch.setattr(userfile, "read_text", lambda p, *a, **k: reads.append(p) or original(p, *a, **k))
    path = write(tmp_path, name, content)
    assert load_lab(path).plan.kind == "air"
    assert reads == [path]


def test_a_topology_and_a_lab_file_are_each_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from twin.stages.load import source

    reads: list[Path] = []
    original = source.read_yaml
    monkeypatch.setattr(source, "read_yaml", lambda p, *a, **k: reads.append(p) or original(p, *a, **k))
    topo = write(tmp_path, "t.yaml", "name: t\nkind: clos\nclos: {spines: 1, leaves: 2}\n")
    load_lab(topo)
    assert reads == [topo]
    lab = write(tmp_path, "lab.yaml", "name: l\ntopology: t.yaml\n")
    reads.clear()
    load_lab(lab)
    assert reads == [lab, topo]
