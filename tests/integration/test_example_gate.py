"""The shipped CI-gate example: configs/gate passes `twin ci labs/gate.yaml`, and the MTU change in
examples/changes/ rehearses cleanly when both ends of every link change together, and is rolled
back when applied one switch at a time."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import REPO, leftovers, running_lab, twin, unique

pytestmark = pytest.mark.needs_root
CHANGE = REPO / "examples/changes/raise-mtu.yaml"


def test_generated_configs_pass_the_gate(tmp_path: Path) -> None:
    name = unique("ci")
    junit = tmp_path / "gate.xml"
    proc = twin("ci", "labs/gate.yaml", "--configs", "configs/gate", "--junit", str(junit), "--name", name,
                check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    suites = {s.get("name") for s in ET.parse(junit).getroot().iter("testsuite")}
    assert {f"twin.flows.ci.gate.{check}" for check in ("validate qos", "push", "link-mtu", "drill spine-loss spine2",
                                                        "drill link-down leaf4:Ethernet128")} <= suites
    assert leftovers(name) == []


@pytest.fixture(scope="module")
def gate() -> Iterator[str]:
    with running_lab("labs/gate.yaml", "g") as name:
        yield name


def mtu(lab: str, switch: str, port: str) -> str:
    db = json.loads(Path(f"/run/twin/{lab}/nodes/{switch}/config_db.json").read_text())
    return str(db["PORT"][port]["mtu"])


def test_mtu_change_one_switch_at_a_time_is_rolled_back(gate: str) -> None:
    proc = twin("rehearse", str(CHANGE), "--name", gate, "--json", check=False, timeout=300)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["rolled_back"], report["results"]
    assert report["stopped_at"] == "apply leaf1"
    assert mtu(gate, "leaf1", "Ethernet128") == "9100"


def test_mtu_change_on_every_switch_at_once_goes_live(gate: str) -> None:
    proc = twin("rehearse", str(CHANGE), "--name", gate, "--batch", "6", "--json", check=False, timeout=300)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report["results"]
    assert [r["name"] for r in report["results"]][-2:] == ["drill spine-loss spine2",
                                                          "drill link-down leaf4:Ethernet128"]
    assert mtu(gate, "leaf1", "Ethernet128") == mtu(gate, "spine1", "Ethernet0") == "9216"
