"""Import of containerlab topology files (.clab.yml) into twin's Topology."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from ipaddress import IPv4Interface
from pathlib import Path
from typing import Any

import pytest

from twin.host.reference import reference_path
from twin.model.errors import PlanError
from twin.model.topology import Endpoint, Topology
from twin.stages.load.clab_import import import_clab, sonic_iface
from twin.stages.load.loader import load_topology
from twin.stages.load.source import load_yaml
from twin.stages.plan import plan_topology

# The repo ships containerlab's frr01 example unchanged (a copy of the reference folder's containerlab/).
FRR01 = (Path(__file__).parents[2] / "topologies/frr01/frr01.clab.yml").resolve()
SHARED_FRR01 = reference_path("containerlab/lab-examples/frr01") or Path("/nonexistent")

needs_frr01 = pytest.mark.skipif(not FRR01.is_file(), reason=f"containerlab example absent: {FRR01}")


@pytest.mark.skipif(not SHARED_FRR01.is_dir(),
                    reason="containerlab's reference examples not found: set TWIN_SONIC_REFERENCE")
@pytest.mark.parametrize("rel", ["frr01.clab.yml", "router1/frr.conf", "router2/daemons", "router3/frr.conf"])
def test_shipped_frr01_is_the_reference_unchanged(rel: str) -> None:
    assert (FRR01.parent / rel).read_text() == (SHARED_FRR01 / rel).read_text()


def _write(tmp_path: Path, text: str, name: str = "lab.clab.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _import(tmp_path: Path, text: str) -> Topology:
    return import_clab(load_yaml(_write(tmp_path, text)))


def _ends(topo: Topology) -> list[tuple[str, str]]:
    return [(str(link.a), str(link.b)) for link in topo.links]


# -- the real frr01 example --------------------------------------------------------------------


@needs_frr01
def test_frr01_routers_run_their_own_frr() -> None:
    topo = import_clab(load_yaml(FRR01))
    assert (topo.name, topo.kind, topo.source) == ("frr01", "clab", str(FRR01))
    routers = topo.by_role("router")
    assert [(n.name, n.index) for n in routers] == [("router1", 1), ("router2", 2), ("router3", 3)]
    for node in routers:
        assert node.user_frr
        assert node.frr_conf == FRR01.parent / node.name / "frr.conf"
        assert node.daemons == FRR01.parent / node.name / "daemons"
        assert node.frr_conf.is_file() and node.daemons.is_file()
        assert node.image == "quay.io/frrouting/frr:10.5.1"
        assert node.exec == []


@needs_frr01
def test_frr01_pcs_are_hosts_with_their_exec_lines() -> None:
    topo = import_clab(load_yaml(FRR01))
    hosts = topo.by_role("host")
    assert [(n.name, n.index) for n in hosts] == [("PC1", 1), ("PC2", 2), ("PC3", 3)]
    for i, node in enumerate(hosts, start=1):
        assert node.frr_conf is None and node.daemons is None
        assert node.image == "wbitt/network-multitool:3.22.2"
        assert node.exec == [
            "ip link set eth1 up",
            f"ip addr add 192.168.1{i}.2/24 dev eth1",
            f"ip route add 192.168.0.0/16 via 192.168.1{i}.1 dev eth1",
            f"ip route add 10.10.10.0/24 via 192.168.1{i}.1 dev eth1",
        ]


@needs_frr01
def test_frr01_links_keep_names_and_lines() -> None:
    topo = import_clab(load_yaml(FRR01))
    assert _ends(topo) == [
        ("router1:eth1", "router2:eth1"),
        ("router1:eth2", "router3:eth1"),
        ("router2:eth2", "router3:eth2"),
        ("PC1:eth1", "router1:eth3"),
        ("PC2:eth1", "router2:eth3"),
        ("PC3:eth1", "router3:eth3"),
    ]
    lines = FRR01.read_text().splitlines()
    for link in topo.links:
        assert link.line is not None
        assert f'"{link.a}", "{link.b}"' in lines[link.line - 1]


@needs_frr01
def test_frr01_loads_and_plans() -> None:
    topo = load_topology(FRR01)
    plan = plan_topology(topo)
    kinds = {n.name: n.kind for n in plan.nodes}
    assert kinds == {"router1": "router", "router2": "router", "router3": "router",
                     "PC1": "host", "PC2": "host", "PC3": "host"}
    assert len(plan.links) == 6
    router1 = next(n for n in plan.nodes if n.name == "router1")
    assert [i.name for i in router1.interfaces] == ["eth1", "eth2", "eth3"]
    assert router1.frr_conf == FRR01.parent / "router1" / "frr.conf"


# -- sonic-vs ----------------------------------------------------------------------------------

SONIC_LAB = """
    name: sonic2
    topology:
      kinds:
        sonic-vs:
          image: docker-sonic-vs:202405
      nodes:
        spine1:
          kind: sonic-vs
          labels: {twin-role: spine}
        leaf1:
          kind: sonic-vs
        leaf2:
          kind: sonic-vs
          labels: {role: leaf}
        srv1:
          kind: linux
          image: alpine:3
          exec: [ip link set eth1 up]
      links:
        - endpoints: ["spine1:eth1", "leaf1:eth33"]
        - type: veth
          endpoints:
            - {node: spine1, interface: eth2}
            - {node: leaf2, interface: eth33}
        - endpoints: ["srv1:eth1", "leaf1:eth1"]
