"""The plan stage: RFC 7938 numbering and addressing, stability when nodes are added, port assignment."""

from __future__ import annotations

import shutil
import textwrap
from collections import Counter
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest

from twin.model.errors import PlanError
from twin.model.plan import NodePlan, Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


def _plan(name: str) -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / f"{name}.yaml"))


def _write(tmp_path: Path, text: str, name: str = "topo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _clos_yaml(spines: int, leaves: int, servers_per_leaf: int = 2, links_per_spine: int = 1,
               max_paths: int | None = None) -> str:
    return f"""
        name: clos-{spines}x{leaves}
        kind: clos
        clos:
          spines: {spines}
          leaves: {leaves}
          servers_per_leaf: {servers_per_leaf}
          nics_per_server: 1
          links_per_spine: {links_per_spine}
        fabric:
          bfd: {{enabled: true}}
          max_paths: {"null" if max_paths is None else max_paths}
    """


@pytest.fixture(scope="module")
def clos() -> Plan:
    return _plan("clos-4x8")


@pytest.fixture(scope="module")
def rail() -> Plan:
    return _plan("rail-2x8")


@pytest.fixture(scope="module")
def big() -> Plan:
    return _plan("fabric-64x128")


# -- clos-4x8 -----------------------------------------------------------------------------------


def test_clos_node_counts(clos: Plan) -> None:
    assert Counter(n.role for n in clos.nodes) == {"spine": 4, "leaf": 8, "server": 16}
    assert len(clos.links) == 4 * 8 + 16


def test_spines_share_one_asn(clos: Plan) -> None:
    assert {n.asn for n in clos.by_role("spine")} == {65100}


def test_leaves_have_their_own_asn(clos: Plan) -> None:
    assert [n.asn for n in clos.by_role("leaf")] == list(range(65101, 65109))


def test_hosts_have_no_asn_or_loopback(clos: Plan) -> None:
    assert {(n.asn, n.loopback) for n in clos.hosts} == {(None, None)}


def test_loopbacks_unique_in_pool(clos: Plan) -> None:
    loopbacks = [n.loopback for n in clos.switches]
    assert None not in loopbacks
    assert len(set(loopbacks)) == len(loopbacks) == 12
    pool = IPv4Network("10.1.0.0/16")
    assert all(lo in pool for lo in loopbacks if lo is not None)


@pytest.mark.parametrize(("node", "loopback"), [
    ("spine1", "10.1.0.1"), ("spine4", "10.1.0.4"), ("leaf1", "10.1.4.1"), ("leaf8", "10.1.4.8"),
])
def test_loopback_numbering(clos: Plan, node: str, loopback: str) -> None:
    assert clos.node(node).loopback == IPv4Address(loopback)


def test_loopback_is_announced_as_32(clos: Plan) -> None:
    for node in clos.switches:
        assert node.networks[0] == IPv4Network(f"{node.loopback}/32"), node.name


def test_fabric_links_are_31s_spine_even_leaf_odd(clos: Plan) -> None:
    bad = []
    role = {n.name: n.role for n in clos.nodes}
    fabric = [link for link in clos.links if {role[link.a_node], role[link.b_node]} == {"spine", "leaf"}]
    assert len(fabric) == 32
    for link in fabric:
        spine, s_if, leaf, l_if = ((link.a_node, link.a_iface, link.b_node, link.b_iface)
                                   if role[link.a_node] == "spine" else
                                   (link.b_node, link.b_iface, link.a_node, link.a_iface))
        s_addr, l_addr = clos.node(spine).iface(s_if).address, clos.node(leaf).iface(l_if).address
        if (link.subnet is None or link.subnet.prefixlen != 31 or s_addr is None or l_addr is None
                or s_addr.network != link.subnet or l_addr.network != link.subnet
                or int(s_addr.ip) % 2 != 0 or int(l_addr.ip) % 2 != 1):
            bad.append(f"{spine}:{s_if}={s_addr} {leaf}:{l_if}={l_addr} subnet={link.subnet}")
    assert not bad


