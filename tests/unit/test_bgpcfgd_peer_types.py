"""bgpcfgd's monitors (BGP_MONITORS) and dynamic (BGP_PEER_RANGE) peer managers as twin emulates them:
at boot (the full rendering) and on every change (frr_lines), over the hand-written classic T0."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from configdb_edits import drop_at as _drop
from configdb_edits import set_at as _set

from twin.stages.configdb import ConfigDb
from twin.stages.render import bgpcfgd
from twin.stages.render.frr import render_frr
from twin.switch.config.apply import frr_lines

CATALOG = Path(__file__).resolve().parents[1] / "fidelity" / "catalog"
MONITOR = {"name": "BGPMonitor", "admin_status": "up", "asn": "65101", "holdtime": "180", "keepalive": "60",
           "local_addr": "10.1.0.1", "nhopself": "0", "rrclient": "0"}
SLB = {"ip_range": "10.255.0.0/25,fc00:1::/64", "name": "BGPSLBPassive", "src_address": "10.1.0.32",
       "peer_asn": "65200"}


def _op(*lines: str) -> list[str]:
    return ["router bgp 65101", *lines, "exit"]


@pytest.fixture
def t0() -> ConfigDb:
    db: ConfigDb = json.loads((CATALOG / "t0-classic.json").read_text())
    return db


def _with(db: ConfigDb, table: str, key: str, row: dict[str, Any]) -> ConfigDb:
    out = copy.deepcopy(db)
    out.setdefault(table, {})[key] = dict(row)
    return out


def _lines(db: ConfigDb) -> list[str]:
    return render_frr(db).splitlines()


def _block(lines: list[str], first: str) -> list[str]:
    """From `router bgp` before `first` to its `exit`."""
    at = lines.index(first)
    start = max(i for i in range(at) if lines[i].startswith("router bgp "))
    return lines[start:lines.index("exit", at) + 1]


# -- BGP_MONITORS ---------------------------------------------------------------------------------


def test_monitor_is_an_ibgp_neighbor_in_bgpmon(t0: ConfigDb) -> None:
    lines = _lines(_with(t0, "BGP_MONITORS", "10.20.30.40", MONITOR))
    policies = [line for line in lines if "BGPMON " in line and line.startswith("route-map")]
    assert policies == ["route-map FROM_BGPMON deny 10", "route-map TO_BGPMON permit 10"]
    assert _block(lines, "  neighbor BGPMON peer-group") == _op(
        "  neighbor BGPMON peer-group", "  neighbor BGPMON update-source 10.1.0.1", "  address-family ipv4",
        "    neighbor BGPMON activate", "    neighbor BGPMON route-map FROM_BGPMON in",
        "    neighbor BGPMON route-map TO_BGPMON out", "    neighbor BGPMON send-community",
        "    neighbor BGPMON maximum-prefix 1", "  exit-address-family")
    assert _block(lines, "  neighbor 10.20.30.40 remote-as 65101") == _op(
        "  neighbor 10.20.30.40 remote-as 65101", "  neighbor 10.20.30.40 peer-group BGPMON",
        "  neighbor 10.20.30.40 description BGPMonitor", "  neighbor 10.20.30.40 activate",
        "  address-family ipv6", "    neighbor 10.20.30.40 activate", "  exit-address-family")


def test_no_monitor_no_bgpmon(t0: ConfigDb) -> None:
    assert not any("BGPMON" in line for line in _lines(t0))


def test_monitor_waits_for_its_local_address(t0: ConfigDb) -> None:
    row = {**MONITOR, "local_addr": "10.9.9.9"}
    assert not any("BGPMON" in line for line in _lines(_with(t0, "BGP_MONITORS", "10.20.30.40", row)))


def test_monitor_added_removed_and_shut_at_runtime(t0: ConfigDb) -> None:
    with_monitor = _with(t0, "BGP_MONITORS", "10.20.30.40", MONITOR)
    added = frr_lines(t0, with_monitor)
    assert added is not None
    assert added[:2] == ["route-map FROM_BGPMON deny 10", "route-map TO_BGPMON permit 10"]
    assert "  neighbor 10.20.30.40 peer-group BGPMON" in added and "  neighbor BGPMON peer-group" in added
    down = _set("BGP_MONITORS", "10.20.30.40", "admin_status", value="down")(copy.deepcopy(with_monitor))
    assert frr_lines(with_monitor, down) == _op("neighbor 10.20.30.40 shutdown")
    assert frr_lines(with_monitor, t0) == _op("no neighbor 10.20.30.40")
    renamed = _set("BGP_MONITORS", "10.20.30.40", value={"name": "x"})(copy.deepcopy(with_monitor))
    assert frr_lines(with_monitor, renamed) == []  # only admin_status is updated


# -- BGP_PEER_RANGE -------------------------------------------------------------------------------


def test_peer_range_is_a_passive_group_with_listen_ranges(t0: ConfigDb) -> None:
    lines = _lines(_with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", SLB))
    assert "route-map FROM_BGP_SPEAKER permit 10" in lines and "route-map TO_BGP_SPEAKER deny 1" in lines
    assert _block(lines, "  neighbor BGPSLBPassive peer-group") == _op(
        "  neighbor BGPSLBPassive peer-group", "  neighbor BGPSLBPassive passive",
        "  neighbor BGPSLBPassive ebgp-multihop 255", "  neighbor BGPSLBPassive soft-reconfiguration inbound",
        "  neighbor BGPSLBPassive route-map FROM_BGP_SPEAKER in",
        "  neighbor BGPSLBPassive route-map TO_BGP_SPEAKER out",
        "  neighbor BGPSLBPassive remote-as 65200",
        "  bgp listen range 10.255.0.0/25 peer-group BGPSLBPassive",
        "  bgp listen range fc00:1::/64 peer-group BGPSLBPassive", "  neighbor BGPSLBPassive update-source 10.1.0.32",
        "  address-family ipv4", "    neighbor BGPSLBPassive activate", "  exit-address-family",
        "  address-family ipv6", "    neighbor BGPSLBPassive activate", "  exit-address-family")


@pytest.mark.parametrize(("deployment_id", "remote_as"), [("1", "65432"), ("2", "65433"), ("7", None), (None, None)])
def test_peer_range_without_peer_asn_takes_the_deployment_s_asn(t0: ConfigDb, deployment_id: str | None,
                                                                remote_as: str | None) -> None:
    """constants.yml's deployment_id_asn_map; with no ASN at all FRR refuses remote-as and with it the
    listen ranges, so no session can form: twin leaves the group out."""
    row = {k: v for k, v in SLB.items() if k != "peer_asn"}
    db = _with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", row)
    if deployment_id:
        db["DEVICE_METADATA"]["localhost"]["deployment_id"] = deployment_id
    lines = _lines(db)
    if remote_as is None:
        assert not any("BGPSLBPassive" in line for line in lines)
    else:
        assert f"  neighbor BGPSLBPassive remote-as {remote_as}" in lines


@pytest.mark.parametrize(("loopbacks", "source"), [
    ({"Loopback1|10.1.1.1/32": {}}, "10.1.1.1"),
    ({"Loopback1|10.1.1.1/32": {}, "Loopback1|10.1.1.2/32": {}}, "10.1.1.2"),
    ({}, "None"),
])
def test_peer_range_source_is_loopback1_without_src_address(t0: ConfigDb, loopbacks: dict[str, Any],
                                                           source: str) -> None:
    """The template takes Loopback1's last IPv4 address; with none it writes `None` (an interface name to FRR)."""
    row = {k: v for k, v in SLB.items() if k != "src_address"}
    db = _with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", row)
    db["LOOPBACK_INTERFACE"].update(loopbacks)
    assert f"  neighbor BGPSLBPassive update-source {source}" in _lines(db)