"""


def test_sonic_vs_ports_map_to_sonic_names(tmp_path: Path) -> None:
    topo = _import(tmp_path, SONIC_LAB)
    assert _ends(topo) == [
        ("spine1:Ethernet0", "leaf1:Ethernet128"),
        ("spine1:Ethernet4", "leaf2:Ethernet128"),
        ("srv1:eth1", "leaf1:Ethernet0"),
    ]
    assert topo.links[1].a == Endpoint(node="spine1", iface="Ethernet4")


def test_sonic_vs_roles_images_and_indexes(tmp_path: Path) -> None:
    topo = _import(tmp_path, SONIC_LAB)
    got = [(n.name, n.role, n.index, n.image, n.frr_conf) for n in topo.nodes]
    assert got == [
        ("spine1", "spine", 1, "docker-sonic-vs:202405", None),
        ("leaf1", "leaf", 1, "docker-sonic-vs:202405", None),
        ("leaf2", "leaf", 2, "docker-sonic-vs:202405", None),
        ("srv1", "host", 1, "alpine:3", None),
    ]
    assert topo.node("srv1").exec == ["ip link set eth1 up"]


def test_sonic_vs_lab_validates_and_plans(tmp_path: Path) -> None:
    plan = plan_topology(load_topology(_write(tmp_path, SONIC_LAB)))
    kinds = {n.name: n.kind for n in plan.nodes}
    assert kinds == {"spine1": "switch", "leaf1": "switch", "leaf2": "switch", "srv1": "host"}


@pytest.mark.parametrize(("clab", "sonic"), [("eth1", "Ethernet0"), ("eth2", "Ethernet4"),
                                            ("eth64", "Ethernet252"), ("eth0", None), ("e1-1", None)])
def test_sonic_iface(clab: str, sonic: str | None) -> None:
    assert sonic_iface(clab) == sonic


# -- merging defaults, kinds, groups and the node ----------------------------------------------


def test_settings_merge_in_containerlab_order(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    topo = _import(tmp_path, """
        name: merge
        topology:
          defaults:
            kind: linux
            image: default:1
            exec: [echo defaults]
            binds: [shared/frr.conf:/etc/frr/frr.conf]
          kinds:
            linux:
              image: kind:1
              exec: [echo kind]
          groups:
            routers:
              image: group:1
              exec: [echo group]
          nodes:
            r1:
              group: routers
              binds: [r1/frr.conf:/etc/frr/frr.conf, /abs/daemons:/etc/frr/daemons:ro]
              exec: [echo node]
            r2:
              image: node:1
            r3:
              kind: linux
              binds: [data:/data]
    """)
    r1, r2, r3 = topo.nodes
    assert (r1.role, r1.image, r1.exec) == ("router", "group:1",
                                            ["echo defaults", "echo kind", "echo group", "echo node"])
    assert r1.frr_conf == tmp_path / "r1" / "frr.conf"  # the node's bind replaces the default's
    assert r1.daemons == Path("/abs/daemons")
    assert (r2.role, r2.image, r2.index, r2.frr_conf) == ("router", "node:1", 2, tmp_path / "shared/frr.conf")
    assert r2.daemons is None
    # the defaults' frr.conf bind reaches r3 too; its own bind adds to it
    assert (r3.role, r3.image, r3.exec) == ("router", "kind:1", ["echo defaults", "echo kind"])


def test_folder_bound_on_etc_frr(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "daemons").write_text("bgpd=yes\n")
    topo = _import(tmp_path, """
        name: folder
        topology:
          nodes:
            r1: {kind: linux, binds: ["r1:/etc/frr"]}
            r2: {kind: linux, binds: ["r2/:/etc/frr/"]}
    """)
    r1, r2 = topo.nodes
    assert (r1.role, r1.frr_conf, r1.daemons) == ("router", tmp_path / "r1/frr.conf", tmp_path / "r1/daemons")
    assert (r2.role, r2.frr_conf, r2.daemons) == ("router", tmp_path / "r2/frr.conf", None)


def test_linux_without_frr_binds_is_a_host(tmp_path: Path) -> None:
    topo = _import(tmp_path, """
        name: hosts
        topology:
          nodes:
            h1: {kind: linux, binds: ["cfg/daemons:/etc/frr/daemons"]}
            h2: {kind: linux}
    """)
    assert [(n.name, n.role, n.index, n.frr_conf) for n in topo.nodes] == [
        ("h1", "host", 1, None), ("h2", "host", 2, None)]


def test_missing_bound_file_is_recorded_and_reported_by_validate(tmp_path: Path) -> None:
    path = _write(tmp_path, """
        name: nofile
        topology:
          nodes:
            r1: {kind: linux, binds: ["r1/frr.conf:/etc/frr/frr.conf"]}
    """)
    topo = import_clab(load_yaml(path))
    assert topo.nodes[0].frr_conf == tmp_path / "r1/frr.conf"
    with pytest.raises(PlanError) as err:
        load_topology(path)
    assert [p.message for p in err.value.problems] == [f"bind file {tmp_path / 'r1/frr.conf'} does not exist"]


# -- mistakes ----------------------------------------------------------------------------------

ERRORS = [
    pytest.param("""
        name: 9lab
        topology:
          nodes: {h1: {kind: linux}}
    """, 1, "name", "lab name '9lab' must start with a letter, use only letters, digits, '-' and '_', "
       "and be at most 40 characters", id="bad-name"),
    pytest.param("""
        topology:
          nodes: {h1: {kind: linux}}
    """, 1, "name", "required field is missing", id="no-name"),
    pytest.param("""
        name: lab
        topology:
          links: []
    """, 2, "topology.nodes", "a containerlab topology needs nodes", id="no-nodes"),
    pytest.param("""
        name: lab
        topology:
          nodes: {}
    """, 3, "topology.nodes", "a containerlab topology needs nodes", id="empty-nodes"),
    pytest.param("""
        name: lab
        topology:
          nodes:
            srl1:
              kind: nokia_srlinux
    """, 5, "topology.nodes.srl1.kind", "kind 'nokia_srlinux' of node srl1 is not supported",
        id="unsupported-kind"),
    pytest.param("""
        name: lab
        topology:
          defaults: {kind: ceos}
          nodes:
            c1: {}
    """, 3, "topology.defaults.kind", "kind 'ceos' of node c1 is not supported",
        id="unsupported-default-kind"),
    pytest.param("""
        name: lab
        topology:
          nodes:
            x1:
              image: alpine
    """, 4, "topology.nodes.x1", "node has no kind", id="no-kind"),
    pytest.param("""
        name: lab
        topology:
          nodes:
            r1:
              kind: linux
              binds:
                - r1/frr.conf
    """, 7, "topology.nodes.r1.binds.0", "bind 'r1/frr.conf' is not of the form host:container[:mode]",
        id="bind-no-container"),
    pytest.param("""
        name: lab
        topology:
          groups:
            g: {binds: ["a:b:c:d"]}
          nodes:
            r1: {kind: linux, group: g}
    """, 4, "topology.groups.g.binds.0", "bind 'a:b:c:d' is not of the form host:container[:mode]",
        id="bind-too-many-parts"),
    pytest.param("""
        name: lab
        topology:
          nodes:
            r1: {kind: linux, binds: ["r1/frr.conf:etc/frr/frr.conf"]}
    """, 4, "topology.nodes.r1.binds.0",
        "bind 'r1/frr.conf:etc/frr/frr.conf' is not of the form host:container[:mode]",
        id="bind-relative-dst"),
    pytest.param("""
        name: lab
        topology:
          nodes: {a: {kind: linux}, b: {kind: linux}}
          links:
            - endpoints: ["a:eth1", "b"]
    """, 5, "topology.links.0.endpoints.1", "endpoint 'b' is not of the form node:interface",
        id="endpoint-no-iface"),
    pytest.param("""
        name: lab
        topology:
          nodes: {a: {kind: linux}, b: {kind: linux}}
          links:
            - endpoints: [":eth1", "b:eth1"]
    """, 5, "topology.links.0.endpoints.0", "endpoint ':eth1' is not of the form node:interface",
        id="endpoint-no-node"),
    pytest.param("""
        name: lab
        topology:
          nodes: {a: {kind: linux}, b: {kind: linux}}
          links:
            - endpoints: ["a:eth1", "b:eth1", "a:eth2"]
    """, 5, "topology.links.0.endpoints", "a link needs 2 endpoints, got 3", id="three-endpoints"),
    pytest.param("""
        name: lab
        topology:
          nodes: {a: {kind: linux}}
          links:
            - endpoints: ["a:eth1", "host:a-eth1"]
    """, 5, "topology.links.0.endpoints.1", "endpoint 'host:a-eth1' attaches to the container host, "
        "not to a node", id="host-endpoint"),
    pytest.param("""
        name: lab
        topology:
          nodes: {a: {kind: linux}, b: {kind: linux}}
          links:
            - type: veth
              endpoints:
                - {node: a, interface: eth1}
                - {node: b}
    """, 8, "topology.links.0.endpoints.1", "a veth endpoint needs 'node:' and 'interface:'",
        id="veth-no-interface"),
    pytest.param("""
        name: lab
        topology:
          nodes: {a: {kind: linux}}
          links:
            - type: macvlan
              endpoint: {node: a, interface: eth1}
              host-interface: enp0s3
    """, 5, "topology.links.0.type", "link type 'macvlan' is not supported", id="macvlan-link"),
    pytest.param("""
        name: lab
        topology:
          nodes: {s1: {kind: sonic-vs}, s2: {kind: sonic-vs}}
          links:
            - endpoints: ["s1:eth0", "s2:eth1"]
    """, 5, "topology.links.0.endpoints.0", "eth0 is the management port of sonic-vs node s1 and cannot "
        "carry a link", id="sonic-eth0"),
    pytest.param("""
        name: lab
        topology:
          nodes: {s1: {kind: sonic-vs}, s2: {kind: sonic-vs}}
          links:
            - endpoints: ["s1:e1-1", "s2:eth1"]
    """, 5, "topology.links.0.endpoints.0", "interface 'e1-1' of sonic-vs node s1 is not a containerlab "
        "port name", id="sonic-bad-port"),
    pytest.param("""
        name: lab
        topology:
          nodes:
            s1:
              kind: sonic-vs
              labels:
                twin-role: core
    """, 7, "topology.nodes.s1.labels.twin-role", "label twin-role 'core' on s1 is not one of spine, leaf, "
        "router", id="bad-twin-role"),
]


@pytest.mark.parametrize(("text", "line", "field", "message"), ERRORS)
def test_import_problem(tmp_path: Path, text: str, line: int, field: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(PlanError) as err:
        import_clab(load_yaml(path))
    problems = err.value.problems
    assert [(p.file, p.line, p.field, p.message) for p in problems] == [(str(path), line, field, message)]
    assert problems[0].fix


def test_unsupported_kind_names_the_supported_ones(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as err:
        _import(tmp_path, """
            name: lab
            topology:
              nodes: {b: {kind: bridge}}
        """)
    assert err.value.problems[0].fix == "twin imports kinds linux and sonic-vs"


def test_every_problem_is_reported_once(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as err:
        _import(tmp_path, """
            name: -bad
            topology:
              defaults: {binds: ["nocolon"]}
              nodes:
                a: {kind: linux}
                b: {kind: linux}
                c: {kind: vr-sros}
              links:
                - endpoints: ["a:eth1", "b"]
        """)
    assert [(p.field, p.line) for p in err.value.problems] == [
        ("name", 1), ("topology.defaults.binds.0", 3), ("topology.nodes.c.kind", 7),
        ("topology.links.0.endpoints.1", 9)]


# -- sonic-vs nodes that bind their own config_db.json -----------------------------------------

BOUND = (Path(__file__).parents[1] / "integration/data/clab-bound/bound.clab.yml").resolve()


def _bound_lab(tmp_path: Path, edit: Any = None, node: str = "sw1", clab: str | None = None) -> Path:
    """A copy of the bound-config example in tmp_path; `edit(db)` changes `node`'s config_db.json."""
    shutil.copytree(BOUND.parent, tmp_path / "lab")
    path = tmp_path / "lab" / BOUND.name
    if clab is not None:
        path.write_text(textwrap.dedent(clab).lstrip())
    if edit is not None:
        cfg = tmp_path / "lab" / node / "config_db.json"
        db = json.loads(cfg.read_text())
        edit(db)
        cfg.write_text(json.dumps(db, indent=4))
    return path


