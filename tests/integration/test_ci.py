"""`twin ci` end to end: a good config folder passes; broken ones fail at the right stage, named in
the JUnit XML; the lab is gone afterwards either way."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from labtools import DATA, leftovers, twin

pytestmark = pytest.mark.needs_root
LAB = DATA / "ci-lab.yaml"


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    out = tmp_path / "configs"
    twin("plan", str(LAB), "-o", str(out), "--json")
    return out


def edit(folder: Path, switch: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = folder / switch / "config_db.json"
    db = json.loads(path.read_text())
    change(db)
    path.write_text(json.dumps(db))


def run_ci(tmp_path: Path, configs: Path, name: str) -> tuple[int, dict[str, ET.Element], str]:
    junit, summary = tmp_path / "out.xml", tmp_path / "summary.md"
    proc = twin("ci", str(LAB), "--configs", str(configs), "--junit", str(junit), "--summary", str(summary),
                "--name", name, check=False, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    assert leftovers(name) == []
    cases = {c.get("name", ""): c for c in ET.parse(junit).getroot().iter("testcase")}
    return proc.returncode, cases, summary.read_text()


def test_good_configs_pass_every_stage(tmp_path: Path, configs: Path) -> None:
    rc, cases, summary = run_ci(tmp_path, configs, "cigood")
    assert rc == 0, summary
    assert {"validate yang", "validate bgp", "validate qos", "up", "push", "bgp-sessions", "link-mtu",
            "drill spine-loss spine1"} <= set(cases)
    assert not any(c.find("failure") is not None for c in cases.values())
    props = {p.get("name"): float(p.get("value", "nan"))
             for p in cases["drill spine-loss spine1"].iter("property")}
    assert props["loss_ms"] <= 200 and "converge_ms" in props
    traffic = {p.get("name"): float(p.get("value", "nan")) for p in cases["traffic all-to-all 4qp"].iter("property")}
    assert traffic["busbw_share"] >= 0.5 and 0.5 <= traffic["jfi"] <= 1
    assert summary.startswith("## twin ci: passed")


def test_static_finding_stops_before_anything_runs(tmp_path: Path, configs: Path) -> None:
    edit(configs, "leaf1", lambda db: db["BGP_NEIGHBOR"]["default|10.0.0.64"].update(asn="65199"))
    rc, cases, summary = run_ci(tmp_path, configs, "cistatic")
    assert rc == 1
    failure = cases["validate bgp"].find("failure")
    assert failure is not None and "has ASN 65100, not 65199" in (failure.text or "")
    assert "up" not in cases
    assert "FAILED at validate" in summary


def test_a_consistent_but_wrong_change_fails_verify(tmp_path: Path, configs: Path) -> None:
    """Both ends agree, so static checks pass, but a shut session is caught once it runs."""
    edit(configs, "leaf2", lambda db: db["BGP_NEIGHBOR"][next(iter(db["BGP_NEIGHBOR"]))].update(
        admin_status="down"))
    rc, cases, summary = run_ci(tmp_path, configs, "civerify")
    assert rc == 1
    assert cases["push"].find("failure") is None
    failure = cases["bgp-sessions"].find("failure")
    assert failure is not None and "leaf2" in (failure.text or "")
    assert "FAILED at verify" in summary
