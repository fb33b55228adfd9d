"""The order of `twin up` (twin.runtime.bringup.bring_up): spines prepared and launched before leaves
(twin.runtime.launch_order), the `prepared` hook (the agent's settings) once every node is prepared,
`started` after every launch; a failed preparation prepares no later wave, calls no hook and removes
the lab."""

from __future__ import annotations

import time
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest

from twin.kinds.protocol import NodeLaunch, NodeStart
from twin.kinds.registry import switch_kind
from twin.model.errors import RuntimeBackendError
from twin.model.plan import Plan
from twin.model.state import LabState
from twin.runtime import bringup
from twin.runtime.protocol import UpHooks
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]


class RecordingPlacement:
    """Records what bring_up asks of it; `fail` names a node whose preparation fails. A spine's
    preparation and launch take 30 ms: long enough for the workers to start a leaf's alongside
    unless the launch order holds it back."""

    def __init__(self, events: list[str], fail: str | None = None) -> None:
        self.events, self.fail = events, fail

    def describe(self, state: LabState) -> None:
        pass

    def create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
                     mgmt_ip: dict[str, IPv4Address]) -> None:
        self.events.append("create")

    def wire_links(self, lab: str, plan: Plan) -> None:
        self.events.append("wire")

    def prepare_node(self, start: NodeStart) -> NodeLaunch:
        name = start.node.name
        pause = 0.03 if start.node.role == "spine" else 0.0
        self.events.append(f"prepare {name}")
        time.sleep(pause)
        if name == self.fail:
            raise RuntimeBackendError(f"{name}: redis did not answer")
        self.events.append(f"ready {name}")

        def launch() -> list[str]:
            self.events.append(f"launch {name}")
            time.sleep(pause)
            self.events.append(f"launched {name}")
            return [f"{name}: launched"]

        return launch

    def remove_nodes(self, lab: str) -> list[str]:
        return []


@pytest.fixture
def plan() -> Plan:
    return load_lab(REPO / "labs" / "default.yaml").plan


@pytest.fixture(autouse=True)
def no_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Nothing of the host is read or changed: the run directory is tmp_path, and a tear-down is recorded."""
    torn: list[str] = []
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    monkeypatch.setattr(bringup, "preflight", lambda: None)
    monkeypatch.setattr(bringup, "owned_netns", lambda lab: [])
    monkeypatch.setattr(bringup, "host_routes", lambda: [])
    monkeypatch.setattr(bringup.neighbours, "size_for", lambda plan: [])
    monkeypatch.setattr(bringup, "tear_down", lambda lab, placement: torn.append(lab) or [])
    return torn


def _hooks(events: list[str]) -> UpHooks:
    return UpHooks(created=lambda lab: events.append("created"),
                   prepared=lambda state: events.append("prepared"),
                   started=lambda state: events.append("started"))


def _at(events: list[str], what: str, names: list[str]) -> list[int]:
    return [events.index(f"{what} {n}") for n in names]


def test_spines_are_prepared_and_launched_before_leaves_and_the_hooks_come_in_their_places(plan: Plan) -> None:
    events: list[str] = []
    state = bringup.bring_up("netns", "order1", plan, switch_kind(None), RecordingPlacement(events),
                             lambda *a: None, None, _hooks(events))
    names = [n.name for n in plan.nodes]
    spines = [n.name for n in plan.nodes if n.role == "spine"]
    leaves = [n.name for n in plan.nodes if n.role == "leaf"]
    assert events[:3] == ["created", "create", "wire"]
    assert sorted(e for e in events if e.startswith("launch ")) == sorted(f"launch {n}" for n in names)
    assert max(_at(events, "ready", spines)) < min(_at(events, "prepare", leaves))
    assert max(_at(events, "launched", spines)) < min(_at(events, "launch", leaves))
    assert max(_at(events, "ready", names)) < events.index("prepared")
    assert events[-1] == "started"
    assert state.phase == "up"
    assert state.notes == [f"{n}: launched" for n in names]   # the launches' reports, in plan order


def test_a_failed_preparation_prepares_no_later_wave_calls_no_hook_and_removes_the_lab(
        plan: Plan, no_host: list[str]) -> None:
    events: list[str] = []
    failing = plan.switches[0].name
    assert plan.switches[0].role == "spine"
    with pytest.raises(RuntimeBackendError, match=f"{failing}: redis did not answer"):
        bringup.bring_up("netns", "order2", plan, switch_kind(None), RecordingPlacement(events, fail=failing),
                         lambda *a: None, None, _hooks(events))
    leaves = [n.name for n in plan.nodes if n.role == "leaf"]
    assert not [e for e in events if e.split()[-1] in leaves]
    assert "prepared" not in events and "started" not in events
    assert no_host == ["order2"]
