"""JUnit XML for CI systems: one testcase per check, its failed items in the failure text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from twin.model.results import CheckResult


def write_junit(path: Path, suite: str, results: list[CheckResult], seconds: float = 0.0) -> None:
    failures = sum(r.status == "failure" for r in results)
    errors = sum(r.status == "error" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)), failures=str(failures),
                       errors=str(errors), skipped=str(skipped), time=f"{seconds:.3f}")
    for r in results:
        case = ET.SubElement(ts, "testcase", classname=suite, name=r.name)
        bad = [f"{i.subject}: {i.message}" for i in r.failures]
        if r.status in ("failure", "error"):
            el = ET.SubElement(case, r.status, message=f"{len(bad)} of {len(r.items)} items failed: {r.description}")
            el.text = "\n".join(bad)
        elif r.status == "skipped":
            ET.SubElement(case, "skipped", message="nothing to check")
        if r.measurements:
            props = ET.SubElement(case, "properties")
            for k, v in r.measurements.items():
                ET.SubElement(props, "property", name=k, value=str(v))
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(f"{i.status}: {i.subject}: {i.message}" for i in r.items)
    ET.indent(root)
    path.write_text(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