def test_sonic_vs_bound_config_is_the_nodes_config() -> None:
    topo = load_topology(BOUND)
    sw1, sw2, h1, h2 = (topo.node(n) for n in ("sw1", "sw2", "h1", "h2"))
    assert sw1.config_db == BOUND.parent / "sw1" / "config_db.json"
    assert sw1.config_db.is_absolute() and sw2.config_db == BOUND.parent / "sw2" / "config_db.json"
    assert sw1.config is not None and sw1.config.dialect == "bgpcfgd"
    assert (sw1.config.asn, str(sw1.config.loopback)) == (65101, "10.1.0.1")
    assert [str(n) for n in sw1.config.networks] == ["10.1.0.1/32", "192.168.1.0/24"]  # bgpcfgd: Loopback0, VLANs
    assert sw1.config.vlan_members == {"Ethernet8": "Vlan1000"}
    assert (h1.config_db, h1.exec[1]) == (None, "ip addr add 192.168.1.2/24 dev eth1")
    assert h2.config is None


def test_plan_takes_addresses_sessions_and_prefixes_from_the_bound_files() -> None:
    plan = plan_topology(load_topology(BOUND))
    sw1 = plan.node("sw1")
    assert sw1.config_db == BOUND.parent / "sw1" / "config_db.json"
    assert (sw1.kind, sw1.asn, str(sw1.loopback)) == ("switch", 65101, "10.1.0.1")
    eth0, eth8 = sw1.iface("Ethernet0"), sw1.iface("Ethernet8")
    assert (str(eth0.address), str(eth0.peer_address), eth0.role) == ("10.0.0.0/31", "10.0.0.1/31", "fabric")
    assert (eth8.address, eth8.peer_node, eth8.role, eth8.speed) == (None, "h1", "server", 40000)  # a VLAN member
    assert [(str(nb.ip), nb.asn, nb.name, nb.iface, str(nb.local_addr), nb.bfd) for nb in sw1.neighbors] == [
        ("10.0.0.1", 65102, "sw2", "Ethernet0", "10.0.0.0", False)]
    assert [str(n) for n in sw1.networks] == ["10.1.0.1/32", "192.168.1.0/24"]
    assert str(plan.node("sw2").iface("Ethernet0").address) == "10.0.0.1/31"
    # nothing from twin's pools: no fabric /31 from 10.0.0.0/16 keyed by port, no server /31 from 10.2.0.0/16
    h1 = plan.node("h1").iface("eth1")
    assert (h1.address, str(h1.peer_address)) == (None, "None")
    assert {str(lk.subnet) for lk in plan.links} == {"10.0.0.0/31", "None"}


