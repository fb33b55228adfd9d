"""The sonic-mgmt gNMI/gNOI tier's data (tests/fidelity/sonic_mgmt_gnmi/*.json) and its page: every case
names its sonic-mgmt source, what it asks and what its assertions expect, and either steps the tier knows
or the reason it cannot apply; docs/reference/sonic-mgmt-gnmi.md is the generator's output and lists every
case id."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIDELITY = ROOT / "tests" / "fidelity"


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return _module(ROOT / "scripts" / "sonic_mgmt_gnmi_doc.py", "sonic_mgmt_gnmi_doc")


@pytest.fixture(scope="module")
def tier() -> ModuleType:
    sys.path.insert(0, str(FIDELITY))
    return _module(FIDELITY / "test_sonic_mgmt_gnmi.py", "sonic_mgmt_tier")


def _steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for step in steps:
        out.append(step)
        out += _steps(step.get("steps", []))
    return out


def test_every_case_names_its_source_and_expectation_and_runs_or_says_why_not(generator: ModuleType,
                                                                               tier: ModuleType) -> None:
    docs = generator.load()
    assert {d["source"].rsplit("/", 1)[1].replace(".py", ".json") for d in docs} == \
        {p.name for p in (FIDELITY / "sonic_mgmt_gnmi").glob("*.json")}
    ids = [c["id"] for d in docs for c in d["cases"]]
    assert len(ids) == len(set(ids)), "case ids repeat"
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids), "case ids are words joined by '-'"
    for doc in docs:
        assert re.fullmatch(r"[0-9a-f]{40}", doc["sonic_mgmt_commit"])
        for case in doc["cases"]:
            assert case["source"].startswith(doc["source"] + ":"), case["id"]
            assert case["asks"] and case["expected"], case["id"]
            assert ("steps" in case) != ("not_applicable" in case), case["id"]
            for step in _steps(case.get("steps", [])):
                assert step["do"] in tier.STEPS or step["do"] == "repeat", (case["id"], step["do"])
                if step["do"] == "procedure":
                    assert step["name"] in tier.PROCEDURES, (case["id"], step["name"])


def test_the_rebooting_cases_run_last(tier: ModuleType) -> None:
    last = [c["id"] for c in tier.CASES if c.get("last")]
    assert last and [c["id"] for c in tier.CASES[-len(last):]] == last
    assert all("reboot" in i for i in last)


def test_the_page_is_the_generators_output_and_lists_every_case(generator: ModuleType) -> None:
    page = generator.DOCS.read_text()
    assert page == generator.render(generator.load()), "run python scripts/sonic_mgmt_gnmi_doc.py"
    listed = set(re.findall(r"^\| `([\w-]+)` \|", page, re.M))
    assert listed == {c["id"] for d in generator.load() for c in d["cases"]}
