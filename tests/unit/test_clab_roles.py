"""A containerlab file's sonic-vs roles come from its links (and a twin-role label), not from names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from twin.model.errors import PlanError
from twin.model.topology import Topology
from twin.stages.load.clab_import import import_clab
from twin.stages.load.loader import load_topology
from twin.stages.load.source import load_yaml
from twin.stages.plan import plan_topology

CLOS = Path(__file__).parent / "data/clab/sonic-clos.clab.yml"


def _lab(tmp_path: Path, edit: Any = None) -> Path:
    data = yaml.safe_load(CLOS.read_text())
    if edit is not None:
        edit(data)
    path = tmp_path / "lab.clab.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _roles(topo: Topology) -> dict[str, tuple[str, int]]:
    return {n.name: (n.role, n.index) for n in topo.nodes}


def test_switches_no_host_reaches_are_spines() -> None:
    assert _roles(import_clab(load_yaml(CLOS))) == {
        "spine1": ("spine", 1), "spine2": ("spine", 2), "leaf1": ("leaf", 1), "leaf2": ("leaf", 2),
        "h1": ("host", 1), "h2": ("host", 2)}


def test_the_names_do_not_decide(tmp_path: Path) -> None:
    """Spines named leafX and leaves named spineX: the links still decide."""
    swap = {"spine1": "leafA", "spine2": "leafB", "leaf1": "spineA", "leaf2": "spineB"}

    def rename(data: dict[str, Any]) -> None:
        topo = data["topology"]
        topo["nodes"] = {swap.get(k, k): v for k, v in topo["nodes"].items()}
        for link in topo["links"]:
            link["endpoints"] = [f"{swap.get(n, n)}:{i}" for n, i in (e.split(":") for e in link["endpoints"])]

    roles = _roles(import_clab(load_yaml(_lab(tmp_path, rename))))
    assert roles["leafA"] == ("spine", 1) and roles["leafB"] == ("spine", 2)
    assert roles["spineA"] == ("leaf", 1) and roles["spineB"] == ("leaf", 2)


@pytest.mark.parametrize("where", ["node", "group"])
def test_twin_role_label_overrides_the_links(tmp_path: Path, where: str) -> None:
    def label(data: dict[str, Any]) -> None:
        topo = data["topology"]
        if where == "node":
            topo["nodes"]["spine2"]["labels"] = {"twin-role": "leaf"}
        else:
            topo["groups"] = {"tor": {"labels": {"twin-role": "leaf"}}}
            topo["nodes"]["spine2"]["group"] = "tor"
        topo["nodes"]["leaf2"]["labels"] = {"twin-role": "router"}

    roles = _roles(import_clab(load_yaml(_lab(tmp_path, label))))
    assert roles["spine2"] == ("leaf", 1)  # leaves are numbered in file order
    assert roles["leaf1"] == ("leaf", 2)
    assert roles["leaf2"] == ("router", 1)
    assert roles["spine1"] == ("spine", 1)  # still reaches leaf1, which a host reaches


def test_without_hosts_every_switch_stays_a_leaf(tmp_path: Path) -> None:
    def no_hosts(data: dict[str, Any]) -> None:
        topo = data["topology"]
        del topo["nodes"]["h1"], topo["nodes"]["h2"]
        topo["links"] = [lk for lk in topo["links"] if not lk["endpoints"][0].startswith("h")]

    roles = _roles(import_clab(load_yaml(_lab(tmp_path, no_hosts))))
    assert {name: role for name, (role, _) in roles.items()} == {
        "spine1": "leaf", "spine2": "leaf", "leaf1": "leaf", "leaf2": "leaf"}


def test_a_switch_facing_a_router_or_nothing_is_a_leaf(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1/frr.conf").write_text("hostname r1\n")

    def border(data: dict[str, Any]) -> None:
        topo = data["topology"]
        topo["nodes"]["r1"] = {"kind": "linux", "binds": ["r1/frr.conf:/etc/frr/frr.conf"]}
        topo["nodes"]["lonely"] = {"kind": "sonic-vs"}
        topo["links"].append({"endpoints": ["spine2:eth3", "r1:eth1"]})

    roles = _roles(import_clab(load_yaml(_lab(tmp_path, border))))
    assert roles["spine2"] == ("leaf", 1)  # a neighbour that is not a switch: not a spine
    assert roles["spine1"] == ("spine", 1)
    assert roles["lonely"] == ("leaf", 4)
    assert roles["r1"] == ("router", 1)


def test_spine_spine_links_alone_make_no_spine(tmp_path: Path) -> None:
    """A switch linked only to switches no host reaches (and none labelled leaf) stays a leaf."""
    def chain(data: dict[str, Any]) -> None:
        topo = data["topology"]
        topo["nodes"]["far"] = {"kind": "sonic-vs"}
        topo["links"].append({"endpoints": ["far:eth1", "spine1:eth3"]})

    roles = _roles(import_clab(load_yaml(_lab(tmp_path, chain))))
    assert roles["far"] == ("leaf", 3)
    assert roles["spine1"] == ("spine", 1)


def test_the_inferred_clos_plans_as_one() -> None:
    plan = plan_topology(load_topology(CLOS))
    asn = {n.name: n.asn for n in plan.nodes if n.kind == "switch"}
    assert asn == {"spine1": 65100, "spine2": 65100, "leaf1": 65101, "leaf2": 65102}
    for leaf in ("leaf1", "leaf2"):
        assert sorted(nb.name for nb in plan.node(leaf).neighbors) == ["spine1", "spine2"]
    assert str(plan.node("spine1").loopback) == "10.1.0.1"
    assert str(plan.node("leaf1").loopback) == "10.1.4.1"


def test_a_bad_twin_role_is_refused(tmp_path: Path) -> None:
    def bad(data: dict[str, Any]) -> None:
        data["topology"]["nodes"]["spine1"]["labels"] = {"twin-role": "super-spine"}

    with pytest.raises(PlanError) as err:
        import_clab(load_yaml(_lab(tmp_path, bad)))
    assert "label twin-role 'super-spine' on spine1 is not one of spine, leaf, router" in str(err.value)