def test_health_checks_expect_what_the_bound_files_and_exec_lines_set_up() -> None:
    from twin.checks.catalog import expected_bfd, expected_ecmp, expected_pings, expected_sessions

    plan = plan_topology(load_topology(BOUND))
    assert expected_sessions(plan) == {"sw1": {"10.0.0.1": "sw2"}, "sw2": {"10.0.0.0": "sw1"}}
    assert expected_ecmp(plan) == {"sw1": {"10.1.0.2/32": 1, "192.168.2.0/24": 1},
                                   "sw2": {"10.1.0.1/32": 1, "192.168.1.0/24": 1}}
    assert expected_pings(plan) == {"h1": {"192.168.1.2": {"192.168.2.2": "h2/192.168.2.2"}},
                                    "h2": {"192.168.2.2": {"192.168.1.2": "h1/192.168.1.2"}}}
    assert expected_bfd(plan) == {}  # the files ask for no BFD; fabric.bfd (on by default) is twin's plan only


def test_bfd_and_shut_neighbors_follow_the_file(tmp_path: Path) -> None:
    def edit(db: dict[str, Any]) -> None:  # `bfd` is a field of the VRF-keyed form only (sonic-bgp-neighbor.yang)
        db["BGP_NEIGHBOR"]["default|10.0.0.1"] = {**db["BGP_NEIGHBOR"].pop("10.0.0.1"), "bfd": "true"}
        db["BGP_NEIGHBOR"]["10.0.0.9"] = {"asn": "65109", "admin_status": "down", "name": "gone"}

    from twin.checks.catalog import expected_bfd, expected_sessions

    plan = plan_topology(load_topology(_bound_lab(tmp_path, edit)))
    assert expected_bfd(plan) == {"sw1": ["10.0.0.1"]}
    assert expected_sessions(plan)["sw1"] == {"10.0.0.1": "sw2"}  # admin down: bgpcfgd shuts it


