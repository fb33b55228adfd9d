"""twin's emulation of SONiC's bgpcfgd: the classic dialect rendered and changed as bgpcfgd does.

The configs are the hand-written classic T0 and T1 of tests/fidelity/catalog (which the fidelity tier
also renders with SONiC's own templates).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from configdb_edits import Mutation
from configdb_edits import both as _both
from configdb_edits import drop_at as _drop
from configdb_edits import set_at as _set

from twin.model.errors import TwinError
from twin.stages.configdb import ConfigDb
from twin.stages.render import bgpcfgd
from twin.stages.render.frr import render_frr
from twin.stages.render.frr_differences import FRR_DIFFERENCES, adapt
from twin.switch.config.apply import frr_lines

CATALOG = Path(__file__).resolve().parents[1] / "fidelity" / "catalog"
ASN = "65101"


def _load(name: str) -> ConfigDb:
    db: ConfigDb = json.loads((CATALOG / f"{name}.json").read_text())
    return db


@pytest.fixture
def t0() -> ConfigDb:
    return _load("t0-classic")


@pytest.fixture
def t1() -> ConfigDb:
    return _load("t1-classic")


def _lines(db: ConfigDb) -> list[str]:
    return render_frr(db).splitlines()


def _op(*lines: str) -> list[str]:
    """What apply_op pushes: the command inside `router bgp` (its `bgp suppress-fib-pending` left out on
    FRR 8.4, see twin.stages.render.frr_differences)."""
    return [f"router bgp {ASN}", *lines, "exit"]


# -- the full config ------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [
    "router bgp 65101",
    "  bgp log-neighbor-changes",
    "  no bgp default ipv4-unicast",
    "  no bgp ebgp-requires-policy",
    "  bgp bestpath as-path multipath-relax",
    "  bgp graceful-restart restart-time 240",
    "  bgp graceful-restart select-defer-time 45",
    "  bgp router-id 10.1.0.1",
    "  network 10.1.0.1/32",
    "  network 192.168.0.1/24",
    "ip prefix-list PL_LoopbackV4 permit 10.1.0.1/32",
    "ip prefix-list LOCAL_VLAN_IPV4_PREFIX seq 5 permit 192.168.0.0/24",
    "    maximum-paths 256",
    "route-map RM_SET_SRC permit 10",
    "    set src 10.1.0.1",
    "ip protocol bgp route-map RM_SET_SRC",
    "  neighbor PEER_V4 peer-group",
    "    neighbor PEER_V4 allowas-in 1",
    "    neighbor PEER_V4 soft-reconfiguration inbound",
    "    neighbor PEER_V4 route-map FROM_BGP_PEER_V4 in",
    "    neighbor PEER_V4 route-map TO_BGP_PEER_V4 out",
    "route-map FROM_BGP_PEER_V4 permit 10",
    "  call ALLOW_LIST_DEPLOYMENT_ID_0_V4",
    "route-map ALLOW_LIST_DEPLOYMENT_ID_0_V4 permit 65535",
    "  set community 5060:12345 additive",
    "route-map TO_BGP_PEER_V4 permit 100",
    "  call CHECK_IDF_ISOLATION",
    "route-map CHECK_IDF_ISOLATION permit 10",
    "  neighbor 10.0.0.0 remote-as 65100",
    "  neighbor 10.0.0.0 description t1-1",
    "  neighbor 10.0.0.0 timers 3 9",
    "  neighbor 10.0.0.0 timers connect 10",
    "    neighbor 10.0.0.0 peer-group PEER_V4",
    "    neighbor 10.0.0.0 activate",
    "  neighbor 10.0.0.2 remote-as 65100",
    "no zebra nexthop kernel enable",
    "frr defaults traditional",
])
def test_t0_lines(t0: ConfigDb, line: str) -> None:
    assert line in _lines(t0)


def test_t0_announces_loopback_and_vlan_subnet_only(t0: ConfigDb) -> None:
    assert [line for line in _lines(t0) if line.strip().startswith("network ")] == [
        "  network 10.1.0.1/32", "  network 192.168.0.1/24"]


def test_suppress_fib_pending_left_out_on_frr_8_4(t0: ConfigDb) -> None:
    """bgpd.main and every apply_op push say it; FRR 8.4 would stop announcing local routes after a flap."""
    assert "  bgp suppress-fib-pending" in bgpcfgd.main_lines(t0)
    assert not any("suppress-fib-pending" in line for line in _lines(t0))
    assert adapt(" bgp suppress-fib-pending") is None


def test_maximum_paths_never_above_what_frr_takes(t0: ConfigDb) -> None:
    assert not any("514" in line for line in _lines(t0))
    assert adapt("    maximum-paths 514") == "    maximum-paths 256"
    assert adapt("    maximum-paths 64") == "    maximum-paths 64"


def test_every_difference_has_a_reason() -> None:
    assert all(d.reason and (d.sonic or d.twin) for d in FRR_DIFFERENCES)


def test_leaf_router_has_no_allowas_in_nor_graceful_restart(t1: ConfigDb) -> None:
    lines = _lines(t1)
    assert not any("allowas-in" in line or "graceful-restart" in line for line in lines)
    assert "  neighbor 10.0.0.5 remote-as 65102" in lines


def test_leaf_router_with_bbr_enabled_allows_its_own_as_once(t1: ConfigDb) -> None:
    t1["BGP_BBR"] = {"all": {"status": "enabled"}}
    assert "    neighbor PEER_V4 allowas-in 1" in _lines(t1)


@pytest.mark.parametrize(("row", "expected"), [
    pytest.param({"keepalive": "60", "holdtime": "180"}, None, id="defaults-omitted"),
    pytest.param({}, None, id="absent-omitted"),
    pytest.param({"keepalive": "10"}, "timers 10 180", id="keepalive-only"),
    pytest.param({"holdtime": "30"}, "timers 60 30", id="holdtime-only"),
])
def test_neighbor_timers_only_when_not_60_180(t0: ConfigDb, row: dict[str, str], expected: str | None) -> None:
    session = t0["BGP_NEIGHBOR"]["10.0.0.0"]
    session.pop("keepalive")
    session.pop("holdtime")
    session.update(row)
    timers = [line.split(" ", 4)[-1] for line in _lines(t0) if line.startswith("  neighbor 10.0.0.0 timers ")
              and "connect" not in line]
    assert timers == ([expected] if expected else [])


@pytest.mark.parametrize(("admin", "default", "shut"), [
    ("down", None, True), ("up", "down", False), (None, "down", True), (None, "up", False), (None, None, False),
])
def test_shutdown_from_admin_status_or_default_bgp_status(t0: ConfigDb, admin: str | None, default: str | None,
                                                         shut: bool) -> None:
    session = t0["BGP_NEIGHBOR"]["10.0.0.0"]
    session.pop("admin_status")
    if admin:
        session["admin_status"] = admin
    if default:
        t0["DEVICE_METADATA"]["localhost"]["default_bgp_status"] = default
    assert ("  neighbor 10.0.0.0 shutdown" in _lines(t0)) is shut


def _vrf_keyed(db: ConfigDb) -> ConfigDb:
    """10.0.0.2 keyed `default|10.0.0.2`, as some classic configs write it."""
    db["BGP_NEIGHBOR"]["default|10.0.0.2"] = db["BGP_NEIGHBOR"].pop("10.0.0.2")
    return db


def test_vrf_keyed_neighbor_is_the_same_neighbor(t0: ConfigDb) -> None:
    assert _lines(_vrf_keyed(copy.deepcopy(t0))) == _lines(t0)
    assert frr_lines(_vrf_keyed(copy.deepcopy(t0)), t0) == []
    assert frr_lines(_vrf_keyed(t0), _drop("BGP_NEIGHBOR", "default|10.0.0.2")(copy.deepcopy(t0))) == _op(
        "no neighbor 10.0.0.2")


def test_neighbor_in_another_vrf_is_left_out(t0: ConfigDb) -> None:
    t0["BGP_NEIGHBOR"]["Vrf1|10.0.0.8"] = {"asn": "65100", "name": "x"}
    assert not any("10.0.0.8" in line for line in _lines(t0))


def test_neighbor_waits_for_its_local_address(t0: ConfigDb) -> None:
    """add_peer waits while local_addr is on no interface: bgpcfgd has not put it into FRR."""
    del t0["INTERFACE"]["Ethernet8|10.0.0.1/31"]
    lines = _lines(t0)
    assert not any("10.0.0.0 " in line for line in lines) and "  neighbor 10.0.0.2 remote-as 65100" in lines


@pytest.mark.parametrize(("edit", "rendered"), [
    pytest.param(_drop("LOOPBACK_INTERFACE", "Loopback0|10.1.0.1/32"), False, id="no-loopback-address"),
    pytest.param(_both(_drop("LOOPBACK_INTERFACE", "Loopback0|10.1.0.1/32"),
                       _set("DEVICE_METADATA", "localhost", "bgp_router_id", value="10.9.9.9")), True,
                 id="router-id-instead"),
    pytest.param(_drop("DEVICE_METADATA", "localhost", "type"), False, id="no-device-type"),
])
def test_neighbors_wait_for_bgpcfgd_s_dependencies(t0: ConfigDb, edit: Mutation, rendered: bool) -> None:
    edit(t0)
    lines = _lines(t0)
    assert any(line.startswith("  neighbor 10.0.0.0 ") for line in lines) is rendered
    assert ("  neighbor PEER_V4 peer-group" in lines) is rendered  # no neighbor, no peer groups or policies


def test_ipv6_neighbor_joins_peer_v6(t0: ConfigDb) -> None:
    t0["INTERFACE"]["Ethernet8|fc00::1/126"] = {}
    t0["BGP_NEIGHBOR"]["fc00::2"] = {"asn": "65100", "name": "t1-1-v6", "local_addr": "fc00::1"}
    lines = _lines(t0)
    assert lines.index("  address-family ipv6", lines.index("  neighbor fc00::2 remote-as 65100")) < lines.index(
        "    neighbor fc00::2 peer-group PEER_V6")


def test_vnet_vlan_is_not_announced(t0: ConfigDb) -> None:
    t0["VLAN_INTERFACE"]["Vlan1000"] = {"vnet_name": "Vnet1"}
    assert not any("192.168.0" in line for line in _lines(t0))


@pytest.mark.parametrize("edit", [
    _set("DEVICE_METADATA", "localhost", "switch_type", value="voq"),
    _set("DEVICE_METADATA", "localhost", "sub_role", value="FrontEnd"),
    _set("DEVICE_METADATA", "localhost", "type", value="UpperSpineRouter"),
    _set("BGP_DEVICE_GLOBAL", value={"STATE": {"tsa_enabled": "true"}}),
])
def test_configs_beyond_the_emulation_are_refused_with_the_fix(t0: ConfigDb, edit: Mutation) -> None:
    edit(t0)
    with pytest.raises(TwinError, match="SONiC's own templates"):
        render_frr(t0)


def test_template_functions_take_bgpcfgd_s_variables() -> None:
    assert bgpcfgd.instance_lines("10.10.10.10", {"asn": "555", "name": "x", "rrclient": "1"})[-3:] == [
        "    neighbor 10.10.10.10 route-reflector-client", "    neighbor 10.10.10.10 activate",
        "  exit-address-family"]
    assert "  set community no-export additive" in bgpcfgd.policies_lines(allow_list_default_action="deny")


# -- frr_lines: what bgpcfgd sends on a CONFIG_DB change -----------------------------------------


def _pair(base: ConfigDb, old: Mutation, new: Mutation) -> tuple[ConfigDb, ConfigDb]:
    a, b = copy.deepcopy(base), copy.deepcopy(base)
    old(a)
    new(b)
    return a, b


def same(db: ConfigDb) -> None:
    """No change."""


NB = "10.0.0.0"


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(same, same, [], id="identical"),
    pytest.param(same, _drop("BGP_NEIGHBOR", NB), _op("no neighbor 10.0.0.0"), id="neighbor-deleted"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "admin_status", value="down"), _op("neighbor 10.0.0.0 shutdown"),
                 id="admin-down"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "admin_status", value="down"), same, _op("no neighbor 10.0.0.0 shutdown"),
                 id="admin-up"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "name", value="renamed"), _op("no neighbor 10.0.0.0 shutdown"),
                 id="description-ignored-admin-status-reapplied"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "holdtime", value="30"), _op("no neighbor 10.0.0.0 shutdown"),
                 id="timers-ignored"),
    pytest.param(same, _both(_drop("BGP_NEIGHBOR", NB, "admin_status"), _set("BGP_NEIGHBOR", NB, "asn", value="65200")),
                 [], id="change-without-admin-status-ignored"),
    pytest.param(same, _set("DEVICE_METADATA", "localhost", "type", value="LeafRouter"), [],
                 id="device-type-read-only-at-next-add"),
    pytest.param(same, _set("VLAN_INTERFACE", "Vlan1000|192.168.1.1/24", value={}), [],
                 id="bgpd-main-rendered-only-at-start"),
    pytest.param(same, _set("PORT", "Ethernet0", "mtu", value="1500"), [], id="port-change-is-kernel-only"),
])
def test_frr_lines_classic(t0: ConfigDb, old: Mutation, new: Mutation, expected: list[str]) -> None:
    assert frr_lines(*_pair(t0, old, new)) == expected


def test_added_neighbor_sends_policies_peer_groups_and_instance(t0: ConfigDb) -> None:
    """add_peer pushes the policies and peer groups again for every neighbor, then the neighbor."""
    old, new = _pair(t0, _drop("BGP_NEIGHBOR", NB), same)
    lines = frr_lines(old, new)
    assert lines is not None
    rendered = _lines(new)
    body = rendered[rendered.index("ip prefix-list DEFAULT_IPV4 permit 0.0.0.0/0"):rendered.index("end") - 1]
    block = body[:body.index("router bgp 65101", body.index("router bgp 65101") + 1)]
    start = rendered.index("  neighbor 10.0.0.0 remote-as 65100") - 1
    neighbor = rendered[start:rendered.index("exit", start) + 1]
    assert lines == block + neighbor
    assert neighbor[0] == "router bgp 65101" and neighbor[-2:] == ["  exit-address-family", "exit"]


def test_neighbor_added_once_its_interface_is_up(t0: ConfigDb) -> None:
    old, new = _pair(t0, _drop("INTERFACE", "Ethernet8|10.0.0.1/31"), same)
    lines = frr_lines(old, new)
    assert lines is not None and "  neighbor 10.0.0.0 remote-as 65100" in lines
    assert not any("10.0.0.2" in line for line in lines)


@pytest.mark.parametrize("new", [
    pytest.param(_set("DEVICE_METADATA", "localhost", "bgp_asn", value="65999"), id="own-asn"),
    pytest.param(_set("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config", value="true"), id="daemon"),
])
def test_frr_lines_classic_reload(t0: ConfigDb, new: Mutation) -> None:
    assert frr_lines(*_pair(t0, same, new)) is None


def test_set_src_pushed_when_loopback0_first_comes_up(t0: ConfigDb) -> None:
    old, new = _pair(t0, _drop("LOOPBACK_INTERFACE", "Loopback0|10.1.0.1/32"), same)
    lines = frr_lines(old, new)
    assert lines is not None
    assert lines[:3] == ["route-map RM_SET_SRC permit 10", "    set src 10.1.0.1",
                         "ip protocol bgp route-map RM_SET_SRC"]
    assert "  neighbor 10.0.0.0 remote-as 65100" in lines  # the neighbors were waiting for Loopback0


def _bbr(prefix: str) -> list[str]:
    return ["router bgp 65100", " address-family ipv4", f"  {prefix}neighbor PEER_V4 allowas-in 1",
            " exit-address-family", " address-family ipv6", f"  {prefix}neighbor PEER_V6 allowas-in 1",
            " exit-address-family", "exit"]


def test_bbr_status_change_toggles_allowas_in(t1: ConfigDb) -> None:
    """BBRMgr on a SET of BGP_BBR|all: allowas-in on or off for the peer groups constants.yml names."""
    old, new = _pair(t1, same, _set("BGP_BBR", value={"all": {"status": "enabled"}}))
    assert frr_lines(old, new) == _bbr("")
    disabled = _set("BGP_BBR", value={"all": {"status": "disabled"}})(copy.deepcopy(new))
    assert frr_lines(new, disabled) == _bbr("no ")


def test_bbr_table_removed_changes_nothing_in_frr(t1: ConfigDb) -> None:
    """BBRMgr's DEL handler only logs: allowas-in stays as it was."""
    old, new = _pair(t1, _set("BGP_BBR", value={"all": {"status": "enabled"}}), same)
    assert frr_lines(old, new) == []


def test_device_neighbor_metadata_changes_nothing(t0: ConfigDb) -> None:
    """bgpcfgd stores DEVICE_NEIGHBOR_METADATA (BGPDataBaseMgr); a peer manager reads it only with
    constants.yml bgp.use_neighbors_meta, which SONiC ships false, and no template reads it."""
    db = copy.deepcopy(t0)
    db["DEVICE_NEIGHBOR_METADATA"] = {"t1-1": {"hwsku": "Arista-VM", "mgmt_addr": "10.64.247.200",
                                               "type": "LeafRouter"}}
    assert not bgpcfgd.SONIC_CONSTANTS["bgp"].get("use_neighbors_meta")
    assert _lines(db) == _lines(t0)
    assert frr_lines(t0, db) == []
    del db["DEVICE_NEIGHBOR_METADATA"]["t1-1"]
    assert frr_lines(t0, db) == []