def test_interfaces_know_their_peer_address(clos: Plan) -> None:
    bad = []
    for node in clos.nodes:
        for i in node.interfaces:
            peer = clos.node(i.peer_node).iface(i.peer_iface)
            if (peer.address, peer.peer_address, peer.peer_node) != (i.peer_address, i.address, node.name):
                bad.append(f"{node.name}:{i.name}")
    assert not bad


def test_every_neighbor_has_its_reverse(clos: Plan) -> None:
    bad = []
    for node in clos.switches:
        for nb in node.neighbors:
            peer = clos.node(nb.name)
            reverse = [(r.local_addr, r.asn, r.name) for r in peer.neighbors if r.ip == nb.local_addr]
            local = node.iface(nb.iface).address
            remote = peer.iface(node.iface(nb.iface).peer_iface).address
            ok = (reverse == [(nb.ip, node.asn, node.name)] and nb.asn == peer.asn
                  and local is not None and local.ip == nb.local_addr
                  and remote is not None and remote.ip == nb.ip)
            if not ok:
                bad.append(f"{node.name} -> {nb.name} ({nb.ip})")
    assert not bad


@pytest.mark.parametrize(("role", "sessions"), [("spine", 8), ("leaf", 4)])
def test_session_counts(clos: Plan, role: str, sessions: int) -> None:
    assert {len(n.neighbors) for n in clos.by_role(role)} == {sessions}


def test_leaf_networks_are_loopback_and_server_31s(clos: Plan) -> None:
    for leaf in clos.by_role("leaf"):
        servers = sorted(i.address.network for i in leaf.interfaces if i.role == "server" and i.address)
        assert len(servers) == 2
        assert leaf.networks == [IPv4Network(f"{leaf.loopback}/32"), *servers], leaf.name


def test_spine_networks_are_loopback_only(clos: Plan) -> None:
    assert all(n.networks == [IPv4Network(f"{n.loopback}/32")] for n in clos.by_role("spine"))


def test_server_links_leaf_even_server_odd(clos: Plan) -> None:
    for server in clos.hosts:
        (nic,) = server.interfaces
        assert nic.address is not None and nic.peer_address is not None
        assert int(nic.address.ip) % 2 == 1 and int(nic.peer_address.ip) % 2 == 0
        assert nic.address.network.subnet_of(IPv4Network("10.2.0.0/16"))


def test_max_paths_is_spine_count(clos: Plan) -> None:
    assert clos.max_paths == 4


def test_plan_is_deterministic(clos: Plan) -> None:
    assert _plan("clos-4x8") == clos


# -- stability: adding a node moves nothing ------------------------------------------------------


def _assert_contained(small: Plan, big: Plan) -> None:
    for node in small.nodes:
        other = big.node(node.name)
        assert (other.asn, other.loopback, other.index, other.networks) == (
            node.asn, node.loopback, node.index, node.networks), node.name
        missing_ifaces = [i.name for i in node.interfaces if i not in other.interfaces]
        assert not missing_ifaces, f"{node.name}: interfaces changed: {missing_ifaces}"
        missing_nbs = [str(nb.ip) for nb in node.neighbors if nb not in other.neighbors]
        assert not missing_nbs, f"{node.name}: sessions changed: {missing_nbs}"
    missing_links = [link for link in small.links if link not in big.links]
    assert not missing_links


@pytest.mark.parametrize(("spines", "leaves", "new_node"), [(4, 9, "leaf9"), (5, 8, "spine5")],
                         ids=["ninth-leaf", "fifth-spine"])
def test_adding_a_node_keeps_existing_allocations(tmp_path: Path, spines: int, leaves: int,
                                                  new_node: str) -> None:
    small = plan_topology(load_topology(_write(tmp_path, _clos_yaml(4, 8), "small.yaml")))
    big = plan_topology(load_topology(_write(tmp_path, _clos_yaml(spines, leaves), "big.yaml")))
    assert big.node(new_node).neighbors
    _assert_contained(small, big)


# -- rail-2x8 -----------------------------------------------------------------------------------


def test_rail_counts(rail: Plan) -> None:
    assert Counter(n.role for n in rail.nodes) == {"spine": 4, "leaf": 16, "server": 4}