def test_node_config_db_is_the_users_file_with_the_runtimes_management_address() -> None:
    from twin.stages.render.config_db import node_config_db

    plan = plan_topology(load_topology(BOUND))
    sw1 = plan.node("sw1")
    own = json.loads((BOUND.parent / "sw1" / "config_db.json").read_text())
    assert node_config_db(plan, sw1) == own
    db = node_config_db(plan, sw1, mgmt=(IPv4Interface("172.20.5.2/24"), "172.20.5.1"))
    assert db["MGMT_INTERFACE"] == {"eth0|172.20.5.2/24": {"gwaddr": "172.20.5.1"}}
    assert db["MGMT_PORT"] == {"eth0": {"alias": "eth0", "admin_status": "up"}}
    assert {t: r for t, r in db.items() if not t.startswith("MGMT_")} == own


def test_switches_without_a_bound_file_still_get_twins_rendering(tmp_path: Path) -> None:
    from twin.stages.render.config_db import build_config_db, node_config_db

    plan = plan_topology(load_topology(_write(tmp_path, SONIC_LAB)))
    leaf1 = plan.node("leaf1")
    assert leaf1.config_db is None
    assert node_config_db(plan, leaf1) == build_config_db(plan, leaf1)


@pytest.mark.parametrize("target", ["/var/sonic/config_db.json", "/var/sonic/config_db.json:ro", "/var/sonic",
                                    "/etc/sonic/config_db.json", "/etc/sonic/config_db.json:ro"])
