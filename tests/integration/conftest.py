"""Integration tier: real labs of FRR in namespaces. Needs root and FRR (installed by .ci/run).

Every lab gets a unique name and is torn down whatever the test did.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import leftovers, twin, twin_json, unique


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = []
    if os.geteuid() != 0:
        missing.append("root")
    if not Path("/usr/lib/frr/zebra").exists():
        missing.append("FRR (apt-get install frr)")
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.needs_root)
            if missing:
                item.add_marker(pytest.mark.skip(reason="needs " + " and ".join(missing)))


@pytest.fixture
def lab_name() -> Iterator[str]:
    """A unique lab name; the lab is removed after the test, pass or fail."""
    name = unique("t")
    yield name
    twin("down", "--name", name, check=False)
    assert not leftovers(name), f"teardown left {leftovers(name)}"


@pytest.fixture
def up_lab() -> Iterator[Callable[..., Any]]:
    """Bring labs up by CLI; every lab started is torn down at the end."""
    started: list[str] = []

    def start(target: str, name: str | None = None, timeout: float = 300) -> Any:
        name = name or unique("t")
        started.append(name)
        return twin_json("up", target, "--name", name, timeout=timeout)

    yield start
    for name in started:
        twin("down", "--name", name, check=False)
    left = [x for name in started for x in leftovers(name)]
    assert not left, f"teardown left {left}"
