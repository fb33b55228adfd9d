"""Render stage: SONiC config_db.json from the plan, frr.conf from config_db, kernel and host set-up."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from twin.kinds.host import server_lines
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology
from twin.stages.render.config_db import build_config_db
from twin.stages.render.frr import render_frr
from twin.stages.render.sonic_templates import find_templates
from twin.switch.config.kernel import kernel_lines

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"
ConfigDb = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def clos() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "clos-4x8.yaml"))


@pytest.fixture(scope="module")
def rail() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "rail-2x8.yaml"))


@pytest.fixture
def leaf1_db(clos: Plan) -> ConfigDb:
    return build_config_db(clos, clos.node("leaf1"))


@pytest.fixture
def leaf1_frr(leaf1_db: ConfigDb) -> str:
    return render_frr(leaf1_db)


# -- config_db.json -----------------------------------------------------------------------------


def test_interface_table_has_base_and_ip_keys(clos: Plan, leaf1_db: ConfigDb) -> None:
    leaf = clos.node("leaf1")
    want = {key for i in leaf.interfaces if i.address is not None for key in (i.name, f"{i.name}|{i.address}")}
    assert len(want) == 12
    assert set(leaf1_db["INTERFACE"]) == want
    assert all(v == {} for v in leaf1_db["INTERFACE"].values())


@pytest.mark.parametrize("key", ["Ethernet128", "Ethernet128|10.0.0.65/31", "Ethernet0", "Ethernet0|10.2.0.0/31"])
def test_interface_keys_of_leaf1(leaf1_db: ConfigDb, key: str) -> None:
    assert key in leaf1_db["INTERFACE"]


def test_loopback_interface(leaf1_db: ConfigDb) -> None:
    assert leaf1_db["LOOPBACK_INTERFACE"] == {"Loopback0": {}, "Loopback0|10.1.4.1/32": {}}


def test_bgp_neighbors_keyed_by_vrf_and_ip(clos: Plan, leaf1_db: ConfigDb) -> None:
    leaf = clos.node("leaf1")
    assert set(leaf1_db["BGP_NEIGHBOR"]) == {f"default|{nb.ip}" for nb in leaf.neighbors}
    for nb in leaf.neighbors:
        row = leaf1_db["BGP_NEIGHBOR"][f"default|{nb.ip}"]
        assert {k: row[k] for k in ("asn", "name", "local_addr", "bfd")} == {
            "asn": "65100", "name": nb.name, "local_addr": str(nb.local_addr), "bfd": "true"}


def test_bgp_neighbor_row_of_spine1(leaf1_db: ConfigDb) -> None:
    row = leaf1_db["BGP_NEIGHBOR"]["default|10.0.0.64"]
    assert row == {"asn": "65100", "name": "spine1", "local_addr": "10.0.0.65", "holdtime": "9", "keepalive": "3",
                   "admin_status": "up", "peer_group_name": "PEER_V4", "bfd": "true", "conn_retry": "2"}


@pytest.mark.parametrize(("node", "device_type", "asn"), [
    ("leaf1", "ToRRouter", "65101"), ("leaf8", "ToRRouter", "65108"), ("spine1", "LeafRouter", "65100"),
])
def test_device_metadata(clos: Plan, node: str, device_type: str, asn: str) -> None:
    meta = build_config_db(clos, clos.node(node))["DEVICE_METADATA"]["localhost"]
    assert (meta["hostname"], meta["type"], meta["bgp_asn"], meta["docker_routing_config_mode"]) == (
        node, device_type, asn, "unified")


def test_bgp_globals(leaf1_db: ConfigDb) -> None:
    assert leaf1_db["BGP_GLOBALS"]["default"]["local_asn"] == "65101"
    assert leaf1_db["BGP_GLOBALS"]["default"]["router_id"] == "10.1.4.1"
    assert leaf1_db["BGP_GLOBALS_AF"] == {"default|ipv4_unicast": {"max_ebgp_paths": "4"}}
    assert set(leaf1_db["BGP_GLOBALS_AF_NETWORK"]) == {
        "default|ipv4_unicast|10.1.4.1/32", "default|ipv4_unicast|10.2.0.0/31", "default|ipv4_unicast|10.2.0.2/31"}


def test_port_rows_are_the_hwsku_port_config_rows(leaf1_db: ConfigDb) -> None:
    """Arista-7060X6-64PE-B-O128's port_config.ini: Ethernet128 is the first half of front-panel port 17."""
    assert leaf1_db["PORT"]["Ethernet128"] == {
        "lanes": "153,154,155,156", "alias": "etp17a", "index": "17", "speed": "400000", "fec": "rs",
        "mtu": "9100", "admin_status": "up", "description": "spine1:Ethernet0"}
    meta = leaf1_db["DEVICE_METADATA"]["localhost"]
    assert (meta["hwsku"], meta["platform"]) == ("Arista-7060X6-64PE-B-O128", "x86_64-arista_7060x6_64pe_b")


