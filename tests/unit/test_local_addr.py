"""A BGP neighbor's local_addr on no interface: SONiC accepts and loads it, so twin refuses nothing and
`twin validate` says what SONiC would do (twin.stages.validate.local_addr)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from twin.model.findings import SwitchConfig
from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.validate.api import validate_folder
from twin.stages.validate.local_addr import holds, local_addr_findings

REPO = Path(__file__).resolve().parents[2]
NB = "default|10.0.0.64"   # leaf1's session to spine1, local_addr 10.0.0.65 on INTERFACE|Ethernet128


def _moved(db: ConfigDb, table: str, base: str, base_row: dict[str, str] | None = None) -> ConfigDb:
    """leaf1 with 10.0.0.65/31 moved from Ethernet128 to `table`'s `base` (a PortChannel, a VLAN, ...)."""
    del db["INTERFACE"]["Ethernet128|10.0.0.65/31"]
    db.setdefault(table, {})[base] = base_row or {}
    db[table][f"{base}|10.0.0.65/31"] = {}
    return db


def _findings(db: ConfigDb) -> list[str]:
    return [str(f) for f in local_addr_findings(SwitchConfig("leaf1", Path("leaf1/config_db.json"), db))]


def test_leaf1_s_local_addresses_are_its_own(leaf1: ConfigDb) -> None:
    assert _findings(leaf1) == []


@pytest.mark.parametrize(("table", "base"), [
    ("PORTCHANNEL_INTERFACE", "PortChannel01"), ("VLAN_INTERFACE", "Vlan1000"),
    ("VLAN_SUB_INTERFACE", "Ethernet128.10"), ("LOOPBACK_INTERFACE", "Loopback1"),
])
def test_an_address_on_any_interface_table_bgpcfgd_reads_is_the_switch_s(leaf1: ConfigDb, table: str,
                                                                         base: str) -> None:
    db = _moved(leaf1, table, base)
    assert holds(db, "10.0.0.65") and _findings(db) == []
    assert configdb.validate(db) == [] or all("local_addr" not in e for e in configdb.validate(db))


def test_an_interface_without_its_base_key_or_in_another_vrf_does_not_hold_it(leaf1: ConfigDb) -> None:
    """get_local_interface: the interface's base key must exist, and bind it to the neighbor's VRF."""
    no_base = _moved(json.loads(json.dumps(leaf1)), "PORTCHANNEL_INTERFACE", "PortChannel01")
    del no_base["PORTCHANNEL_INTERFACE"]["PortChannel01"]
    assert not holds(no_base, "10.0.0.65")
    in_vrf = _moved(json.loads(json.dumps(leaf1)), "PORTCHANNEL_INTERFACE", "PortChannel01", {"vrf_name": "Vrf1"})
    assert not holds(in_vrf, "10.0.0.65") and holds(in_vrf, "10.0.0.65", "Vrf1")


def test_a_foreign_local_addr_is_a_finding_that_says_what_bgpcfgd_does(leaf1: ConfigDb) -> None:
    leaf1["DEVICE_METADATA"]["localhost"].pop("frr_mgmt_framework_config", None)
    leaf1["BGP_NEIGHBOR"][NB]["local_addr"] = "10.9.9.9"
    assert configdb.validate(leaf1) == []   # a gNMI Set, a push and a containerlab bind accept it
    (finding,) = _findings(leaf1)
    assert finding == (
        "leaf1/config_db.json: BGP_NEIGHBOR|default|10.0.0.64 local_addr: 10.9.9.9 is on no interface of this "
        "switch in the default VRF (INTERFACE, LOOPBACK_INTERFACE, VLAN_INTERFACE, PORTCHANNEL_INTERFACE, "
        "VOQ_INBAND_INTERFACE, VLAN_SUB_INTERFACE); SONiC accepts the config; on SONiC bgpcfgd keeps neighbor "
        "10.0.0.64 out of FRR until an interface has 10.9.9.9 (no session, no error): put 10.9.9.9 on the "
        "interface that faces 10.0.0.64, or correct local_addr")


def test_with_frrcfgd_the_finding_says_the_session_stays_down(leaf1: ConfigDb) -> None:
    leaf1["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] = "true"
    del leaf1["INTERFACE"]["Ethernet128|10.0.0.65/31"]
    (finding,) = _findings(leaf1)
    assert "frrcfgd gives FRR 'neighbor 10.0.0.64 update-source 10.0.0.65' and the session stays down" in finding


def test_twin_validate_reports_it_once_as_a_bgp_finding(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(REPO / "configs/default", configs)
    path = configs / "leaf1" / "config_db.json"
    db = json.loads(path.read_text())
    db["BGP_NEIGHBOR"][NB]["local_addr"] = "10.9.9.9"
    path.write_text(json.dumps(db))
    _, findings = validate_folder(configs, yang=False)
    mine = [f for f in findings if f.where == f"BGP_NEIGHBOR|{NB} local_addr"]
    assert [(f.check, f.file) for f in mine] == [("bgp", str(path))]
    assert "frrcfgd gives FRR 'neighbor 10.0.0.64 update-source 10.9.9.9'" in mine[0].fix   # the default configs
