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
    """(exit code, the JUnit testsuite of each check by the check's name, the Markdown summary)"""
    junit, summary = tmp_path / "out.xml", tmp_path / "summary.md"
    proc = twin("ci", str(LAB), "--configs", str(configs), "--junit", str(junit), "--summary", str(summary),
                "--name", name, check=False, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    assert leftovers(name) == []
    prefix = f"twin.flows.ci.{LAB.stem}."
    suites = {s.get("name", "").removeprefix(prefix): s for s in ET.parse(junit).getroot().iter("testsuite")}
    return proc.returncode, suites, summary.read_text()


def failed_testcases(suite: ET.Element) -> list[str]:
    """The names (nodes, files) of a check's failed testcases."""
    return [c.get("name", "") for c in suite.iter("testcase") if c.find("failure") is not None]


def test_good_configs_pass_every_stage(tmp_path: Path, configs: Path) -> None:
    rc, suites, summary = run_ci(tmp_path, configs, "cigood")
    assert rc == 0, summary
    assert {"validate yang", "validate bgp", "validate qos", "up", "push", "bgp-sessions", "link-mtu",
            "drill spine-loss spine1"} <= set(suites)
    assert not any(s.find(".//failure") is not None for s in suites.values())
    assert {c.get("name") for c in suites["push"].iter("testcase")} == {"spine1", "spine2", "leaf1", "leaf2", "leaf3"}
    yang = suites["validate yang"].find(".//skipped")
    assert yang is None or yang.get("message", "").startswith("SONiC's YANG models not found (looked in ")
    props = {p.get("name"): float(p.get("value", "nan"))
             for p in suites["drill spine-loss spine1"].iter("property")}
    assert props["loss_ms"] <= 200 and "converge_ms" in props
    traffic = {p.get("name"): float(p.get("value", "nan")) for p in suites["traffic all-to-all 4qp"].iter("property")}
    assert traffic["busbw_share"] >= 0.5 and 0.5 <= traffic["jfi"] <= 1
    assert summary.startswith("## twin ci: passed")


def test_static_finding_stops_before_anything_runs(tmp_path: Path, configs: Path) -> None:
    edit(configs, "leaf1", lambda db: db["BGP_NEIGHBOR"]["default|10.0.0.64"].update(asn="65199"))
    rc, suites, summary = run_ci(tmp_path, configs, "cistatic")
    assert rc == 1
    assert failed_testcases(suites["validate bgp"]) == [str(configs / "leaf1" / "config_db.json")]
    failure = suites["validate bgp"].find(".//failure")
    assert failure is not None and "has ASN 65100, not 65199" in (failure.text or "")
    assert "up" not in suites
    assert "FAILED at validate" in summary


def test_a_consistent_but_wrong_change_fails_verify(tmp_path: Path, configs: Path) -> None:
    """Both ends agree, so static checks pass, but a shut session is caught once it runs."""
    edit(configs, "leaf2", lambda db: db["BGP_NEIGHBOR"][next(iter(db["BGP_NEIGHBOR"]))].update(
        admin_status="down"))
    rc, suites, summary = run_ci(tmp_path, configs, "civerify")
    assert rc == 1
    assert suites["push"].find(".//failure") is None
    assert "leaf2" in failed_testcases(suites["bgp-sessions"])
    assert "FAILED at verify" in summary