def test_config_bound_where_sonic_vs_reads_it(tmp_path: Path, target: str) -> None:
    (tmp_path / "s1").mkdir()
    host = "s1" if target.startswith("/var/sonic") and not target.endswith(("json", "json:ro")) \
        else "s1/config_db.json"
    topo = _import(tmp_path, f"""
        name: b
        topology:
          nodes:
            s1: {{kind: sonic-vs, binds: ["{host}:{target}"]}}
            s2: {{kind: sonic-vs, binds: ["other:/etc/sonic/other.json"]}}
    """)
    assert topo.node("s1").config_db == tmp_path / "s1" / "config_db.json"
    assert topo.node("s2").config_db is None


def test_var_sonic_wins_as_start_sh_copies_it_last(tmp_path: Path) -> None:
    topo = _import(tmp_path, """
        name: b
        topology:
          kinds:
            sonic-vs: {binds: ["etc.json:/etc/sonic/config_db.json"]}
          nodes:
            s1: {kind: sonic-vs, binds: ["var.json:/var/sonic/config_db.json"]}
    """)
    assert topo.node("s1").config_db == tmp_path / "var.json"


def _plan_problems(path: Path) -> list[tuple[str, str | int | None, str, str]]:
    with pytest.raises(PlanError) as err:
        plan_topology(load_topology(path))
    return [(p.file, p.line, p.field, p.message) for p in err.value.problems]


