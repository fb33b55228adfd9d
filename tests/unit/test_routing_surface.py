"""The routing surface (twin.model.routing_surface): every table and field SONiC's routing stack reads is
emulated, with a test that proves it, or named out loud as not emulated, with the reason. What a config
holds that twin does not emulate is a finding of `twin validate`, a failure of `twin verify`, and a line
in the agent's log; a lab file may accept a table by name."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from twin.checks.surface import surface_check
from twin.model.errors import PlanError
from twin.model.routing_surface import not_emulated, surface
from twin.stages.lab_file import load_lab
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology
from twin.stages.render.config_db import build_config_db
from twin.stages.render.frr import render_frr
from twin.stages.validate.api import validate_folder

REPO = Path(__file__).resolve().parents[2]
ConfigDb = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def leaf1() -> ConfigDb:
    plan = plan_topology(load_topology(REPO / "topologies" / "clos-4x8.yaml"))
    return build_config_db(plan, plan.node("leaf1"))


def test_every_entry_is_emulated_with_a_test_or_not_emulated_with_a_reason() -> None:
    for entry in surface().entries:
        where = f"{entry.reader} {entry.table} {entry.field}"
        if entry.status == "emulated":
            assert entry.test, where
            path, _, name = entry.test.partition("::")
            assert (REPO / path).is_file(), where
            if name:
                assert f"def {name.split('[')[0]}(" in (REPO / path).read_text(), where
        else:
            assert entry.reason and entry.reason != "not reviewed", where


def test_the_surface_names_its_source_and_what_it_read() -> None:
    s = surface()
    assert s.source == "sonic-net/sonic-buildimage" and re.fullmatch(r"[0-9a-f]{40}", s.commit)
    tables = {(e.reader, e.table) for e in s.entries}
    for wanted in [("frrcfgd", "ROUTE_MAP"), ("frrcfgd", "PREFIX_SET"), ("frrcfgd", "STATIC_ROUTE"),
                   ("bgpcfgd", "BGP_MONITORS"), ("bgpcfgd", "BGP_PEER_RANGE"), ("bgpcfgd", "BGP_ALLOWED_PREFIXES"),
                   ("swss", "PORTCHANNEL_INTERFACE"), ("swss", "VLAN_SUB_INTERFACE")]:
        assert wanted in tables


EXAMPLES = [e for e in surface().entries if e.status == "emulated" and e.example is not None]


@pytest.mark.parametrize("entry", EXAMPLES, ids=[f"{e.table}|{e.field}" for e in EXAMPLES])
def test_an_emulated_field_reaches_frr(leaf1: ConfigDb, entry: Any) -> None:
    """Set on twin's own config, an emulated field changes what FRR is given."""
    assert entry.example is not None
    db = copy.deepcopy(leaf1)
    neighbor = sorted(db["BGP_NEIGHBOR"])[0].split("|", 1)[1]
    key = entry.example["key"].replace("{neighbor}", neighbor)
    db.setdefault(entry.table, {}).setdefault(key, {})[entry.field] = entry.example["value"]
    assert render_frr(db) != render_frr(leaf1)


def test_twin_s_own_configs_hold_nothing_it_does_not_emulate(leaf1: ConfigDb) -> None:
    assert not_emulated(leaf1) == []
    for path in sorted((REPO / "configs").glob("*/*/config_db.json")):
        assert not_emulated(json.loads(path.read_text())) == [], path


def test_what_sonic_would_act_on_and_twin_would_not_is_named_entry_by_entry(leaf1: ConfigDb) -> None:
    db = copy.deepcopy(leaf1)
    db["OSPFV2_ROUTER"] = {"default": {"enable": "true"}}
    db["STATIC_ROUTE"] = {"default|10.9.0.0/24": {"nexthop": "10.0.0.64", "track": "1"}}
    db["IP_SLA"] = {"1": {"icmp_dst_ip": "10.0.0.64"}}
    db["VLAN"] = {"Vlan100": {"vlanid": "100"}}
    found = [str(item) for item in not_emulated(db)]
    assert any(line.startswith("OSPFV2_ROUTER|default: not emulated (OSPF is not run") for line in found)
    assert any(line.startswith("STATIC_ROUTE|default|10.9.0.0/24 track: not emulated") for line in found)
    assert not any(line.startswith("STATIC_ROUTE|default|10.9.0.0/24 nexthop") for line in found)
    assert "IP_SLA|1: not emulated (IP SLA is not emulated)" in found
    assert "VLAN|Vlan100: not emulated (this kernel has no 8021q module: VLANs are not emulated)" in found
    assert [str(i) for i in not_emulated(db, accepted=["OSPFV2_ROUTER", "STATIC_ROUTE", "IP_SLA", "VLAN"])] == []