def test_rail_leaves_have_four_uplinks(rail: Plan) -> None:
    leaves = rail.by_role("leaf")
    assert len(leaves) == 16
    assert {len(n.neighbors) for n in leaves} == {4}
    assert {nb.name for n in leaves for nb in n.neighbors} == {"spine1", "spine2", "spine3", "spine4"}
    assert rail.max_paths == 4


@pytest.mark.parametrize("server", ["pod1-server1", "pod1-server2", "pod2-server1", "pod2-server2"])
def test_rail_nic_r_lands_on_rail_leaf_r(rail: Plan, server: str) -> None:
    node = rail.node(server)
    pod = node.pod
    assert [(i.name, i.peer_node) for i in node.interfaces] == [
        (f"eth{r}", f"pod{pod}-rail{r}") for r in range(1, 9)]


@pytest.mark.parametrize(("pod", "rail_no"), [(1, 1), (1, 8), (2, 3)])
def test_same_rail_servers_of_a_pod_share_a_leaf(rail: Plan, pod: int, rail_no: int) -> None:
    leaf = rail.node(f"pod{pod}-rail{rail_no}")
    assert (leaf.pod, leaf.rail) == (pod, rail_no)
    servers = [(i.peer_node, i.peer_iface) for i in leaf.interfaces if i.role == "server"]
    assert servers == [(f"pod{pod}-server1", f"eth{rail_no}"), (f"pod{pod}-server2", f"eth{rail_no}")]


# -- fabric-64x128 ------------------------------------------------------------------------------


def test_big_fabric_size(big: Plan) -> None:
    assert len(big.links) == 64 * 128 == 8192
    assert sum(len(n.neighbors) for n in big.nodes) // 2 == 8192
    assert big.max_paths == 64


def test_big_fabric_31s_unique(big: Plan) -> None:
    subnets = [link.subnet for link in big.links]
    assert None not in subnets
    assert {s.prefixlen for s in subnets if s is not None} == {31}
    assert len(set(subnets)) == len(subnets)


def test_big_fabric_asns_and_loopbacks(big: Plan) -> None:
    leaves = big.by_role("leaf")
    assert len({n.asn for n in leaves}) == 128
    assert {n.asn for n in big.by_role("spine")} == {65100}
    assert len({n.loopback for n in big.switches}) == 192


# -- parallel links -----------------------------------------------------------------------------


@pytest.mark.parametrize("spines", [2, 4])
def test_two_links_per_spine(tmp_path: Path, spines: int) -> None:
    plan = plan_topology(load_topology(_write(tmp_path, _clos_yaml(spines, 3, links_per_spine=2))))
    for leaf in plan.by_role("leaf"):
        assert Counter(nb.name for nb in leaf.neighbors) == {f"spine{j}": 2 for j in range(1, spines + 1)}
    assert plan.max_paths == 2 * spines


def test_max_paths_setting_wins(tmp_path: Path) -> None:
    plan = plan_topology(load_topology(_write(tmp_path, _clos_yaml(4, 2, max_paths=16))))
    assert plan.max_paths == 16


# -- explicit topologies: ports assigned when endpoints name none ------------------------------

EXPLICIT = """
    name: small
    kind: explicit
    nodes:
      spine1: {role: spine}
      spine2: {role: spine}
      leaf1: {role: leaf}
      leaf2: {role: leaf}
      server1: {role: server}
      server2: {role: server}
    links:
      - endpoints: [leaf1, spine1]
      - endpoints: [leaf1, spine2]
      - endpoints: [spine1, leaf2]
      - endpoints: [leaf2, spine2]
      - endpoints: [server1, leaf1]
      - endpoints: [leaf2, server2]
      - endpoints: [server1, leaf2]
"""


@pytest.fixture
def explicit(tmp_path: Path) -> Plan:
    return plan_topology(load_topology(_write(tmp_path, EXPLICIT)))


def _ports(node: NodePlan) -> list[tuple[str, str]]:
    return [(i.name, i.peer_node) for i in node.interfaces]