def test_mgmt_interface_keeps_the_management_address(clos: Plan, leaf1_db: ConfigDb) -> None:
    mgmt = clos.node("leaf1").mgmt
    assert mgmt is not None and mgmt.network == clos.fabric.mgmt_pool
    assert leaf1_db["MGMT_INTERFACE"] == {f"eth0|{mgmt}": {"gwaddr": "172.20.20.1"}}
    assert leaf1_db["MGMT_PORT"] == {"eth0": {"alias": "eth0", "admin_status": "up"}}


def test_peer_group_is_activated_with_a_policy_both_ways(leaf1_db: ConfigDb) -> None:
    """frrcfgd activates only through the AF tables, and eBGP carries nothing without route-maps."""
    assert leaf1_db["BGP_PEER_GROUP_AF"] == {"default|PEER_V4|ipv4_unicast": {
        "admin_status": "up", "route_map_in": ["FROM_BGP_PEER_V4"], "route_map_out": ["TO_BGP_PEER_V4"]}}
    assert set(leaf1_db["ROUTE_MAP_SET"]) == {"FROM_BGP_PEER_V4", "TO_BGP_PEER_V4"}
    assert leaf1_db["ROUTE_MAP"] == {"FROM_BGP_PEER_V4|100": {"route_operation": "permit"},
                                     "TO_BGP_PEER_V4|100": {"route_operation": "permit"}}


def test_lossless_priority_groups(leaf1_db: ConfigDb) -> None:
    """What buffermgrd needs for PGs 3-4: pools, the pg_profile_lookup.ini profile, cable lengths."""
    profile = leaf1_db["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]
    assert profile == {"pool": "ingress_lossless_pool", "size": "18796", "xon": "0", "xoff": "445770",
                       "dynamic_th": "0", "xon_offset": "3556"}
    assert set(leaf1_db["BUFFER_POOL"]) == {"ingress_lossless_pool", "egress_lossless_pool"}
    for port in leaf1_db["PORT"]:
        assert leaf1_db["BUFFER_PG"][f"{port}|3-4"] == {"profile": "pg_lossless_400000_5m_profile"}
        assert leaf1_db["CABLE_LENGTH"]["AZURE"][port] == "5m"
        assert leaf1_db["PORT_QOS_MAP"][port]["pfc_enable"] == "3,4"
        assert leaf1_db["QUEUE"][f"{port}|3"] == {"scheduler": "scheduler.1", "wred_profile": "ROCE_LOSSLESS"}


def test_no_bfd_when_bfd_disabled(tmp_path: Path) -> None:
    path = tmp_path / "nobfd.yaml"
    path.write_text("name: nobfd\nkind: clos\nclos: {spines: 2, leaves: 2}\nfabric: {bfd: {enabled: false}}\n")
    plan = plan_topology(load_topology(path))
    db = build_config_db(plan, plan.node("leaf1"))
    assert "BFD_PROFILE" not in db
    assert all("bfd" not in row for row in db["BGP_NEIGHBOR"].values())
    assert "bfd" not in render_frr(db)


# -- frr.conf -----------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [
    "router bgp 65101",
    " bgp router-id 10.1.4.1",
    " neighbor PEER_V4 peer-group",
    "route-map FROM_BGP_PEER_V4 permit 100",
    "route-map TO_BGP_PEER_V4 permit 100",
    "  neighbor PEER_V4 route-map FROM_BGP_PEER_V4 in",
    "  neighbor PEER_V4 route-map TO_BGP_PEER_V4 out",
    "  neighbor PEER_V4 activate",
    " bgp bestpath as-path multipath-relax",
    "  maximum-paths 4",
    " no bgp default ipv4-unicast",
    "frr defaults traditional",
    " timers bgp 3 9",
    " neighbor 10.0.0.64 remote-as 65100",
    " neighbor 10.0.0.64 peer-group PEER_V4",
    " neighbor 10.0.0.64 description spine1",
    " neighbor 10.0.0.64 bfd",
    " neighbor 10.0.0.64 update-source 10.0.0.65",
])
def test_frr_conf_lines(leaf1_frr: str, line: str) -> None:
    assert line in leaf1_frr.splitlines()