def test_the_reader_is_the_config_s_own(leaf1: ConfigDb) -> None:
    """BGP_VOQ_CHASSIS_NEIGHBOR is bgpcfgd's: a frrcfgd config's (SONiC ignores it there too) is not judged by
    it; BGP_MONITORS, emulated for bgpcfgd, is reported by neither."""
    db = copy.deepcopy(leaf1)
    db["BGP_VOQ_CHASSIS_NEIGHBOR"] = {"10.0.0.9": {"asn": "65100", "name": "lc2"}}
    db["BGP_MONITORS"] = {"10.20.30.40": {"admin_status": "up", "asn": "65000", "name": "BGPMonitor"}}
    assert not_emulated(db) == []
    db["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] = "false"
    assert [str(i) for i in not_emulated(db) if i.table.startswith("BGP_")] == [
        "BGP_VOQ_CHASSIS_NEIGHBOR|10.0.0.9: not emulated (bgpcfgd's voq_chassis peers (iBGP between a VOQ "
        "chassis' linecards over their inband ports, peer groups VOQ_CHASSIS_V4/V6) exist on DEVICE_METADATA "
        "switch_type voq only, which twin's single-ASIC emulation refuses (bgpcfgd.check_scope); render such a "
        "switch with --sonic-templates)"]


def test_validate_reports_it_unless_accepted(tmp_path: Path, leaf1: ConfigDb) -> None:
    db = copy.deepcopy(leaf1)
    db["OSPFV2_ROUTER"] = {"default": {"enable": "true"}}
    (tmp_path / "leaf1").mkdir()
    (tmp_path / "leaf1" / "config_db.json").write_text(json.dumps(db))
    _, findings = validate_folder(tmp_path, yang=False)
    surface_findings = [f for f in findings if f.check == "surface"]
    assert [(f.where, "accept_not_emulated" in f.fix) for f in surface_findings] == [
        ("OSPFV2_ROUTER|default", True)]
    _, findings = validate_folder(tmp_path, yang=False, accepted=["OSPFV2_ROUTER"])
    assert [f for f in findings if f.check == "surface"] == []


def test_verify_fails_on_it_naming_the_switch_and_the_entry(leaf1: ConfigDb) -> None:
    db = copy.deepcopy(leaf1)
    db["OSPFV2_ROUTER"] = {"default": {"enable": "true"}}
    result = surface_check({"leaf1": db, "leaf2": leaf1}).evaluate({})  # type: ignore[union-attr]
    assert result.status == "failure"
    assert [(i.subject, i.message.split(":")[0]) for i in result.failures] == [
        ("leaf1", "OSPFV2_ROUTER|default")]
    accepted = surface_check({"leaf1": db}, ["OSPFV2_ROUTER"])
    assert accepted is not None and accepted.evaluate({}).status == "success"


def test_a_lab_file_accepts_only_tables_twin_does_not_emulate(tmp_path: Path) -> None:
    (tmp_path / "fabric.yaml").write_text("name: f\nkind: clos\nclos: {spines: 2, leaves: 2, servers_per_leaf: 1}\n")
    (tmp_path / "lab.yaml").write_text("name: f\ntopology: fabric.yaml\naccept_not_emulated: [STATIC_ROUTE]\n")
    assert load_lab(tmp_path / "lab.yaml").drills.accept_not_emulated == ["STATIC_ROUTE"]
    (tmp_path / "lab.yaml").write_text("name: f\ntopology: fabric.yaml\naccept_not_emulated: [STATIC_ROUTES]\n")
    with pytest.raises(PlanError) as exc:
        load_lab(tmp_path / "lab.yaml")
    problem = exc.value.problems[0]
    assert problem.field == "accept_not_emulated.0" and "STATIC_ROUTES" in problem.message
    assert "STATIC_ROUTE" in problem.fix


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("routing_surface_script", REPO / "scripts" / "routing_surface.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FRRCFGD_SHAPE = '''
class BGPConfigDaemon:
    global_key_map = [('router_id', '{no:no-prefix}bgp router-id {}'),
                      (['max_med_admin', '+max_med_admin_val'], 'x'), ('sid_vpn_per_vrf_export_explicit', 'x')]
    cmn_key_map = [('asn&peer_type', 'remote-as'), ('name', 'description')]
    nbr_key_map = [('peer_group_name', 'peer-group')]
    tbl_to_key_map = {'BGP_GLOBALS': global_key_map, 'BGP_NEIGHBOR': cmn_key_map[0:1] + nbr_key_map + cmn_key_map[1:]}
    def __init__(self):
        self.table_handler_list = [('BGP_GLOBALS', self.h), ('BGP_NEIGHBOR', self.h), ('PREFIX_SET', self.h)]
'''
BGPCFGD_SHAPE = '''
managers = [
    BGPDataBaseMgr(common_objs, "CONFIG_DB", swsscommon.CFG_DEVICE_METADATA_TABLE_NAME),
    BGPPeerMgrBase(common_objs, "CONFIG_DB", "BGP_MONITORS", "monitors", False),
    StaticRouteMgr(common_objs, "APPL_DB", "STATIC_ROUTE"),
]
'''


def test_the_generator_reads_frrcfgd_s_tables_and_fields_and_bgpcfgd_s_managers() -> None:
    gen = _generator()
    tables = gen.frrcfgd_tables(FRRCFGD_SHAPE)
    assert {t: sorted(f) for t, f in tables.items()} == {
        "BGP_GLOBALS": ["max_med_admin", "max_med_admin_val", "router_id", "sid_vpn_per_vrf_export_explicit"],
        "BGP_NEIGHBOR": ["asn", "name", "peer_group_name", "peer_type"], "PREFIX_SET": []}
    assert gen.bgpcfgd_tables(BGPCFGD_SHAPE) == ["DEVICE_METADATA", "BGP_MONITORS"]


def test_the_generator_keeps_every_table_of_the_committed_surface(tmp_path: Path) -> None:
    """Run on a stand-in sonic-buildimage whose frrcfgd and bgpcfgd have the shapes above: statuses of
    the entries it finds again are kept, new ones are 'not reviewed'."""
    gen = _generator()
    for path, text in ((gen.FRRCFGD, FRRCFGD_SHAPE), (gen.BGPCFGD, BGPCFGD_SHAPE)):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    new = gen.surface(tmp_path, json.loads((REPO / "twin/model/data/routing_surface.json").read_text()))
    by = {(e["reader"], e["table"], e["field"]): e for e in new["entries"]}
    assert by[("frrcfgd", "BGP_GLOBALS", "router_id")]["status"] == "emulated"
    assert by[("bgpcfgd", "BGP_MONITORS", "*")]["test"].startswith("tests/fidelity/test_bgpcfgd_vectors.py")
    assert by[("frrcfgd", "BGP_GLOBALS", "max_med_admin")]["status"] == "emulated"
    assert by[("frrcfgd", "BGP_GLOBALS", "sid_vpn_per_vrf_export_explicit")]["status"] == "not emulated"
    assert new["commit"] == subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True,
                                           text=True, check=True).stdout.strip()


def test_the_docs_page_is_the_data_s() -> None:
    """docs/reference/routing-surface.md is regenerated with `python scripts/routing_surface.py --docs`."""
    data = json.loads((REPO / "twin/model/data/routing_surface.json").read_text())
    assert (REPO / "docs/reference/routing-surface.md").read_text() == _generator().markdown(data)