@pytest.mark.parametrize(("node", "ports"), [
    ("leaf1", [("Ethernet0", "server1"), ("Ethernet128", "spine1"), ("Ethernet132", "spine2")]),
    ("leaf2", [("Ethernet0", "server2"), ("Ethernet4", "server1"), ("Ethernet128", "spine1"),
               ("Ethernet132", "spine2")]),
    ("spine1", [("Ethernet0", "leaf1"), ("Ethernet4", "leaf2")]),
    ("spine2", [("Ethernet0", "leaf1"), ("Ethernet4", "leaf2")]),
    ("server1", [("eth1", "leaf1"), ("eth2", "leaf2")]),
    ("server2", [("eth1", "leaf2")]),
])
def test_explicit_ports_assigned(explicit: Plan, node: str, ports: list[tuple[str, str]]) -> None:
    assert _ports(explicit.node(node)) == ports


def test_explicit_uplinks_start_at_half_radix(tmp_path: Path) -> None:
    text = EXPLICIT.replace("    links:", "    fabric: {radix: 32}\n    links:")
    plan = plan_topology(load_topology(_write(tmp_path, text)))
    assert [i.name for i in plan.node("leaf1").interfaces if i.role == "fabric"] == ["Ethernet64", "Ethernet68"]


def test_explicit_named_ports_are_kept_and_skipped(tmp_path: Path) -> None:
    text = EXPLICIT.replace("[leaf1, spine1]", '["leaf1:Ethernet128", "spine1:Ethernet8"]')
    plan = plan_topology(load_topology(_write(tmp_path, text)))
    assert _ports(plan.node("leaf1"))[1:] == [("Ethernet128", "spine1"), ("Ethernet132", "spine2")]
    assert _ports(plan.node("spine1")) == [("Ethernet0", "leaf2"), ("Ethernet8", "leaf1")]


def test_explicit_plan_has_sessions(explicit: Plan) -> None:
    assert [nb.name for nb in explicit.node("leaf1").neighbors] == ["spine1", "spine2"]
    assert explicit.max_paths == 2
    assert [n.asn for n in explicit.switches] == [65100, 65100, 65101, 65102]


def test_assigned_port_beyond_radix_is_a_plan_error(tmp_path: Path) -> None:
    """Regression: ports plan_topology assigns itself were not checked against fabric.radix."""
    text = """
        name: over
        kind: explicit
        fabric: {radix: 4}
        nodes:
          spine1: {role: spine}
          spine2: {role: spine}
          spine3: {role: spine}
          leaf1: {role: leaf}
        links:
          - endpoints: [leaf1, spine1]
          - endpoints: [leaf1, spine2]
          - endpoints: [leaf1, spine3]
    """
    topo = load_topology(_write(tmp_path, text))
    with pytest.raises(PlanError, match="radix"):
        plan_topology(topo)


# -- switches that bring their own config_db.json -------------------------------------------------

BOUND = Path(__file__).resolve().parents[1] / "integration/data/clab-bound"
OWN_CONFIGS = f"""
    name: own
    kind: explicit
    nodes:
      sw1: {{role: leaf, config_db: {BOUND}/sw1/config_db.json}}
      sw2: {{role: leaf, config_db: {BOUND}/sw2/config_db.json}}
      leaf3: {{role: leaf}}
      h1: {{role: host, exec: ["ip addr add 192.168.1.2/24 dev eth1"]}}
      h2: {{role: host}}
      srv: {{role: server}}
    links:
      - endpoints: ["sw1:Ethernet0", "sw2:Ethernet0"]
      - endpoints: [h1, "sw1:Ethernet8"]
      - endpoints: [h2, sw2]
      - endpoints: [srv, leaf3]
"""


@pytest.fixture
def own(tmp_path: Path) -> Plan:
    shutil.copytree(BOUND, tmp_path / "bound")  # a topology names only files beside it (twin.host.userfile)
    return plan_topology(load_topology(_write(tmp_path, OWN_CONFIGS.replace(str(BOUND), str(tmp_path / "bound")))))


