"""JUnit XML for CI systems: a testsuite per check, in it a testcase per node the check judged.

A check's items are grouped by the node each is about, the first word of its subject (as
twin.checks.health.failing_nodes reads it): `leaf1 -> spine2 (10.0.0.66)` is leaf1's, a link
`leaf1:Ethernet0 - spine1:Ethernet0` is its first port's, `server1 (10.1.0.1)` server1's, a drill's
target its own, a `twin validate` finding `configs/leaf1/config_db.json: PORT|Ethernet0 mtu` its
file's. A CI page then shows `<suite>.bgp-sessions` / `leaf1` failing, not one bgp-sessions testcase
for the whole fabric. Each testcase has classname `<suite>.<check>` and the node as its name; the
check's figures (measurements) are its testsuite's properties; a check with no items is one
testcase named after the check, and a skipped testcase says why (the items' messages, or the
check's description: "SONiC's YANG models not found (looked in ...)").
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from twin.model.results import CheckResult, ItemResult, Status


def subject_node(subject: str) -> str:
    """The node an item is about: its subject's first word, without a trailing colon."""
    return subject.split(" ", 1)[0].removesuffix(":") or subject


def by_node(items: list[ItemResult]) -> dict[str, list[ItemResult]]:
    """The items grouped by subject_node, in the order the nodes first appear."""
    groups: dict[str, list[ItemResult]] = {}
    for item in items:
        groups.setdefault(subject_node(item.subject), []).append(item)
    return groups


def case_status(items: list[ItemResult]) -> Status:
    for status in ("error", "failure"):
        if any(i.status == status for i in items):
            return status
    return "skipped" if all(i.status == "skipped" for i in items) else "success"


def _testcase(parent: ET.Element, classname: str, name: str, result: CheckResult,
              items: list[ItemResult], status: Status) -> None:
    case = ET.SubElement(parent, "testcase", classname=classname, name=name)
    if status in ("failure", "error"):
        bad = [i for i in items if i.status not in ("success", "skipped")]
        el = ET.SubElement(case, status, message=f"{len(bad)} of {len(items)} items failed: {result.description}")
        el.text = "\n".join(f"{i.subject}: {i.message}" for i in bad)
    elif status == "skipped":
        why = "; ".join(dict.fromkeys(i.message for i in items if i.message)) or result.description
        ET.SubElement(case, "skipped", message=why)
    if items:
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(f"{i.status}: {i.subject}: {i.message}" for i in items)


def write_junit(path: Path, suite: str, results: list[CheckResult], seconds: float = 0.0) -> None:
    root = ET.Element("testsuites", name=suite)
    totals: Counter[str] = Counter()
    for r in results:
        classname = f"{suite}.{r.name}"
        cases = [(node, items, case_status(items)) for node, items in by_node(r.items).items()] \
            or [(r.name, [], r.status)]
        counts = Counter(status for *_, status in cases)
        ts = ET.SubElement(root, "testsuite", name=classname, tests=str(len(cases)),
                           failures=str(counts["failure"]), errors=str(counts["error"]),
                           skipped=str(counts["skipped"]))
        if r.measurements:
            props = ET.SubElement(ts, "properties")
            for k, v in r.measurements.items():
                ET.SubElement(props, "property", name=k, value=str(v))
        for node, items, status in cases:
            _testcase(ts, classname, node, r, items, status)
        totals.update(counts)
        totals["tests"] += len(cases)
    root.attrib.update(tests=str(totals["tests"]), failures=str(totals["failure"]), errors=str(totals["error"]),
                       skipped=str(totals["skipped"]), time=f"{seconds:.3f}")
    ET.indent(root)
    path.write_text(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
