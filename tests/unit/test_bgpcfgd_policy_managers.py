"""bgpcfgd's allow-list (BGP_ALLOWED_PREFIXES), prefix-list (PREFIX_LIST) and aggregate-address
(BGP_AGGREGATE_ADDRESS) managers as twin emulates them: at boot and on every change, over the classic T0.

The allow-list cases with SONiC's expected commands are those of sonic-bgpcfgd's tests/test_allow_list.py
(sonic-buildimage 086b03bd): the same constants, what FRR held, the commands bgpcfgd pushes."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from twin.stages.configdb import ConfigDb
from twin.stages.render import bgpcfgd
from twin.stages.render.bgpcfgd_allow_list import FrrAllowList, valid
from twin.stages.render.frr import render_frr
from twin.switch.config.apply import frr_lines

CATALOG = Path(__file__).resolve().parents[1] / "fidelity" / "catalog"
SONIC_TEST_CONSTANTS = {"bgp": {"allow_list": {
    "enabled": True,
    "default_pl_rules": {"v4": ["deny 0.0.0.0/0 le 17"], "v6": ["deny 0::/0 le 59", "deny 0::/0 ge 65"]},
    "default_action": "permit", "drop_community": "123:123"}}}
PL4 = "PL_ALLOW_LIST_DEPLOYMENT_ID_5_COMMUNITY_1010:2020_V4"
PL6 = "PL_ALLOW_LIST_DEPLOYMENT_ID_5_COMMUNITY_1010:2020_V6"
COMM = "COMMUNITY_ALLOW_LIST_DEPLOYMENT_ID_5_COMMUNITY_1010:2020"
DEFAULTS_5 = {"ALLOW_LIST_DEPLOYMENT_ID_5_V4": "123:123", "ALLOW_LIST_DEPLOYMENT_ID_5_V6": "123:123"}


@pytest.fixture
def t0() -> ConfigDb:
    db: ConfigDb = json.loads((CATALOG / "t0-classic.json").read_text())
    return db


def _with(db: ConfigDb, table: str, rows: dict[str, Any]) -> ConfigDb:
    out = copy.deepcopy(db)
    out[table] = copy.deepcopy(rows)
    return out


# -- BGP_ALLOWED_PREFIXES -------------------------------------------------------------------------


def test_allow_list_set_with_community_as_sonic_s_test_expects() -> None:
    frr = FrrAllowList(defaults=dict(DEFAULTS_5))
    got = frr.set("DEPLOYMENT_ID|5|1010:2020", {"prefixes_v4": "10.20.30.0/24,30.50.0.0/16",
                                                "prefixes_v6": "fc00:20::/64,fc00:30::/64"}, SONIC_TEST_CONSTANTS)
    assert got == [
        f"ip prefix-list {PL4} seq 10 deny 0.0.0.0/0 le 17", f"ip prefix-list {PL4} seq 20 permit 10.20.30.0/24 le 32",
        f"ip prefix-list {PL4} seq 30 permit 30.50.0.0/16 le 32", f"ipv6 prefix-list {PL6} seq 10 deny ::/0 le 59",
        f"ipv6 prefix-list {PL6} seq 20 deny ::/0 ge 65", f"ipv6 prefix-list {PL6} seq 30 permit fc00:20::/64 le 128",
        f"ipv6 prefix-list {PL6} seq 40 permit fc00:30::/64 le 128",
        f"bgp community-list standard {COMM} permit 1010:2020",
        "route-map ALLOW_LIST_DEPLOYMENT_ID_5_V4 permit 10", f" match ip address prefix-list {PL4}",
        f" match community {COMM}", "route-map ALLOW_LIST_DEPLOYMENT_ID_5_V6 permit 10",
        f" match ipv6 address prefix-list {PL6}", f" match community {COMM}"]


def test_allow_list_set_again_changes_nothing_and_del_removes_it_all() -> None:
    frr = FrrAllowList(defaults=dict(DEFAULTS_5))
    row = {"prefixes_v4": "10.20.30.0/24"}
    frr.set("DEPLOYMENT_ID|5|1010:2020", row, SONIC_TEST_CONSTANTS)
    assert frr.set("DEPLOYMENT_ID|5|1010:2020", row, SONIC_TEST_CONSTANTS) == []
    assert frr.delete("DEPLOYMENT_ID|5|1010:2020", SONIC_TEST_CONSTANTS) == [
        "no route-map ALLOW_LIST_DEPLOYMENT_ID_5_V4 permit 10", "no route-map ALLOW_LIST_DEPLOYMENT_ID_5_V6 permit 10",
        f"no ip prefix-list {PL4}", f"no ipv6 prefix-list {PL6}", f"no bgp community-list standard {COMM}"]


def test_allow_list_without_community_goes_after_30000_and_deny_marks_no_export() -> None:
    frr = FrrAllowList()
    got = frr.set("DEPLOYMENT_ID|5", {"prefixes_v4": "10.20.30.0/24", "default_action": "deny"}, SONIC_TEST_CONSTANTS)
    assert "route-map ALLOW_LIST_DEPLOYMENT_ID_5_V4 permit 30000" in got
    assert got[-4:] == ["route-map ALLOW_LIST_DEPLOYMENT_ID_5_V4 permit 65535", " set community no-export additive",
                        "route-map ALLOW_LIST_DEPLOYMENT_ID_5_V6 permit 65535", " set community no-export additive"]
    assert frr.delete("DEPLOYMENT_ID|5", SONIC_TEST_CONSTANTS)[-1] == " set community 123:123 additive"


@pytest.mark.parametrize(("key", "row", "ok"), [
    ("DEPLOYMENT_ID|5", {"prefixes_v4": "10.0.0.0/8"}, True),
    ("DEPLOYMENT_ID|5|NEIGHBOR_TYPE|T1|1:2", {"prefixes_v6": "fc00::/64"}, True),
    ("DEPLOYMENT|5", {"prefixes_v4": "10.0.0.0/8"}, False),
    ("DEPLOYMENT_ID|5", {"prefixes_v4": "fc00::/64"}, False),
    ("DEPLOYMENT_ID|5", {}, False),
    ("DEPLOYMENT_ID|5", {"prefixes_v4": "10.0.0.0/8", "default_action": "drop"}, False),
])
def test_allow_list_refuses_what_bgpcfgd_refuses(key: str, row: dict[str, str], ok: bool) -> None:
    assert valid(key, row) is ok


def test_allow_list_at_boot_and_on_change(t0: ConfigDb) -> None:
    rows = {"DEPLOYMENT_ID|0|1010:2020": {"prefixes_v4": "10.20.0.0/16"}}
    db = _with(t0, "BGP_ALLOWED_PREFIXES", rows)
    lines = render_frr(db).splitlines()
    pl = "PL_ALLOW_LIST_DEPLOYMENT_ID_0_COMMUNITY_1010:2020_V4"
    assert f"ip prefix-list {pl} seq 30 permit 10.20.0.0/16 le 32" in lines
    assert lines.index("route-map ALLOW_LIST_DEPLOYMENT_ID_0_V4 permit 10") + 1 == lines.index(
        f" match ip address prefix-list {pl}")
    added = frr_lines(t0, db)
    assert added is not None and f"ip prefix-list {pl} seq 30 permit 10.20.0.0/16 le 32" in added
    wider = {"DEPLOYMENT_ID|0|1010:2020": {"prefixes_v4": "10.20.0.0/16,10.21.0.0/16"}}
    widened = _with(t0, "BGP_ALLOWED_PREFIXES", wider)
    changed = frr_lines(db, widened)
    assert changed is not None and changed[0] == f"no ip prefix-list {pl}"  # rewritten whole
    assert f"ip prefix-list {pl} seq 40 permit 10.21.0.0/16 le 32" in changed
    assert not any(line.startswith("route-map") for line in changed)  # its route-map entry is there already
    removed = frr_lines(db, t0)
    assert removed is not None and "no route-map ALLOW_LIST_DEPLOYMENT_ID_0_V4 permit 10" in removed


# -- PREFIX_LIST ----------------------------------------------------------------------------------


PREFIXES = {"SUPPRESS_PREFIX|10.9.0.0/24": {}, "SUPPRESS_PREFIX|fc00:9::/64": {},
            "MYLIST|10.8.0.1/24": {"action": "permit", "seq": "10", "le": "32"},
            "MYLIST|fc00:8::/64": {"action": "deny"}, "NOACTION|10.7.0.0/16": {},
            "ANCHOR_PREFIX|10.6.0.0/16": {}, "MYLIST|not-a-prefix": {"action": "permit"}}


def test_prefix_list_at_boot(t0: ConfigDb) -> None:
    lines = render_frr(_with(t0, "PREFIX_LIST", PREFIXES)).splitlines()
    assert [line for line in lines if "MYLIST" in line or "SUPPRESS_IPV" in line or "NOACTION" in line
            or "ANCHOR" in line] == [
        "ip prefix-list MYLIST seq 10 permit 10.8.0.0/24 le 32", "ipv6 prefix-list MYLIST deny fc00:8::/64",
        "ip prefix-list SUPPRESS_IPV4_PREFIX permit 10.9.0.0/24",
        "ipv6 prefix-list SUPPRESS_IPV6_PREFIX permit fc00:9::/64"]


def test_prefix_list_on_change(t0: ConfigDb) -> None:
    db = _with(t0, "PREFIX_LIST", PREFIXES)
    gone = copy.deepcopy(db)
    for key in ("SUPPRESS_PREFIX|10.9.0.0/24", "MYLIST|10.8.0.1/24", "NOACTION|10.7.0.0/16"):
        del gone["PREFIX_LIST"][key]
    gone["PREFIX_LIST"]["MYLIST|fc00:8::/64"] = {"action": "permit"}
    assert frr_lines(db, gone) == [
        "no ip prefix-list MYLIST seq 10 permit 10.8.0.0/24 le 32",
        "no ip prefix-list NOACTION",  # bgpcfgd's delete by name of an entry it did not keep
        "no ip prefix-list SUPPRESS_IPV4_PREFIX permit 10.9.0.0/24",
        "ipv6 prefix-list MYLIST permit fc00:8::/64"]  # the deny stays: bgpcfgd only adds


def test_prefix_list_waits_for_device_type(t0: ConfigDb) -> None:
    db = _with(t0, "PREFIX_LIST", PREFIXES)
    del db["DEVICE_METADATA"]["localhost"]["type"]
    assert bgpcfgd.prefix_list.boot_lines(db, bgpcfgd.SONIC_CONSTANTS) == []
    ready = copy.deepcopy(db)
    ready["DEVICE_METADATA"]["localhost"]["type"] = "ToRRouter"
    assert "ip prefix-list SUPPRESS_IPV4_PREFIX permit 10.9.0.0/24" in bgpcfgd.prefix_list.change_lines(
        db, ready, bgpcfgd.SONIC_CONSTANTS)


# -- BGP_AGGREGATE_ADDRESS ------------------------------------------------------------------------


AGGREGATES = {"192.168.0.0/16": {"summary-only": "true", "aggregate-address-prefix-list": "AGG_V4",
                                 "contributing-address-prefix-list": "CON_V4"},
              "fc00::/48": {"as-set": "true"}, "10.6.0.0/16": {"bbr-required": "true"}, "10.5.0.1/16": {}}


def _agg(family: str, line: str, nested: bool = False) -> list[str]:
    """What address_set_handler pushes (`nested`: as the boot config holds it, indented)."""
    pad, pad2 = (" ", "  ") if nested else ("", "")
    return ["router bgp 65101", f"{pad}address-family {family}", f"{pad2}{line}", f"{pad}exit-address-family", "exit"]


def test_aggregates_at_boot(t0: ConfigDb) -> None:
    lines = render_frr(_with(t0, "BGP_AGGREGATE_ADDRESS", AGGREGATES)).splitlines()
    start = lines.index("  aggregate-address 192.168.0.0/16 summary-only") - 2
    assert lines[start:start + 12] == [
        *_agg("ipv4", "aggregate-address 192.168.0.0/16 summary-only", nested=True),
        "ip prefix-list AGG_V4 permit 192.168.0.0/16", "ip prefix-list CON_V4 permit 192.168.0.0/16 le 32",
        *_agg("ipv6", "aggregate-address fc00::/48 as-set", nested=True)]
    assert not any("10.6.0.0" in line or "10.5.0" in line for line in lines)  # BBR disabled; not a network


def test_aggregates_follow_bbr_and_changes(t0: ConfigDb) -> None:
    db = _with(t0, "BGP_AGGREGATE_ADDRESS", AGGREGATES)
    bbr = copy.deepcopy(db)
    bbr["BGP_BBR"] = {"all": {"status": "enabled"}}
    lines = frr_lines(db, bbr)
    assert lines is not None and _agg("ipv4", "aggregate-address 10.6.0.0/16") == lines[-5:]
    off = copy.deepcopy(bbr)
    off["BGP_BBR"] = {"all": {"status": "disabled"}}
    lines = frr_lines(bbr, off)
    assert lines is not None and lines[-5:] == _agg("ipv4", "no aggregate-address 10.6.0.0/16")
    gone = copy.deepcopy(db)
    del gone["BGP_AGGREGATE_ADDRESS"]["192.168.0.0/16"]
    del gone["BGP_AGGREGATE_ADDRESS"]["10.6.0.0/16"]  # inactive: nothing to remove
    assert frr_lines(db, gone) == [*_agg("ipv4", "no aggregate-address 192.168.0.0/16"),
                                   "no ip prefix-list AGG_V4 permit 192.168.0.0/16",
                                   "no ip prefix-list CON_V4 permit 192.168.0.0/16 le 32"]
    summary = copy.deepcopy(db)
    summary["BGP_AGGREGATE_ADDRESS"]["fc00::/48"] = {"summary-only": "true"}
    assert frr_lines(db, summary) == _agg("ipv6", "aggregate-address fc00::/48 summary-only")


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")
def test_frr_takes_the_policy_managers_lines(t0: ConfigDb, tmp_path: Path) -> None:
    db = _with(_with(_with(t0, "PREFIX_LIST", PREFIXES), "BGP_AGGREGATE_ADDRESS", AGGREGATES), "BGP_ALLOWED_PREFIXES",
               {"DEPLOYMENT_ID|0|1010:2020": {"prefixes_v4": "10.20.0.0/16", "prefixes_v6": "fc00:20::/64"}})
    path = tmp_path / "frr.conf"
    path.write_text(render_frr(db))
    proc = subprocess.run(["vtysh", "-C", "-f", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_allow_list_written_as_yang_s_leaf_list_is_refused(t0: ConfigDb) -> None:
    """`prefixes_v4` as a config_db.json list is stored as `prefixes_v4@`: the manager finds no prefixes
    and refuses the entry, as on SONiC (bgpcfgd reads `prefixes_v4` only)."""
    db = _with(t0, "BGP_ALLOWED_PREFIXES", {"DEPLOYMENT_ID|0|1010:2020": {"prefixes_v4": ["10.20.0.0/16"]}})
    assert not any("PL_ALLOW_LIST" in line for line in render_frr(db).splitlines())
    assert frr_lines(t0, db) == []