def _set(table: str, key: str, row: Any) -> Any:
    def edit(db: dict[str, Any]) -> None:
        if row is None:
            db[table].pop(key)
        else:
            db.setdefault(table, {})[key] = row
    return edit


BAD_FILES = [
    pytest.param(_set("PORT", "Ethernet8", None), "PORT",
                 "sw1 links Ethernet8 (containerlab's sonic-vs eth3) to h1, but this config has no PORT|Ethernet8: "
                 "SONiC booted from it creates only the ports its PORT table lists", id="linked-port-not-in-PORT"),
    pytest.param(_set("BGP_NEIGHBOR", "10.0.0.1", {"asn": "sixty", "local_addr": "10.0.0.0"}),
                 "BGP_NEIGHBOR|10.0.0.1 asn", "'sixty' is not an ASN (1-4294967294)", id="bad-peer-asn"),
    pytest.param(_set("INTERFACE", "Ethernet0", None), "INTERFACE|Ethernet0|10.0.0.0/31",
                 "the base key 'Ethernet0' is missing; add \"Ethernet0\": {}", id="no-interface-base-key"),
    pytest.param(_set("NOT_A_TABLE", "x", {"a": "b"}), "NOT_A_TABLE",
                 "no SONiC YANG model defines this table (SONiC's config reload, GCU and gNMI Set refuse it)",
                 id="table-without-a-model"),
    pytest.param(lambda db: db["DEVICE_METADATA"]["localhost"].update(frr_mgmt_framework_config="true"),
                 "BGP_GLOBALS|default local_asn",
                 "the config has BGP_NEIGHBOR entries and selects frrcfgd (frr_mgmt_framework_config), which renders "
                 "'router bgp' only from BGP_GLOBALS|default local_asn: no session would come up",
                 id="frrcfgd-without-local-asn"),
]


