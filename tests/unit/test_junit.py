"""JUnit XML (twin.report.junit): a testsuite per check, a testcase per node it judged, the figures kept."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from twin.model.results import CheckResult, ItemResult, summarize
from twin.report.junit import subject_node, write_junit

SUITE = "twin.verify.lab1"


def _item(subject: str, status: str = "success", message: str = "") -> ItemResult:
    return ItemResult.model_validate({"subject": subject, "status": status, "message": message})


BGP = summarize("bgp-sessions", "every planned BGP session is Established", [
    _item("leaf1 -> spine1 (10.0.0.64)", message="Established"),
    _item("leaf1 -> spine2 (10.0.0.66)", "failure", "expected Established, seen Active"),
    _item("leaf2 -> spine1 (10.0.0.192)", message="Established"),
], {"established": 2, "total": 3})
MTU = summarize("link-mtu", "interface MTUs agree on both ends of every link", [
    _item("leaf1:Ethernet0 - server1:eth1", "failure", "expected equal MTUs, seen 9000 and 9100"),
    _item("leaf1:Ethernet128 - spine1:Ethernet0", message="MTU 9100"),
])
DRILL = summarize("drill spine-loss spine1", "failure drill spine-loss",
                  [_item("spine1", message="met its SLOs and restored the fabric")], {"loss_ms": 120.0})
YANG = CheckResult(name="validate yang", status="skipped",
                   description="SONiC's YANG models not found (looked in /ref/sonic-yang-models/yang-models): ...")
FRR = summarize("frr-config", "each switch's FRR runs what its CONFIG_DB renders", [
    _item("leaf1", "skipped", "FRR's running config not compared: no vty"),
    _item("leaf2", message="FRR runs what CONFIG_DB renders"),
])
VALIDATE = summarize("validate bgp", "static check: bgp", [
    _item("configs/leaf1/config_db.json: BGP_GLOBALS|default local_asn", "failure", "ASN 65199, but ..."),
    _item("configs/leaf1/config_db.json: DEVICE_METADATA|localhost bgp_asn", "failure", "ASN 65199, but ..."),
])


def _write(tmp_path: Path, *results: CheckResult) -> ET.Element:
    path = tmp_path / "out.xml"
    write_junit(path, SUITE, list(results), 12.5)
    return ET.parse(path).getroot()


def _cases(root: ET.Element) -> dict[tuple[str, str], ET.Element]:
    return {(c.get("classname", ""), c.get("name", "")): c for c in root.iter("testcase")}


def test_the_node_is_the_first_word_of_the_subject() -> None:
    assert subject_node("leaf1 -> spine2 (10.0.0.66)") == "leaf1"
    assert subject_node("leaf1:Ethernet0 - server1:eth1") == "leaf1:Ethernet0"
    assert subject_node("configs/leaf1/config_db.json: PORT|Ethernet0 mtu") == "configs/leaf1/config_db.json"
    assert subject_node("spine1") == "spine1"


def test_one_testcase_per_node_and_check(tmp_path: Path) -> None:
    root = _write(tmp_path, BGP, MTU, VALIDATE)
    cases = _cases(root)
    assert list(cases) == [(f"{SUITE}.bgp-sessions", "leaf1"), (f"{SUITE}.bgp-sessions", "leaf2"),
                           (f"{SUITE}.link-mtu", "leaf1:Ethernet0"), (f"{SUITE}.link-mtu", "leaf1:Ethernet128"),
                           (f"{SUITE}.validate bgp", "configs/leaf1/config_db.json")]
    leaf1 = cases[(f"{SUITE}.bgp-sessions", "leaf1")].find("failure")
    assert leaf1 is not None and leaf1.text == "leaf1 -> spine2 (10.0.0.66): expected Established, seen Active"
    assert leaf1.get("message") == "1 of 2 items failed: every planned BGP session is Established"
    assert cases[(f"{SUITE}.bgp-sessions", "leaf2")].find("failure") is None
    server_link = cases[(f"{SUITE}.link-mtu", "leaf1:Ethernet0")].find("failure")
    assert server_link is not None
    assert server_link.text == "leaf1:Ethernet0 - server1:eth1: expected equal MTUs, seen 9000 and 9100"
    one_file = cases[(f"{SUITE}.validate bgp", "configs/leaf1/config_db.json")].find("failure")
    assert one_file is not None and one_file.get("message", "").startswith("2 of 2 items failed")
    assert [s.get("name") for s in root.iter("testsuite")] == [f"{SUITE}.bgp-sessions", f"{SUITE}.link-mtu",
                                                              f"{SUITE}.validate bgp"]
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped"), root.get("time")) == \
        ("5", "3", "0", "0", "12.500")


def test_the_figures_are_the_checks_properties(tmp_path: Path) -> None:
    root = _write(tmp_path, BGP, DRILL)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    props = {p.get("name"): p.get("value") for p in suites[f"{SUITE}.bgp-sessions"].iter("property")}
    assert props == {"established": "2.0", "total": "3.0"}
    drill = suites[f"{SUITE}.drill spine-loss spine1"]
    assert {p.get("name"): p.get("value") for p in drill.iter("property")} == {"loss_ms": "120.0"}
    assert [(c.get("name"), c.find("failure")) for c in drill.iter("testcase")] == [("spine1", None)]


def test_a_check_with_no_items_is_one_testcase_skipped_with_its_description(tmp_path: Path) -> None:
    root = _write(tmp_path, YANG, FRR)
    cases = _cases(root)
    skipped = cases[(f"{SUITE}.validate yang", "validate yang")].find("skipped")
    assert skipped is not None and skipped.get("message") == YANG.description
    leaf1 = cases[(f"{SUITE}.frr-config", "leaf1")].find("skipped")
    assert leaf1 is not None and leaf1.get("message") == "FRR's running config not compared: no vty"
    assert cases[(f"{SUITE}.frr-config", "leaf2")].find("skipped") is None
    assert (root.get("tests"), root.get("skipped")) == ("3", "2")


def test_an_error_is_its_own_testcase(tmp_path: Path) -> None:
    broken = CheckResult(name="ecmp-width", description="full ECMP", status="error",
                         items=[_item("(check)", "error", "KeyError: 'leaf9'")])
    root = _write(tmp_path, broken)
    error = _cases(root)[(f"{SUITE}.ecmp-width", "(check)")].find("error")
    assert error is not None and error.text == "(check): KeyError: 'leaf9'"
    assert root.get("errors") == "1"