def test_frr_network_per_af_network_entry(leaf1_db: ConfigDb, leaf1_frr: str) -> None:
    networks = [line.split()[1] for line in leaf1_frr.splitlines() if line.startswith("  network ")]
    assert networks == [key.split("|")[2] for key in leaf1_db["BGP_GLOBALS_AF_NETWORK"]]
    assert len(networks) == 3


def test_frr_neighbors_in_ip_order(leaf1_frr: str) -> None:
    seen = re.findall(r"^ neighbor (\S+) remote-as", leaf1_frr, re.M)
    assert seen == ["10.0.0.64", "10.0.0.66", "10.0.0.68", "10.0.0.70"]


def test_frr_neighbor_shutdown_when_admin_down(leaf1_db: ConfigDb) -> None:
    db = copy.deepcopy(leaf1_db)
    db["BGP_NEIGHBOR"]["default|10.0.0.66"]["admin_status"] = "down"
    lines = render_frr(db).splitlines()
    assert [line for line in lines if line.endswith(" shutdown")] == [" neighbor 10.0.0.66 shutdown"]


def test_frr_no_shutdown_when_admin_up(leaf1_frr: str) -> None:
    assert "shutdown" not in leaf1_frr


def test_frr_has_no_invented_policy_or_activation(leaf1_frr: str) -> None:
    """Nothing config_db did not ask for: no `bgp default ipv4-unicast`, no `no bgp ebgp-requires-policy`."""
    lines = leaf1_frr.splitlines()
    assert " bgp default ipv4-unicast" not in lines and " no bgp ebgp-requires-policy" not in lines
    assert not any("bfd profile" in line or line.startswith("bfd") for line in lines)


def test_frr_without_af_activation_activates_nothing(leaf1_db: ConfigDb) -> None:
    db = copy.deepcopy(leaf1_db)
    del db["BGP_PEER_GROUP_AF"]
    text = render_frr(db)
    assert "activate" not in text and " route-map FROM_BGP_PEER_V4 in" not in text
    assert " no bgp default ipv4-unicast" in text.splitlines()


def test_frr_bfd_follows_the_neighbor_field(leaf1_db: ConfigDb) -> None:
    db = copy.deepcopy(leaf1_db)
    for row in db["BGP_NEIGHBOR"].values():
        row.pop("bfd")
    text = render_frr(db)
    assert "bfd" not in text
    assert "router bgp 65101" in text


