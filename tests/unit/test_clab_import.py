"""Import of containerlab topology files (.clab.yml) into twin's Topology."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from twin.errors import PlanError
from twin.plan.allocate import plan_topology
from twin.topology.clab import import_clab, sonic_iface
from twin.topology.loader import load_topology
from twin.topology.models import Endpoint, Topology
from twin.topology.source import load_yaml

# The repo ships containerlab's frr01 example unchanged (a copy of shared/reference/containerlab).
FRR01 = (Path(__file__).parents[2] / "topologies/frr01/frr01.clab.yml").resolve()
SHARED_FRR01 = (Path(os.environ.get("TWIN_SONIC_REFERENCE") or Path(__file__).parents[3] / "shared/reference")
                / "containerlab/lab-examples/frr01").resolve()

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
