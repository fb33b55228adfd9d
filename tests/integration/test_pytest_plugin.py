"""The pytest plugin, used as a user would: run examples/test_fabric.py against a lab it brings up."""

from __future__ import annotations

import subprocess
import sys

import pytest
from labtools import DATA, REPO, leftovers, unique

pytestmark = pytest.mark.needs_root


def run_pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(REPO / "examples/test_fabric.py"), *args],
                          capture_output=True, text=True, cwd=REPO, timeout=600)


def test_example_tests_pass_on_a_lab_the_plugin_brings_up() -> None:
    name = unique("pt")
    proc = run_pytest("--twin-lab", str(DATA / "drill.yaml"), "--twin-name", name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout
    assert leftovers(name) == []


def test_without_a_lab_the_plugin_says_what_to_give() -> None:
    proc = run_pytest("-k", "established")
    assert proc.returncode != 0
    assert "give --twin-lab LAB.yaml (bring one up) or --twin-name NAME" in proc.stdout + proc.stderr
