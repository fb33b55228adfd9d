"""`twin validate`: a catalog of broken configs, each caught with its exact message."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from twin.errors import PlanError
from twin.validate.api import validate_folder
from twin.validate.qos import RoceSettings

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
     "set max_ebgp_paths to at least 4"),
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
