"""Integration tier: real labs of FRR in namespaces. Needs root and FRR (installed by .ci/run).

Every lab gets a unique name and is torn down whatever the test did.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
    absent = _absent_tools()
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.needs_root)
            if missing:
                item.add_marker(pytest.mark.skip(reason="needs " + " and ".join(missing)))
        for marker, reason in absent.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


def _absent_tools() -> dict[str, str]:
    """Marker -> why its tests cannot run on this machine (only for what is missing)."""
    from twin.host.dockerapi import engine_running
    from twin.runtime.clab.command import ClabCommand

    absent = {}
    docker = engine_running()
    if not docker:
        absent["needs_docker"] = "no Docker engine is running ('make test' installs and starts one)"
    if not ClabCommand().available():
        absent["needs_containerlab"] = ("containerlab is not installed, natively or as its image "
                                        "ghcr.io/srl-labs/clab (no registry here to pull it from)")
    if not docker or not _has_sonic_image():
        absent["needs_sonic_image"] = ("no docker-sonic-vs image in the local Docker engine "
                                       "(load one with 'docker load -i docker-sonic-vs.gz'; set TWIN_SONIC_IMAGE)")
    if shutil.which("redis-server") is None:
        absent["needs_redis"] = "Debian's redis-server is not installed ('make test' installs it)"
    return absent


def _has_sonic_image() -> bool:
    from twin.host.dockerapi import client

    return bool(client().images.list(name=os.environ.get("TWIN_SONIC_IMAGE", "docker-sonic-vs")))


@pytest.fixture
def two_netns() -> Iterator[tuple[str, str]]:
    """Two empty network namespaces with unique names, deleted after the test, pass or fail."""
    names = (unique("tw-ns-"), unique("tw-ns-"))
    for name in names:
        subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield names
    finally:
        for name in names:
            subprocess.run(["ip", "netns", "delete", name], check=False)


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
