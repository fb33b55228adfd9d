"""`twin validate`: a catalog of broken configs, each caught with its exact message."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from twin.model.errors import PlanError, TwinError
from twin.model.lab import RoceSettings
from twin.stages.validate.api import validate_folder
from twin.stages.validate.yang import find_models, locate, parse_tree, to_xml

REPO = Path(__file__).resolve().parents[2]
Db = dict[str, Any]


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    dst = tmp_path / "configs"
    shutil.copytree(REPO / "configs/default", dst)
    return dst


def edit(folder: Path, switch: str, change: Callable[[Db], None]) -> str:
    path = folder / switch / "config_db.json"
    db = json.loads(path.read_text())
    change(db)
    path.write_text(json.dumps(db))
    return str(path)


def test_the_shipped_configs_are_clean(configs: Path) -> None:
    assert validate_folder(configs) == (12, [])
    assert validate_folder(REPO / "configs/rail")[1] == []


def test_a_peer_outside_the_folder_is_not_a_finding_a_wrong_address_of_one_inside_is(configs: Path) -> None:
    """A neighbor named as a device the folder does not hold (a T2, another vendor's switch) cannot be
    checked here; one named as a switch of the folder at an address it does not have is a mistake."""
    def outside(db: Db) -> None:
        db["BGP_NEIGHBOR"]["default|10.0.9.1"] = {**db["BGP_NEIGHBOR"]["default|10.0.0.64"], "name": "ARISTA01T2"}

    def typo(db: Db) -> None:
        db["BGP_NEIGHBOR"]["default|10.0.9.3"] = db["BGP_NEIGHBOR"].pop("default|10.0.0.64")

    edit(configs, "leaf1", outside)
    assert [f for f in validate_folder(configs, yang=False)[1] if f.check == "bgp"] == []
    edit(configs, "leaf1", typo)
    bgp = [f for f in validate_folder(configs, yang=False)[1] if f.check == "bgp"]
    assert [(f.where, f.message) for f in bgp if "10.0.9.3" in f.where] == [
        ("BGP_NEIGHBOR|default|10.0.9.3", "no switch in this folder has address 10.0.9.3")]


def _drop_base(db: Db) -> None:
    del db["INTERFACE"]["Ethernet128"]


def _wrong_asn(db: Db) -> None:
    db["BGP_NEIGHBOR"]["default|10.0.0.64"]["asn"] = "65199"


def _one_sided(db: Db) -> None:
    del db["BGP_NEIGHBOR"]["default|10.0.0.65"]


def _dup_loopback(db: Db) -> None:
    db["LOOPBACK_INTERFACE"] = {"Loopback0": {}, "Loopback0|10.1.4.1/32": {}}


def _mtu(db: Db) -> None:
    db["PORT"]["Ethernet128"]["mtu"] = "1500"


def _pfc(db: Db) -> None:
    db["PORT_QOS_MAP"]["Ethernet128"]["pfc_enable"] = "3"


def _kmin(db: Db) -> None:
    db["WRED_PROFILE"]["ROCE_LOSSLESS"]["green_min_threshold"] = "4194304"


def _dscp(db: Db) -> None:
    db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"


def _ecmp(db: Db) -> None:
    db["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] = "2"


def _no_wred(db: Db) -> None:
    del db["QUEUE"]["Ethernet128|3"]


CASES = [
    ("missing INTERFACE base key", "leaf1", _drop_base,
     "INTERFACE|Ethernet128|10.0.0.65/31: the base key 'Ethernet128' is missing; add \"Ethernet128\": {}; "
     "correct the value or key"),
    ("wrong peer ASN", "leaf1", _wrong_asn,
     "BGP_NEIGHBOR|default|10.0.0.64 asn: peer spine1 (10.0.0.64) has ASN 65100, not 65199; set asn to 65100"),
    ("one-sided session", "spine1:leaf1", _one_sided,
     "BGP_NEIGHBOR|default|10.0.0.64: one-sided session: spine1 has no BGP_NEIGHBOR for any address of leaf1; "
     "add BGP_NEIGHBOR|default|10.0.0.65 to {spine1}"),
    ("duplicate loopback", "leaf2", _dup_loopback,
     "LOOPBACK_INTERFACE|Loopback0|10.1.4.1/32: address 10.1.4.1 is also on leaf1 "
     "(LOOPBACK_INTERFACE|Loopback0|10.1.4.1/32), leaf2 (LOOPBACK_INTERFACE|Loopback0|10.1.4.1/32); "
     "give every interface and loopback its own address"),
    ("MTU mismatch", "leaf1", _mtu,
     "PORT|Ethernet128 mtu: MTU 1500 differs from spine1 Ethernet0 (9100) on link 10.0.0.64/31; "
     "set it to 9100 like the other end"),
    ("PFC priority mismatch", "leaf1", _pfc,
     "PORT_QOS_MAP|Ethernet128 pfc_enable: PFC on priorities 3, the fabric uses 3,4; "
     "set pfc_enable to \"3,4\" on every port"),
    ("Kmin > Kmax", "leaf1", _kmin,
     "WRED_PROFILE|ROCE_LOSSLESS green_min_threshold: Kmin 4194304 is not below Kmax 2097152; "
     "set the minimum threshold below the maximum"),
    ("DSCP map differs on one hop", "spine2", _dscp,
     "DSCP_TO_TC_MAP|ROCE: differs from the map the other switches use (entries 26); "
     "use the same map on every hop, or traffic changes class mid-path"),
    ("ECMP narrower than the spines", "leaf3", _ecmp,
     "BGP_GLOBALS_AF|default|ipv4_unicast max_ebgp_paths: ECMP width 2 is less than the 4 spines; "
     "set max_ebgp_paths to at least 4, or leave it unset"),
    ("lossless queue without ECN", "leaf4", _no_wred,
     "QUEUE|Ethernet128|3 wred_profile: lossless queue 3 of Ethernet128 has no WRED/ECN profile; "
     "attach an ECN-marking WRED_PROFILE so DCQCN gets congestion signals"),
]


@pytest.mark.parametrize(("switch", "change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_config_is_caught(configs: Path, switch: str, change: Callable[[Db], None], expected: str) -> None:
    """`switch` is the one edited, or `edited:reported` when the finding belongs in another file."""
    edited, _, reported = switch.partition(":")
    edit(configs, edited, change)
    path = configs / (reported or edited) / "config_db.json"
    _, findings = validate_folder(configs)
    files = {name: str(configs / name / "config_db.json") for name in ("leaf1", "spine1")}
    lines = [str(f) for f in findings]
    expected = expected.replace("{spine1}", files["spine1"])
    assert any(line == f"{path}: {expected}" for line in lines), "\n".join(lines)


def _leaf_asn(*fields: tuple[str, str, str]) -> Callable[[Db], None]:
    def change(db: Db) -> None:
        for table, key, field in fields:
            db[table][key][field] = "65199"
    return change


LOCAL_ASN, BGP_ASN = ("BGP_GLOBALS", "default", "local_asn"), ("DEVICE_METADATA", "localhost", "bgp_asn")


@pytest.mark.parametrize(("folder", "change", "expected"), [
    pytest.param("configs/gate", _leaf_asn(LOCAL_ASN, BGP_ASN),
                 "BGP_GLOBALS|default local_asn: ASN 65199, but spine1 and spine2 expect 65101 for leaf1 (their "
                 "BGP_NEIGHBOR asn); set BGP_GLOBALS|default local_asn and DEVICE_METADATA|localhost bgp_asn to "
                 "65101", id="both-spines-against-the-leaf"),
    pytest.param("configs/default", _leaf_asn(LOCAL_ASN, BGP_ASN),
                 "BGP_GLOBALS|default local_asn: ASN 65199, but spine1, spine2, spine3 and spine4 expect 65101 for "
                 "leaf1 (their BGP_NEIGHBOR asn); set BGP_GLOBALS|default local_asn and DEVICE_METADATA|localhost "
                 "bgp_asn to 65101", id="four-spines-against-the-leaf"),
    pytest.param("configs/gate", _leaf_asn(BGP_ASN),
                 "DEVICE_METADATA|localhost bgp_asn: ASN 65199, but BGP_GLOBALS|default local_asn says 65101 and "
                 "spine1 and spine2 expect 65101 for leaf1 (their BGP_NEIGHBOR asn); set DEVICE_METADATA|localhost "
                 "bgp_asn to 65101", id="metadata-against-its-own-file-and-the-spines"),
])
def test_a_wrong_leaf_asn_is_one_finding_on_the_leafs_file(tmp_path: Path, folder: str,
                                                           change: Callable[[Db], None], expected: str) -> None:
    """The spines agree with each other on the leaf's ASN: the leaf's file is the odd one out, named once,
    and no spine's file is told to take the leaf's mistake."""
    configs = tmp_path / "configs"
    shutil.copytree(REPO / folder, configs)
    path = edit(configs, "leaf1", change)
    _, findings = validate_folder(configs, yang=False)
    assert [str(f) for f in findings] == [f"{path}: {expected}"]


def test_one_spine_wrong_about_a_leaf_is_named_on_that_spine(configs: Path) -> None:
    path = edit(configs, "spine2", lambda db: db["BGP_NEIGHBOR"]["default|10.0.0.67"].update(asn="65199"))
    _, findings = validate_folder(configs, yang=False)
    assert [str(f) for f in findings] == [
        f"{path}: BGP_NEIGHBOR|default|10.0.0.67 asn: peer leaf1 (10.0.0.67) has ASN 65101, not 65199; "
        "set asn to 65101"]


@pytest.mark.parametrize(("spine1", "spine2", "expected"), [
    pytest.param("65199", "65101", {"spine2": "peer leaf1 (10.0.0.67) has ASN 65199, not 65101; set asn to 65199"},
                 id="the-leaf-and-one-spine-against-the-other"),
    pytest.param("65102", "65101", {"spine1": "peer leaf1 (10.0.0.65) has ASN 65199, not 65102; set asn to 65199",
                                    "spine2": "peer leaf1 (10.0.0.67) has ASN 65199, not 65101; set asn to 65199"},
                 id="no-majority-the-leafs-own-stands"),
])
def test_the_majority_names_the_odd_ones_out(tmp_path: Path, spine1: str, spine2: str,
                                             expected: dict[str, str]) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(REPO / "configs/gate", configs)
    edit(configs, "leaf1", _leaf_asn(LOCAL_ASN, BGP_ASN))
    edit(configs, "spine1", lambda db: db["BGP_NEIGHBOR"]["default|10.0.0.65"].update(asn=spine1))
    edit(configs, "spine2", lambda db: db["BGP_NEIGHBOR"]["default|10.0.0.67"].update(asn=spine2))
    _, findings = validate_folder(configs, yang=False)
    key = {"spine1": "default|10.0.0.65", "spine2": "default|10.0.0.67"}
    assert sorted(str(f) for f in findings) == sorted(
        f"{configs}/{spine}/config_db.json: BGP_NEIGHBOR|{key[spine]} asn: {text}" for spine, text in expected.items())


def test_roce_mtu_and_storage_separation_from_the_lab(configs: Path) -> None:
    _, findings = validate_folder(configs, RoceSettings(mtu=9200))
    assert len(findings) == 8 * 6 + 4 * 8  # every port of 8 leaves (6 ports) and 4 spines (8 ports)
    assert str(findings[0]).endswith("MTU 9100 is below the RoCE MTU 9200 the lab declares; raise it to at least 9200")
    _, findings = validate_folder(configs, RoceSettings(compute_dscp=26, storage_dscp=26))
    assert findings and all(f.where == "DSCP_TO_TC_MAP|ROCE 26" for f in findings)
    assert validate_folder(configs, RoceSettings(compute_dscp=26, storage_dscp=24))[1] == []


def test_unreadable_input_is_an_error_not_a_finding(configs: Path) -> None:
    (configs / "leaf1" / "config_db.json").write_text("{ not json")
    with pytest.raises(PlanError, match=r"leaf1/config_db.json:1: \(json\): not valid JSON"):
        validate_folder(configs)
    empty = configs.parent / "empty"
    empty.mkdir()
    with pytest.raises(PlanError, match=r"no config_db\.json files found"):
        validate_folder(empty)


MODELS = find_models()
needs_models = pytest.mark.skipif(MODELS is None, reason="SONiC YANG models not found: set TWIN_SONIC_YANG, or "
                                  "TWIN_SONIC_REFERENCE to a folder holding sonic-yang-models")


def _admin(db: Db) -> None:
    db["PORT"]["Ethernet0"]["admin_status"] = "upp"


def _speed(db: Db) -> None:
    db["PORT"]["Ethernet4"]["speed"] = "9999999"


def _dangling_wred(db: Db) -> None:
    db["QUEUE"]["Ethernet128|3"]["wred_profile"] = "NOPE"


def _unknown_table(db: Db) -> None:
    db["NOT_A_SONIC_TABLE"] = {"x": {"a": "b"}}


YANG_CASES = [
    ("bad admin_status", _admin,
     'PORT|Ethernet0 admin_status: SONiC YANG: Invalid enumeration value "upp"; use a value SONiC\'s model accepts'),
    ("speed out of range", _speed,
     'PORT|Ethernet4 speed: SONiC YANG: Unsatisfied range - value "9999999" is out of the allowed range; '
     "use a value SONiC's model accepts"),
    ("dangling leafref", _dangling_wred,
     'QUEUE|Ethernet128|3 wred_profile: SONiC YANG: Invalid leafref value "NOPE" - no target instance '
     '"/wrd:sonic-wred-profile/wrd:WRED_PROFILE/wrd:WRED_PROFILE_LIST/wrd:name" with the same value; '
     "use a value SONiC's model accepts"),
    ("unknown table", _unknown_table,
     "NOT_A_SONIC_TABLE: no SONiC YANG model defines this table; check the table and key against SONiC's YANG models"),
]


@needs_models
@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in YANG_CASES], ids=[c[0] for c in YANG_CASES])
def test_sonic_yang_rejects(configs: Path, change: Callable[[Db], None], expected: str) -> None:
    path = edit(configs, "leaf1", change)
    _, findings = validate_folder(configs, models=MODELS)
    lines = [str(f) for f in findings if f.check == "yang"]
    assert lines == [f"{path}: {expected}"]


@needs_models
def test_every_pinpointed_yang_error_is_reported(configs: Path) -> None:
    path = edit(configs, "leaf1", lambda db: (_admin(db), _speed(db)))
    _, findings = validate_folder(configs, models=MODELS)
    assert sorted(f.where for f in findings if f.check == "yang") == ["PORT|Ethernet0 admin_status",
                                                                      "PORT|Ethernet4 speed"]
    assert all(f.file == path for f in findings)


def test_missing_models_are_an_error_that_says_where_to_look(configs: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWIN_SONIC_YANG", str(tmp_path / "nowhere"))
    looked = re.escape(f"looked in {tmp_path}/nowhere/yang-models)")
    with pytest.raises(TwinError, match=rf"{looked}.*--models or TWIN_SONIC_YANG"):
        validate_folder(configs, models=tmp_path / "nowhere")
    assert validate_folder(configs, yang=False)[1] == []


TREE = """module: sonic-queue
  +--rw sonic-queue
     +--rw QUEUE
        +--rw QUEUE_LIST* [ifname qindex]
        |  +--rw ifname          union
        |  +--rw qindex          string
        |  +--rw wred_profile?   -> /wrd:sonic-wred-profile/wrd:WRED_PROFILE/wrd:WRED_PROFILE_LIST/wrd:name
        +--rw VOQ_QUEUE_LIST* [hostname asic_name ifname qindex]
           +--rw hostname        stypes:hostname
module: sonic-dscp-tc-map
  +--rw sonic-dscp-tc-map
     +--rw DSCP_TO_TC_MAP
        +--rw DSCP_TO_TC_MAP_LIST* [name]
           +--rw name    string
           +--rw DSCP_TO_TC_MAP* [dscp]
              +--rw dscp    string
              +--rw tc?     stypes:tc_type
"""


def test_config_db_becomes_yang_instance_data() -> None:
    index = parse_tree(TREE, {"sonic-queue": "urn:q", "sonic-dscp-tc-map": "urn:d"})
    assert [x["keys"] for x in index["QUEUE"]["lists"]] == [["ifname", "qindex"],
                                                            ["hostname", "asic_name", "ifname", "qindex"]]
    assert index["DSCP_TO_TC_MAP"]["lists"][0]["map"] == {"name": "DSCP_TO_TC_MAP", "key": "dscp", "value": "tc"}
    xml, problems = to_xml({"QUEUE": {"Ethernet0|3": {"wred_profile": "W"}, "a|b|c": {}},
                            "DSCP_TO_TC_MAP": {"ROCE": {"26": "3"}}}, index)
    assert '<sonic-queue xmlns="urn:q"><QUEUE><QUEUE_LIST><ifname>Ethernet0</ifname><qindex>3</qindex>' \
           "<wred_profile>W</wred_profile></QUEUE_LIST></QUEUE></sonic-queue>" in xml
    assert "<DSCP_TO_TC_MAP_LIST><name>ROCE</name><DSCP_TO_TC_MAP><dscp>26</dscp><tc>3</tc>" in xml
    assert problems == [("QUEUE|a|b|c", "", "a QUEUE key has 2, 4 part(s) separated by '|', this one has 3")]


def test_libyang_paths_point_back_at_table_key_field() -> None:
    assert locate("/sonic-port:sonic-port/PORT/PORT_LIST[name='Ethernet0']/admin_status") == \
        ("PORT", "Ethernet0", "admin_status")
    assert locate("/sonic-queue:sonic-queue/QUEUE/QUEUE_LIST[ifname='Ethernet0'][qindex='3']/wred_profile") == \
        ("QUEUE", "Ethernet0|3", "wred_profile")
    assert locate("/sonic-dscp-tc-map:sonic-dscp-tc-map/DSCP_TO_TC_MAP/DSCP_TO_TC_MAP_LIST[name='R']/"
                  "DSCP_TO_TC_MAP[dscp='70']/tc") == ("DSCP_TO_TC_MAP", "R", "70")


def test_without_any_models_the_yang_check_is_skipped_and_says_where_it_looked(
        configs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TWIN_SONIC_YANG", raising=False)
    monkeypatch.setenv("TWIN_SONIC_REFERENCE", str(tmp_path / "reference"))
    notes: list[str] = []
    assert validate_folder(configs, notes=notes) == (12, [])
    assert len(notes) == 1 and notes[0].startswith(
        f"SONiC's YANG models not found (looked in {tmp_path}/reference/sonic-yang-models/yang-models): "
        "the YANG check was skipped;")


def test_schema_findings_leave_the_models_verdict_to_libyang_when_it_ran(tmp_path: Path) -> None:
    """One finding per mistake: with libyang's verdict, the built-in digest of the models is not repeated,
    while twin's own rules (a neighbor's local address must be on the switch) still are."""
    from configdb_edits import LEAF1

    from twin.model.findings import SwitchConfig
    from twin.stages.validate.schema import schema_findings
    db = json.loads(LEAF1.read_text())
    db["PORT"]["Ethernet0"]["color"] = "blue"
    db["BGP_NEIGHBOR"]["default|10.0.0.64"]["local_addr"] = "10.9.9.9"
    cfg = SwitchConfig("leaf1", tmp_path / "config_db.json", db)
    mine = "BGP_NEIGHBOR|default|10.0.0.64 local_addr"
    assert [f.where for f in schema_findings(cfg)] == ["PORT|Ethernet0 color", mine]
    assert [f.where for f in schema_findings(cfg, yang_ran=True)] == [mine]


# -- VLANs: VLAN_MEMBER's leafrefs and musts reach into modules no table of the config is in ------

S6000_PORT = {"alias": "fortyGigE0/{i}", "index": "{n}", "lanes": "{lanes}", "speed": "40000", "mtu": "9100",
              "admin_status": "up"}


def _port(i: int) -> dict[str, str]:
    n = i // 4
    lanes = ",".join(str(25 + 4 * n + k) for k in range(4))
    return {k: v.format(i=i, n=n, lanes=lanes) for k, v in S6000_PORT.items()}


def _vlan_config() -> Db:
    """A ToR as SONiC users write one: a routed uplink, a VLAN with an SVI for its servers (one member
    untagged on a port, one tagged on a port channel)."""
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "tor1", "bgp_asn": "65101", "type": "ToRRouter",
                                          "hwsku": "Force10-S6000", "platform": "x86_64-kvm_x86_64-r0",
                                          "mac": "52:54:00:12:34:56"}},
        "PORT": {f"Ethernet{i}": _port(i) for i in (0, 8, 12)},
        "PORTCHANNEL": {"PortChannel1": {"admin_status": "up", "mtu": "9100", "min_links": "1", "lacp_key": "auto"}},
        "PORTCHANNEL_MEMBER": {"PortChannel1|Ethernet12": {}},
        "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.1/31": {}},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}},
        "VLAN": {"Vlan1000": {"vlanid": "1000"}},
        "VLAN_MEMBER": {"Vlan1000|Ethernet8": {"tagging_mode": "untagged"},
                        "Vlan1000|PortChannel1": {"tagging_mode": "tagged"}},
        "VLAN_INTERFACE": {"Vlan1000": {}, "Vlan1000|192.168.0.1/24": {}},
    }


# VLANs are not emulated (no 8021q here): these tests are about SONiC's YANG, so they accept those tables
VLAN_TABLES = ["VLAN", "VLAN_MEMBER", "VLAN_INTERFACE", "PORTCHANNEL", "PORTCHANNEL_MEMBER"]


def _vlan_folder(tmp_path: Path, change: Callable[[Db], None] | None = None) -> Path:
    db = _vlan_config()
    if change is not None:
        change(db)
    (tmp_path / "tor1").mkdir(parents=True)
    (tmp_path / "tor1" / "config_db.json").write_text(json.dumps(db, indent=4))
    return tmp_path


@needs_models
def test_vlan_member_validates_with_the_modules_its_leafrefs_need(tmp_path: Path) -> None:
    """Regression: only the modules of the tables in use were loaded, and VLAN_MEMBER's port, a leafref
    to PORT or PORTCHANNEL with musts on sonic-mirror-session and sonic-interface, failed with
    'Unknown/non-implemented module'."""
    assert validate_folder(_vlan_folder(tmp_path), models=MODELS, accepted=VLAN_TABLES) == (1, [])


@needs_models
@pytest.mark.parametrize(("member", "message"), [
    ("Ethernet16", 'Invalid union value "Ethernet16" - no matching subtype found'),  # in neither PORT nor PORTCHANNEL
    ("Ethernet0", "Port is a router interface"),                                     # sonic-interface's INTERFACE
    ("Ethernet12", "Port is a member of a port channel"),                            # PORTCHANNEL_MEMBER
])
def test_vlan_member_leafrefs_and_musts_are_judged(tmp_path: Path, member: str, message: str) -> None:
    folder = _vlan_folder(tmp_path, lambda db: db["VLAN_MEMBER"].update(
        {f"Vlan1000|{member}": {"tagging_mode": "tagged"}}))
    _, findings = validate_folder(folder, models=MODELS, accepted=VLAN_TABLES)
    assert [(f.check, f.where, f.message) for f in findings] == [
        ("yang", f"VLAN_MEMBER|Vlan1000|{member} port", f"SONiC YANG: {message}")]


@needs_models
def test_modules_loaded_for_a_table_include_what_it_imports() -> None:
    from twin.stages.validate.yang import modules_to_load, prepare

    assert MODELS is not None
    modules = modules_to_load(prepare(MODELS), {"sonic-vlan"})
    assert {"sonic-vlan", "sonic-port", "sonic-portchannel", "sonic-mirror-session", "sonic-interface",
            "sonic-types"} <= set(modules)
    assert "sonic-acl" not in modules  # nothing sonic-vlan does not reach


@needs_models
def test_cli_validates_a_vlan_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from twin.cli import app as cli

    folder = _vlan_folder(tmp_path)
    accept = [arg for table in VLAN_TABLES for arg in ("--accept", table)]
    monkeypatch.setattr("sys.argv", ["twin", "validate", str(folder), "--models", str(MODELS), *accept])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 0
    assert "1 switches, 0 findings" in capsys.readouterr().out


def test_models_are_found_in_the_reference_artefacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sonic-yang-models" / "yang-models").mkdir(parents=True)
    monkeypatch.delenv("TWIN_SONIC_YANG", raising=False)
    monkeypatch.setenv("TWIN_SONIC_REFERENCE", str(tmp_path))
    assert find_models() == tmp_path / "sonic-yang-models"
    monkeypatch.setenv("TWIN_SONIC_YANG", str(tmp_path / "elsewhere"))
    assert find_models() is None  # a folder named explicitly is the only one looked at


def test_classic_configs_have_no_ecmp_field_to_get_wrong(tmp_path: Path) -> None:
    """bgpcfgd takes maximum-paths from SONiC's constants, and an unset max_ebgp_paths is FRR's default
    (its multipath number): neither narrows ECMP."""
    catalog = Path(__file__).resolve().parents[1] / "fidelity" / "catalog"
    for name in ("t0-classic", "t1-classic"):
        (tmp_path / name).mkdir()
        shutil.copy(catalog / f"{name}.json", tmp_path / name / "config_db.json")
    _, findings = validate_folder(tmp_path, None, yang=False)
    assert [f for f in findings if f.check == "ecmp"] == []