def test_frr_max_paths_follows_config_db(leaf1_db: ConfigDb) -> None:
    db = copy.deepcopy(leaf1_db)
    db["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] = "8"
    assert "  maximum-paths 8" in render_frr(db).splitlines()


def test_frrcfgd_without_bgp_globals_runs_no_bgp(leaf1_db: ConfigDb) -> None:
    """frrcfgd renders `router bgp` from BGP_GLOBALS|default local_asn alone, not DEVICE_METADATA's bgp_asn."""
    db = copy.deepcopy(leaf1_db)
    del db["BGP_GLOBALS"]
    assert not any(line.startswith("router bgp") for line in render_frr(db).splitlines())


def test_classic_router_id_falls_back_to_loopback(leaf1_db: ConfigDb) -> None:
    """bgpcfgd's bgpd.main: `router bgp` from DEVICE_METADATA bgp_asn, router-id from Loopback0 (no BGP_GLOBALS)."""
    db = copy.deepcopy(leaf1_db)
    del db["BGP_GLOBALS"]
    db["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] = "false"
    lines = render_frr(db).splitlines()
    assert "router bgp 65101" in lines
    assert "  bgp router-id 10.1.4.1" in lines
    assert "  network 10.1.4.1/32" in lines


def test_classic_config_of_a_generated_leaf_is_bgpcfgd_s(leaf1_db: ConfigDb) -> None:
    """The same tables under bgpcfgd: its general peer templates, not frrcfgd's peer group or BFD."""
    db = copy.deepcopy(leaf1_db)
    db["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] = "false"
    lines = render_frr(db).splitlines()
    assert "    neighbor 10.0.0.64 peer-group PEER_V4" in lines and "    neighbor 10.0.0.64 activate" in lines
    assert "    neighbor PEER_V4 allowas-in 1" in lines  # a ToRRouter
    assert "  neighbor 10.0.0.64 timers connect 10" in lines and "  neighbor 10.0.0.64 timers 3 9" in lines
    assert not any(line.endswith(" bfd") or "update-source" in line for line in lines)
    assert "    maximum-paths 256" in lines  # constants.yml's 514, as FRR 8.4 takes it


# -- SONiC's own templates ----------------------------------------------------------------------


def test_find_templates_without_flag_or_variable_is_twin_s_renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TWIN_SONIC_TEMPLATES", raising=False)
    assert find_templates(None) is None


@pytest.mark.parametrize("source", ["flag", "variable"])
def test_find_templates_names_the_folder_and_what_it_lacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           source: str) -> None:
    (tmp_path / "usr/share/sonic/templates").mkdir(parents=True)
    (tmp_path / "usr/share/sonic/templates/gen_frr.conf.j2").write_text("")
    monkeypatch.setenv("TWIN_SONIC_TEMPLATES", str(tmp_path))
    with pytest.raises(TwinError) as err:
        find_templates(tmp_path if source == "flag" else None)
    text = str(err.value)
    assert str(tmp_path) in text and "usr/local/sonic/frrcfgd/frr.conf.j2" in text and "etc/sonic/constants.yml" in text
    assert "gen_frr.conf.j2," not in text  # present, so not listed
    assert ("--sonic-templates" if source == "flag" else "$TWIN_SONIC_TEMPLATES") in text


def test_find_templates_flag_wins_over_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWIN_SONIC_TEMPLATES", str(tmp_path / "elsewhere"))
    with pytest.raises(TwinError, match="missing-flag-folder"):
        find_templates(tmp_path / "missing-flag-folder")


# -- kernel set-up of a switch ------------------------------------------------------------------


def test_kernel_lines_leaf1(leaf1_db: ConfigDb) -> None:
    lines = kernel_lines(leaf1_db)
    assert lines[0] == "link set dev lo up"
    assert "link set dev Ethernet128 mtu 9100 up" in lines
    assert "address add 10.0.0.65/31 dev Ethernet128" in lines
    assert "address add 10.2.0.0/31 dev Ethernet0" in lines
    assert "address add 10.1.4.1/32 dev lo" in lines
    assert len([line for line in lines if line.startswith("link set dev Ethernet")]) == 6
    assert len([line for line in lines if line.startswith("address add")]) == 7


def test_kernel_lines_map_port_names(leaf1_db: ConfigDb) -> None:
    lines = kernel_lines(leaf1_db, {"Ethernet128": "e128"})
    assert "link set dev e128 mtu 9100 up" in lines
    assert "address add 10.0.0.65/31 dev e128" in lines
    assert not any("Ethernet128" in line for line in lines)


def test_kernel_lines_admin_down(leaf1_db: ConfigDb) -> None:
    db = copy.deepcopy(leaf1_db)
    db["PORT"]["Ethernet0"]["admin_status"] = "down"
    assert "link set dev Ethernet0 mtu 9100 down" in kernel_lines(db)


# -- kernel set-up of a GPU server --------------------------------------------------------------


@pytest.fixture
def rail_server_lines(rail: Plan) -> list[str]:
    return server_lines(rail.node("pod1-server1"))


@pytest.mark.parametrize("nic", range(1, 9))
def test_server_per_nic_table_and_rule(rail: Plan, rail_server_lines: list[str], nic: int) -> None:
    iface = rail.node("pod1-server1").iface(f"eth{nic}")
    assert iface.address is not None and iface.peer_address is not None
    table = 100 + nic
    for line in (f"link set dev eth{nic} mtu 9100 up",
                 f"address add {iface.address} dev eth{nic}",
                 f"route add default via {iface.peer_address.ip} dev eth{nic} table {table}",
                 f"rule add from {iface.address.ip} table {table} pref {1000 + nic}"):
        assert line in rail_server_lines


def test_server_one_main_default_route(rail: Plan, rail_server_lines: list[str]) -> None:
    main = [line for line in rail_server_lines if line.startswith("route add default") and " table " not in line]
    eth1 = rail.node("pod1-server1").iface("eth1")
    assert eth1.peer_address is not None
    assert main == [f"route add default via {eth1.peer_address.ip} dev eth1"]


def test_server_lines_counts(rail_server_lines: list[str]) -> None:
    assert len([line for line in rail_server_lines if line.startswith("rule add")]) == 8
    assert len([line for line in rail_server_lines if " table " in line and line.startswith("route")]) == 8
