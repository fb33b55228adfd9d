"""Drill targets: nodes, links by peer or by port, defaults, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.drills.targets import resolve
from twin.model.drill import Step
from twin.model.errors import PlanError
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "clos-4x8.yaml"))


@pytest.mark.parametrize(("kind", "target"), [("spine-loss", "spine1"), ("spine-silent", "spine1"),
                                              ("leaf-loss", "leaf1"), ("link-down", "leaf1:Ethernet128"),
                                              ("session-reset", "leaf1:Ethernet128")])
def test_defaults_pick_the_first_that_fits(plan: Plan, kind: str, target: str) -> None:
    assert resolve(plan, Step(kind=kind)).target == target  # type: ignore[arg-type]


def test_link_by_peer_and_by_port_are_the_same_link(plan: Plan) -> None:
    by_peer = resolve(plan, Step(kind="link-down", target="leaf3:spine2"))
    port = by_peer.target.split(":")[1]
    by_port = resolve(plan, Step(kind="link-down", target=f"leaf3:{port}"))
    assert by_peer.links == by_port.links and len(by_peer.links) == 1
    assert {(s.node, s.peer) for s in by_peer.sessions} == {("leaf3", "spine2"), ("spine2", "leaf3")}


def test_spine_loss_takes_every_session_of_the_spine(plan: Plan) -> None:
    fault = resolve(plan, Step(kind="spine-loss", target="spine3"))
    assert fault.nodes == {"spine3"}
    assert len(fault.sessions) == 16  # 8 leaves, both directions
    assert len(fault.links) == 8


@pytest.mark.parametrize(("kind", "target", "message"), [
    ("spine-loss", "leaf1", "'leaf1' is not a spine of lab 'clos-4x8'"),
    ("leaf-loss", "spine9", "'spine9' is not a leaf"),
    ("link-down", "leaf1", "'leaf1' is not a link"),
    ("link-down", "leaf1:spine9", "leaf1 has no link to 'spine9'"),
    ("link-down", "leaf1:server1", "connects leaf1 to server server1, not two switches"),
])
def test_bad_targets_say_what_would_work(plan: Plan, kind: str, target: str, message: str) -> None:
    with pytest.raises(PlanError) as err:
        resolve(plan, Step(kind=kind, target=target))  # type: ignore[arg-type]
    assert message in str(err.value)
    assert err.value.problems[0].file == "--target" and err.value.problems[0].fix