def test_peer_range_without_ip_range_is_not_rendered(t0: ConfigDb) -> None:
    row = {k: v for k, v in SLB.items() if k != "ip_range"}
    assert not any("BGPSLBPassive" in line for line in _lines(_with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", row)))


def test_peer_range_ranges_change_at_runtime(t0: ConfigDb) -> None:
    """change_ip_range: the ranges FRR holds that are gone removed, the new ones added, nothing else."""
    old = _with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", SLB)
    new = _set("BGP_PEER_RANGE", "BGPSLBPassive", "ip_range", value="fc00:1::/64,10.254.0.0/24")(copy.deepcopy(old))
    assert frr_lines(old, new) == _op("  no bgp listen range 10.255.0.0/25 peer-group BGPSLBPassive",
                                      "  bgp listen range 10.254.0.0/24 peer-group BGPSLBPassive")
    same_ranges = _set("BGP_PEER_RANGE", "BGPSLBPassive", "src_address", value="10.1.0.33")(copy.deepcopy(old))
    assert frr_lines(old, same_ranges) == []
    shut = _set("BGP_PEER_RANGE", "BGPSLBPassive", "admin_status", value="down")(copy.deepcopy(new))
    assert frr_lines(new, shut) == _op("neighbor BGPSLBPassive shutdown")  # admin_status first, ranges left


def test_peer_range_added_and_deleted_at_runtime(t0: ConfigDb) -> None:
    new = _with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", SLB)
    added = frr_lines(t0, new)
    assert added is not None
    assert added[:2] == ["route-map FROM_BGP_SPEAKER permit 10", "route-map TO_BGP_SPEAKER deny 1"]
    assert "  bgp listen range fc00:1::/64 peer-group BGPSLBPassive" in added
    assert frr_lines(new, _drop("BGP_PEER_RANGE", "BGPSLBPassive")(copy.deepcopy(new))) == [
        *_op("no bgp listen range 10.255.0.0/25 peer-group BGPSLBPassive"),
        *_op("no bgp listen range fc00:1::/64 peer-group BGPSLBPassive"), *_op("no neighbor BGPSLBPassive")]


def test_peer_types_wait_for_loopback0_like_neighbors(t0: ConfigDb) -> None:
    db = _with(_with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", SLB), "BGP_MONITORS", "10.20.30.40", MONITOR)
    del db["LOOPBACK_INTERFACE"]["Loopback0|10.1.0.1/32"]
    lines = _lines(db)
    assert not any("BGPSLBPassive" in line or "BGPMON" in line for line in lines)
    assert bgpcfgd.peers(db, "dynamic") == [] and bgpcfgd.peers(db, "monitors") == []


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")
def test_frr_takes_monitors_and_peer_ranges(t0: ConfigDb, tmp_path: Path) -> None:
    db = _with(_with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", SLB), "BGP_MONITORS", "10.20.30.40", MONITOR)
    path = tmp_path / "frr.conf"
    path.write_text(render_frr(db))
    proc = subprocess.run(["vtysh", "-C", "-f", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_peer_range_written_as_yang_s_leaf_list_gets_its_policies_only(t0: ConfigDb) -> None:
    """A config_db.json list is stored as `ip_range@`, which bgpcfgd does not read: add_peer pushes the
    BGP_SPEAKER route-maps, then its template fails on the missing `ip_range`, as on SONiC."""
    row = {**SLB, "ip_range": ["10.255.0.0/25", "fc00:1::/64"]}
    db = _with(t0, "BGP_PEER_RANGE", "BGPSLBPassive", row)
    lines = _lines(db)
    assert "route-map FROM_BGP_SPEAKER permit 10" in lines and "route-map TO_BGP_SPEAKER deny 1" in lines
    assert not any("BGPSLBPassive" in line or "listen range" in line for line in lines)
    added = frr_lines(t0, db)
    assert added == ["route-map FROM_BGP_SPEAKER permit 10", "route-map TO_BGP_SPEAKER deny 1", *_op()]
    assert frr_lines(db, _set("BGP_PEER_RANGE", "BGPSLBPassive", "src_address", value="10.1.0.33")(
        copy.deepcopy(db))) == added  # retried on every SET, failing again


# -- BGP_INTERNAL_NEIGHBOR ------------------------------------------------------------------------


INTERNAL = {"asn": "65101", "name": "asic1", "rrclient": "1"}


def _with_lo4096(db: ConfigDb) -> ConfigDb:
    out = copy.deepcopy(db)
    out["LOOPBACK_INTERFACE"].update({"Loopback4096": {}, "Loopback4096|10.9.0.1/32": {}})
    return out


def test_internal_neighbor_in_internal_peer_v4(t0: ConfigDb) -> None:
    lines = _lines(_with(_with_lo4096(t0), "BGP_INTERNAL_NEIGHBOR", "10.9.0.2", INTERNAL))
    assert _block(lines, "  neighbor 10.9.0.2 remote-as 65101") == _op(
        "  neighbor 10.9.0.2 remote-as 65101", "  neighbor 10.9.0.2 description asic1",
        "  neighbor 10.9.0.2 timers 3 10", "  neighbor 10.9.0.2 timers connect 10", "  address-family ipv4",
        "    neighbor 10.9.0.2 peer-group INTERNAL_PEER_V4", "    neighbor 10.9.0.2 route-reflector-client",
        "    neighbor 10.9.0.2 activate", "  exit-address-family")
    assert "    neighbor INTERNAL_PEER_V4 allowas-in 1" in lines
    assert "route-map FROM_BGP_INTERNAL_PEER_V6 permit 1" in lines
    assert "route-map TO_BGP_INTERNAL_PEER_V4 permit 100" in lines


@pytest.mark.parametrize("edit", [
    pytest.param(lambda db: db, id="no-loopback4096"),
    pytest.param(lambda db: db["LOOPBACK_INTERFACE"].update({"Loopback4096": {}}), id="loopback4096-without-address"),
])
def test_internal_neighbor_waits_for_loopback4096(t0: ConfigDb, edit: Any) -> None:
    db = _with(t0, "BGP_INTERNAL_NEIGHBOR", "10.9.0.2", INTERNAL)
    edit(db)
    assert not any("INTERNAL_PEER" in line or "10.9.0.2" in line for line in _lines(db))
    ready = _with_lo4096(db)
    added = frr_lines(db, ready)
    assert added is not None and "  neighbor 10.9.0.2 remote-as 65101" in added  # added once it comes


def test_internal_neighbor_removed_and_shut_at_runtime(t0: ConfigDb) -> None:
    base = _with_lo4096(t0)
    db = _with(base, "BGP_INTERNAL_NEIGHBOR", "10.9.0.2", INTERNAL)
    shut = _set("BGP_INTERNAL_NEIGHBOR", "10.9.0.2", "admin_status", value="down")(copy.deepcopy(db))
    assert frr_lines(db, shut) == _op("neighbor 10.9.0.2 shutdown")
    assert frr_lines(db, base) == _op("no neighbor 10.9.0.2")


# -- BGP_SENTINELS --------------------------------------------------------------------------------


SENTINEL = {"ip_range": "10.253.0.0/24", "name": "BGPSentinel", "src_address": "10.1.0.1"}


def test_sentinel_is_an_ibgp_listen_group_taking_the_sentinel_community(t0: ConfigDb) -> None:
    lines = _lines(_with(t0, "BGP_SENTINELS", "BGPSentinel", SENTINEL))
    assert "bgp community-list standard sentinel_community permit 12345:12346 no-export" in lines
    block = _block(lines, "  neighbor BGPSentinel peer-group")
    assert block[:5] == ["router bgp 65101", "  neighbor BGPSentinel peer-group",
                         "  neighbor BGPSentinel remote-as 65101",
                         "  neighbor BGPSentinel update-source 10.1.0.1",
                         "  bgp listen range 10.253.0.0/24 peer-group BGPSentinel"]
    assert block.count("    neighbor BGPSentinel maximum-prefix 200") == 2


def test_sentinel_changes_at_runtime(t0: ConfigDb) -> None:
    db = _with(t0, "BGP_SENTINELS", "BGPSentinel", SENTINEL)
    added = frr_lines(t0, db)
    assert added is not None
    assert added[0] == "bgp community-list standard sentinel_community permit 12345:12346 no-export"
    wider = _set("BGP_SENTINELS", "BGPSentinel", "ip_range", value="10.253.0.0/24,10.254.0.0/24")(copy.deepcopy(db))
    assert frr_lines(db, wider) == []   # no update template: only admin_status is applied
    assert frr_lines(db, t0) == [*_op("no bgp listen range 10.253.0.0/24 peer-group BGPSentinel"),
                                 *_op("no neighbor BGPSentinel")]