def test_own_config_replaces_twins_numbering(own: Plan, tmp_path: Path) -> None:
    sw1 = own.node("sw1")
    assert (sw1.asn, str(sw1.loopback), sw1.config_db) == (65101, "10.1.0.1", tmp_path / "bound/sw1/config_db.json")
    assert [(str(nb.ip), nb.asn, nb.name) for nb in sw1.neighbors] == [("10.0.0.1", 65102, "sw2")]
    assert [str(n) for n in sw1.networks] == ["10.1.0.1/32", "192.168.1.0/24"]
    assert str(sw1.iface("Ethernet0").address) == "10.0.0.0/31"


def test_a_port_left_out_is_the_next_one_its_own_config_lists(own: Plan) -> None:
    assert [(i.name, i.peer_node) for i in own.node("sw2").interfaces] == [("Ethernet0", "sw1"), ("Ethernet8", "h2")]
    assert own.node("h2").iface("eth1").address is None  # twin plans nothing on a link of such a switch


def test_planned_switches_beside_them_keep_twins_numbering(own: Plan) -> None:
    leaf3, srv = own.node("leaf3"), own.node("srv")
    assert (leaf3.asn, str(leaf3.loopback), leaf3.config_db, leaf3.max_paths) == (65103, "10.1.4.3", None, None)
    assert str(srv.iface("eth1").address).startswith("10.2.")
    assert str(leaf3.networks[0]) == "10.1.4.3/32"


def test_own_frrcfgd_config_sets_multipath_and_networks(tmp_path: Path) -> None:
    import json

    from twin.stages.render.config_db import build_config_db

    plan = _plan("clos-4x8")
    db = build_config_db(plan, plan.node("leaf1"))  # a frrcfgd config, as `twin plan` writes it
    db["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] = "2"
    (tmp_path / "leaf1.json").write_text(json.dumps(db))
    text = f"""
        name: one
        kind: explicit
        nodes:
          leaf1: {{role: leaf, config_db: {tmp_path}/leaf1.json}}
    """
    leaf1 = plan_topology(load_topology(_write(tmp_path, text))).node("leaf1")
    assert leaf1.max_paths == 2
    assert leaf1.networks == plan.node("leaf1").networks  # BGP_GLOBALS_AF_NETWORK: loopback and server subnets
    assert (leaf1.asn, leaf1.loopback) == (65101, plan.node("leaf1").loopback)


@pytest.mark.parametrize(("node", "message"), [
    ("h1: {role: host, config_db: x.json}", "h1 is a host; only a switch (spine, leaf or router) runs a SONiC "
     "config_db.json"),
    ("r1: {role: router, config_db: x.json, frr_conf: y.conf}", "r1 has both its own frr.conf and its own "
     "config_db.json"),
    ("sw9: {role: leaf, config_db: nowhere.json}", "config_db.json {tmp}/nowhere.json does not exist"),
])
def test_own_config_on_the_wrong_node_is_refused(tmp_path: Path, node: str, message: str) -> None:
    (tmp_path / "x.json").write_text("{}")
    (tmp_path / "y.conf").write_text("")
    path = _write(tmp_path, f"""
        name: bad
        kind: explicit
        nodes:
          {node}
    """)
    with pytest.raises(PlanError) as err:
        load_topology(path)
    (problem,) = err.value.problems
    assert (problem.file, problem.line, problem.message) == (str(path), 4, message.format(tmp=tmp_path))
    assert problem.field.endswith(".config_db") and problem.fix


def test_planning_stops_at_the_first_stage_with_problems(tmp_path: Path) -> None:
    """plan_topology's stages each end in a checkpoint: numbering's problems (an ASN past the private
    range) are reported together, and addressing (a management pool too small) is not judged on a
    numbering that failed; once numbering passes, addressing's problems are reported."""
    base = _clos_yaml(2, 4).rstrip() + "\n          mgmt_pool: 10.99.0.0/30\n"
    with pytest.raises(PlanError) as bad_numbers:
        plan_topology(load_topology(_write(tmp_path, base + "          leaf_asn_base: 65533\n")))
    assert [p.field for p in bad_numbers.value.problems] == ["fabric.leaf_asn_base"]
    with pytest.raises(PlanError) as bad_addresses:
        plan_topology(load_topology(_write(tmp_path, base)))
    assert [p.field for p in bad_addresses.value.problems] == ["fabric.mgmt_pool"]