def test_a_bound_local_addr_on_no_interface_is_loaded_as_sonic_loads_it(tmp_path: Path) -> None:
    """SONiC's YANG takes it and SONiC boots from it (bgpcfgd holds the neighbor back): twin validate
    reports it (twin.stages.validate.local_addr), a bind does not refuse it."""
    path = _bound_lab(tmp_path, _set("BGP_NEIGHBOR", "10.0.0.1", {"asn": "65102", "local_addr": "10.9.9.9"}))
    sw1 = load_topology(path).node("sw1")
    assert sw1.config is not None
    assert [(str(s.ip), str(s.local_addr)) for s in sw1.config.sessions] == [("10.0.0.1", "10.9.9.9")]


@pytest.mark.parametrize(("edit", "field", "message"), BAD_FILES)
def test_bad_bound_file_names_file_field_and_fix(tmp_path: Path, edit: Any, field: str, message: str) -> None:
    path = _bound_lab(tmp_path, edit)
    with pytest.raises(PlanError) as err:
        load_topology(path)
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.message) == (str(tmp_path / "lab/sw1/config_db.json"), field, message)
    assert problem.fix


def test_bound_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = _bound_lab(tmp_path)
    (tmp_path / "lab/sw2/config_db.json").write_text('{\n  "PORT": {\n    "Ethernet0": {,}\n')
    assert _plan_problems(path) == [(str(tmp_path / "lab/sw2/config_db.json"), 3, "(json)",
                                     "not valid JSON: Expecting property name enclosed in double quotes")]


def test_bound_file_that_is_not_an_object(tmp_path: Path) -> None:
    path = _bound_lab(tmp_path)
    (tmp_path / "lab/sw2/config_db.json").write_text("[]\n")
    assert _plan_problems(path) == [(str(tmp_path / "lab/sw2/config_db.json"), 1, "(document)",
                                     "a config_db.json is a JSON object of tables")]


def test_missing_bound_file_is_reported_with_the_bind_line(tmp_path: Path) -> None:
    path = _bound_lab(tmp_path)
    (tmp_path / "lab/sw2/config_db.json").unlink()
    assert _plan_problems(path) == [(str(path), 18, "nodes.sw2.binds",
                                     f"config_db.json {tmp_path / 'lab/sw2/config_db.json'} does not exist")]


def test_every_bad_file_is_reported_at_once(tmp_path: Path) -> None:
    path = _bound_lab(tmp_path, _set("PORT", "Ethernet8", None))
    (tmp_path / "lab/sw2/config_db.json").write_text("[]\n")
    assert [(Path(f).parent.name, field) for f, _, field, _ in _plan_problems(path)] == [
        ("sw1", "PORT"), ("sw2", "(document)")]


def test_switch_without_a_file_linked_to_one_with_a_file_is_refused(tmp_path: Path) -> None:
    path = _bound_lab(tmp_path, clab="""
        name: mixed
        topology:
          nodes:
            sw1: {kind: sonic-vs, binds: ["sw1/config_db.json:/etc/sonic/config_db.json"]}
            sw2: {kind: sonic-vs}
          links:
            - endpoints: ["sw1:eth1", "sw2:eth1"]
    """)
    (problem,) = _plan_problems(path)
    assert problem[:3] == (str(path), 7, "links.0")
    assert problem[3].startswith(f"sw1 runs its own config_db.json ({tmp_path / 'lab/sw1/config_db.json'}) but sw2 "
                                 "has none")


def test_bad_bound_file_exits_2_naming_file_field_and_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from twin.cli.app import main

    path = _bound_lab(tmp_path, _set("PORT", "Ethernet8", None))
    monkeypatch.setattr(sys, "argv", ["twin", "plan", str(path)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    err = capsys.readouterr().err
    text = " ".join(err.split())
    assert "Traceback" not in err
    assert f"error: {tmp_path / 'lab/sw1/config_db.json'}: PORT: sw1 links Ethernet8" in text
    assert 'add "Ethernet8" to PORT' in text
