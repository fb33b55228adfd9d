"""pytest plugin: write your own fabric tests against a running twin.

    pytest --twin-lab labs/default.yaml tests/fabric/      # brings the lab up, tears it down after
    pytest --twin-name default tests/fabric/               # uses a lab that is already running

Fixtures:
- `twin_lab`: the running lab for the test session (a `TwinLab`: name, plan, status, exec, drill);
- `gnmi`: `gnmi("leaf1")` returns a connected pygnmi `gNMIclient` for that switch, closed after the test.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from twin.model.drill import DrillReport


class TwinLab:
    def __init__(self, name: str) -> None:
        from twin.lab.running import RunningLab

        lab = RunningLab.read(name)
        if lab is None:
            raise pytest.UsageError(f"lab '{name}' is not running")
        self.lab = lab
        self.name, self.state, self.plan = name, lab.state, lab.plan

    def status(self) -> dict[str, Any]:
        from twin.cli.app import status_doc

        return status_doc(self.name)

    def exec(self, node: str, *cmd: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a command inside a node (a server's ping, a switch's vtysh)."""
        from twin.runtime.registry import runtime_of

        argv = runtime_of(self.state).exec_argv(self.state, node, list(cmd))
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def gnmi_target(self, node: str) -> dict[str, Any]:
        target = self.lab.gnmi_target(node)
        if target is None:
            raise pytest.UsageError(f"{node} has no gNMI agent (only switches do)")
        return target

    def drill(self, kind: str, target: str | None = None, **params: Any) -> DrillReport:
        from twin.drills.api import run_drill
        from twin.drills.slo import single

        return run_drill(self.name, single(kind, target, **params))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("twin", "fabric twin")
    group.addoption("--twin-lab", type=Path, help="lab or topology YAML to bring up for the session")
    group.addoption("--twin-name", help="use (or name) this lab; with --twin-lab a new lab of this name")


@pytest.fixture(scope="session")
def twin_lab(request: pytest.FixtureRequest) -> Iterator[TwinLab]:
    lab_file: Path | None = request.config.getoption("--twin-lab")
    name: str | None = request.config.getoption("--twin-name")
    if lab_file is None:
        if name is None:
            raise pytest.UsageError("give --twin-lab LAB.yaml (bring one up) or --twin-name NAME (use a running lab)")
        yield TwinLab(name)
        return
    from twin.flows.bringup import bring_up
    from twin.runtime.registry import down_lab
    from twin.stages.lab_file import load_lab

    lab = load_lab(lab_file)
    name = name or f"pt{uuid.uuid4().hex[:6]}"
    try:
        _, health = bring_up(lab, name, None, lambda s, d, t: None, lambda h: None)
        if not health.healthy:
            raise pytest.UsageError(f"lab {lab_file} did not come up healthy: "
                                    + "; ".join(f"{r.name}: {r.status}" for r in health.results))
        yield TwinLab(name)
    finally:
        down_lab(name)


@pytest.fixture
def gnmi(twin_lab: TwinLab) -> Iterator[Callable[[str], Any]]:
    from pygnmi.client import gNMIclient

    opened: list[Any] = []

    def connect(node: str) -> Any:
        client = gNMIclient(**twin_lab.gnmi_target(node))
        client.connect()
        opened.append(client)
        return client

    yield connect
    for client in opened:
        client.close()
