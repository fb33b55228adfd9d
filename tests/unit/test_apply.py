"""Incremental apply: only what changed between two CONFIG_DBs reaches the kernel and FRR."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from configdb_edits import Mutation
from configdb_edits import both as _both
from configdb_edits import drop_at as _drop
from configdb_edits import set_at as _set

from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr
from twin.switch.config.apply import frr_lines
from twin.switch.config.kernel import kernel_changes

NB = "default|10.0.0.64"
AF = "default|ipv4_unicast"
ASN = "65101"



def same(db: ConfigDb) -> None:
    """No change."""


def _bgp(*lines: str) -> list[str]:
    return [f"router bgp {ASN}", *lines, "exit"]


def _af(*lines: str) -> list[str]:
    return _bgp(" address-family ipv4 unicast", *lines, " exit-address-family")


NEIGHBOR_64 = [
    " neighbor 10.0.0.64 remote-as 65100",
    " neighbor 10.0.0.64 peer-group PEER_V4",
    " neighbor 10.0.0.64 description spine1",
    " neighbor 10.0.0.64 bfd",
    " neighbor 10.0.0.64 update-source 10.0.0.65",
    " neighbor 10.0.0.64 timers 3 9",
    " neighbor 10.0.0.64 timers connect 2",
]


def _pair(base: ConfigDb, old: Mutation, new: Mutation) -> tuple[ConfigDb, ConfigDb]:
    a, b = copy.deepcopy(base), copy.deepcopy(base)
    old(a)
    new(b)
    assert configdb.validate(a) == [] and configdb.validate(b) == [], "test data must be valid CONFIG_DBs"
    return a, b


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "name", value="spine1-new"),
                 _bgp(" neighbor 10.0.0.64 description spine1-new"), id="description"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "admin_status", value="down"),
                 _bgp(" neighbor 10.0.0.64 shutdown"), id="admin-down"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "admin_status", value="down"), same,
                 _bgp(" no neighbor 10.0.0.64 shutdown"), id="admin-up"),
    pytest.param(same, _drop("BGP_NEIGHBOR", NB), _bgp(" no neighbor 10.0.0.64"), id="neighbor-removed"),
    pytest.param(_drop("BGP_NEIGHBOR", NB), same, _bgp(*NEIGHBOR_64), id="neighbor-added"),
    pytest.param(_both(_drop("BGP_NEIGHBOR", NB), _drop("BGP_NEIGHBOR", "default|10.0.0.66")), same,
                 _bgp(*NEIGHBOR_64, *(line.replace("10.0.0.64", "10.0.0.66").replace("spine1", "spine2")
                                      .replace(".65", ".67") for line in NEIGHBOR_64)), id="two-neighbors-added"),
    pytest.param(_drop("BGP_NEIGHBOR", NB), _set("BGP_NEIGHBOR", NB, "bfd", value="false"),
                 _bgp(*(line for line in NEIGHBOR_64 if not line.endswith(" bfd"))),
                 id="neighbor-added-without-bfd"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "asn", value="65200"),
                 _bgp(" no neighbor 10.0.0.64", *(line.replace("65100", "65200") for line in NEIGHBOR_64)),
                 id="neighbor-asn-change"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "bfd", value="false"), _bgp(" no neighbor 10.0.0.64 bfd"),
                 id="bfd-off"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "bfd", value="false"), same, _bgp(" neighbor 10.0.0.64 bfd"),
                 id="bfd-on"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "holdtime", value="30"), _bgp(" neighbor 10.0.0.64 timers 3 30"),
                 id="neighbor-timers"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "conn_retry", value="5"),
                 _bgp(" neighbor 10.0.0.64 timers connect 5"), id="connect-timer"),
    pytest.param(same, _drop("BGP_NEIGHBOR", NB, "conn_retry"), _bgp(" no neighbor 10.0.0.64 timers connect"),
                 id="connect-timer-removed"),
    pytest.param(same, _set("BGP_GLOBALS", "default", "keepalive", value="1"), _bgp(" timers bgp 1 9"),
                 id="global-timers"),
    pytest.param(same, _set("BGP_PEER_GROUP", "default|PEER_V4", "name", value="FABRIC"),
                 _bgp(" neighbor PEER_V4 description FABRIC"), id="peer-group-description"),
    pytest.param(same, _drop("BGP_PEER_GROUP", "default|PEER_V4", "name"),
                 _bgp(" no neighbor PEER_V4 description PEER_V4"), id="peer-group-description-removed"),
    pytest.param(same, _set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.9.0.0/24", value={}),
                 _af("  network 10.9.0.0/24"), id="network-added"),
    pytest.param(same, _drop("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.2.0.2/31"),
                 _af("  no network 10.2.0.2/31"), id="network-removed"),
    pytest.param(same, _set("BGP_GLOBALS_AF", AF, "max_ebgp_paths", value="8"), _af("  maximum-paths 8"),
                 id="maximum-paths"),
    pytest.param(same, _drop("BGP_GLOBALS_AF", AF, "max_ebgp_paths"), _af("  no maximum-paths"),
                 id="maximum-paths-removed"),
    pytest.param(same, _drop("BGP_PEER_GROUP_AF", "default|PEER_V4|ipv4_unicast"),
                 _af("  no neighbor PEER_V4 activate", "  no neighbor PEER_V4 route-map FROM_BGP_PEER_V4 in",
                     "  no neighbor PEER_V4 route-map TO_BGP_PEER_V4 out"), id="af-activation-removed"),
    pytest.param(_drop("BGP_PEER_GROUP_AF", "default|PEER_V4|ipv4_unicast"), same,
                 _af("  neighbor PEER_V4 activate", "  neighbor PEER_V4 route-map FROM_BGP_PEER_V4 in",
                     "  neighbor PEER_V4 route-map TO_BGP_PEER_V4 out"), id="af-activation-added"),
    pytest.param(same, _set("BGP_PEER_GROUP_AF", "default|PEER_V4|ipv4_unicast", "admin_status", value="down"),
                 _af("  no neighbor PEER_V4 activate"), id="af-deactivated"),
    pytest.param(same, _set("BGP_NEIGHBOR_AF", value={f"{NB}|ipv4_unicast": {"admin_status": "down"}}),
                 _af("  no neighbor 10.0.0.64 activate"), id="neighbor-af-deactivated"),
    pytest.param(same, _set("ROUTE_MAP", "TO_BGP_PEER_V4|100", "route_operation", value="deny"),
                 ["no route-map TO_BGP_PEER_V4 permit 100", "route-map TO_BGP_PEER_V4 deny 100", "exit"],
                 id="route-map-to-deny"),
    pytest.param(same, _set("DEVICE_METADATA", "localhost", "bgp_asn", value="65999"), [],
                 id="metadata-asn-shadowed-by-bgp-globals"),
    pytest.param(same, _set("PORT", "Ethernet0", "mtu", value="1500"), [], id="port-change-is-kernel-only"),
    pytest.param(same, same, [], id="identical"),
])
def test_frr_lines(leaf1_original: ConfigDb, old: Mutation, new: Mutation, expected: list[str]) -> None:
    assert frr_lines(*_pair(leaf1_original, old, new)) == expected


@pytest.mark.parametrize("new", [
    pytest.param(_set("BGP_GLOBALS", "default", "local_asn", value="65999"), id="own-asn"),
    pytest.param(_set("BGP_GLOBALS", "default", "router_id", value="10.1.4.99"), id="router-id"),
    pytest.param(_both(_drop("BGP_GLOBALS", "default", "local_asn"),
                       _set("DEVICE_METADATA", "localhost", "bgp_asn", value="65999")), id="own-asn-from-metadata"),
])
def test_frr_lines_own_identity_change_needs_reload(leaf1_original: ConfigDb, new: Mutation) -> None:
    assert frr_lines(*_pair(leaf1_original, same, new)) is None


def test_description_change_touches_one_neighbor_line(leaf1_original: ConfigDb) -> None:
    old, new = _pair(leaf1_original, same, _set("BGP_NEIGHBOR", NB, "name", value="spine1-renamed"))
    lines = frr_lines(old, new)
    assert lines is not None
    assert lines[0] == f"router bgp {ASN}" and lines[-1] == "exit"
    assert [line for line in lines if "neighbor" in line] == [" neighbor 10.0.0.64 description spine1-renamed"]


def test_added_neighbor_lines_match_the_rendered_config(leaf1_original: ConfigDb) -> None:
    """An incremental add says what a full render of the new config says about that neighbor."""
    old, new = _pair(leaf1_original, _drop("BGP_NEIGHBOR", NB), same)
    lines = frr_lines(old, new)
    assert lines is not None
    rendered = [line for line in render_frr(new).splitlines() if line.startswith(" neighbor 10.0.0.64 ")]
    assert lines[1:-1] == rendered


def test_peer_group_a_valid_config_names_is_defined(leaf1_original: ConfigDb) -> None:
    new = copy.deepcopy(leaf1_original)
    new["BGP_PEER_GROUP"]["default|OTHER"] = {"name": "OTHER"}
    new["BGP_NEIGHBOR"][NB]["peer_group_name"] = "OTHER"
    lines = frr_lines(leaf1_original, new)
    assert lines is not None
    assert configdb.validate(new) != [] or " neighbor OTHER peer-group" in lines


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(same, _set("PORT", "Ethernet0", "mtu", value="1500"), ["link set dev Ethernet0 mtu 1500"],
                 id="mtu"),
    pytest.param(same, _drop("PORT", "Ethernet0", "mtu"), [], id="mtu-removed-leaves-kernel-alone"),
    pytest.param(same, _set("PORT", "Ethernet0", "admin_status", value="down"), ["link set dev Ethernet0 down"],
                 id="admin-down"),
    pytest.param(_set("PORT", "Ethernet0", "admin_status", value="down"), same, ["link set dev Ethernet0 up"],
                 id="admin-up"),
    pytest.param(_set("PORT", "Ethernet0", "admin_status", value="up"), _drop("PORT", "Ethernet0", "admin_status"),
                 ["link set dev Ethernet0 down"], id="admin-status-removed-means-down-as-sonic-yang"),
    pytest.param(same, _both(_set("PORT", "Ethernet4", "mtu", value="1500"),
                             _set("PORT", "Ethernet4", "admin_status", value="down")),
                 ["link set dev Ethernet4 mtu 1500", "link set dev Ethernet4 down"], id="mtu-and-admin"),
    pytest.param(same, _drop("INTERFACE", "Ethernet0|10.2.0.0/31"), ["address del 10.2.0.0/31 dev Ethernet0"],
                 id="address-del"),
    pytest.param(same, _set("INTERFACE", "Ethernet0|10.2.0.4/31", value={}), ["address add 10.2.0.4/31 dev Ethernet0"],
                 id="address-add"),
    pytest.param(same, _both(_drop("INTERFACE", "Ethernet0|10.2.0.0/31"),
                             _set("INTERFACE", "Ethernet0|10.2.0.4/31", value={})),
                 ["address del 10.2.0.0/31 dev Ethernet0", "address add 10.2.0.4/31 dev Ethernet0"],
                 id="address-change-deletes-first"),
    pytest.param(same, _set("LOOPBACK_INTERFACE", "Loopback0|10.1.4.9/32", value={}),
                 ["address add 10.1.4.9/32 dev lo"], id="loopback-address-on-lo"),
    pytest.param(same, _set("BGP_NEIGHBOR", NB, "name", value="x"), [], id="bgp-change-is-frr-only"),
    pytest.param(same, same, [], id="identical"),
])
def test_kernel_lines(leaf1_original: ConfigDb, old: Mutation, new: Mutation, expected: list[str]) -> None:
    assert kernel_changes(*_pair(leaf1_original, old, new)) == expected


@pytest.mark.parametrize(("new", "expected"), [
    pytest.param(_set("PORT", "Ethernet0", "mtu", value="1500"), ["link set dev eth1 mtu 1500"], id="link"),
    pytest.param(_set("INTERFACE", "Ethernet0|10.2.0.4/31", value={}), ["address add 10.2.0.4/31 dev eth1"],
                 id="address"),
    pytest.param(_set("PORT", "Ethernet4", "mtu", value="1500"), ["link set dev Ethernet4 mtu 1500"],
                 id="unmapped-port-keeps-its-name"),
])
def test_kernel_lines_use_the_interface_map(leaf1_original: ConfigDb, new: Mutation, expected: list[str]) -> None:
    old, changed = _pair(leaf1_original, same, new)
    assert kernel_changes(old, changed, {"Ethernet0": "eth1"}) == expected


def test_unnumbered_neighbor_added_says_interface() -> None:
    """frrcfgd's BGP unnumbered: a neighbor keyed by its interface, `interface` on remote-as and peer-group."""
    catalog = Path(__file__).resolve().parents[1] / "fidelity" / "catalog" / "t0-frrcfgd-unnumbered.json"
    new = json.loads(catalog.read_text())
    old = copy.deepcopy(new)
    del old["BGP_NEIGHBOR"]["default|Ethernet8"]
    lines = frr_lines(old, new)
    assert lines is not None
    assert lines[1:3] == [" neighbor Ethernet8 interface remote-as external",
                          " neighbor Ethernet8 interface peer-group PEER_V4"]
    assert lines[1:-1] == [line for line in render_frr(new).splitlines() if line.startswith(" neighbor Ethernet8 ")]
