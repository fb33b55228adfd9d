"""The convergence yardstick: what every FIB should hold with nodes or links out (eBGP rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.drills.oracle import ecmp_widths, expected_fibs, mismatches
from twin.drills.targets import resolve
from twin.model.drill import Step
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "clos-4x8.yaml"))


def loopback(plan: Plan, node: str) -> str:
    return f"{plan.node(node).loopback}/32"


def test_baseline_gives_every_leaf_all_spines_towards_every_other_leaf(plan: Plan) -> None:
    fib = expected_fibs(plan)
    assert set(ecmp_widths(plan, fib).values()) == {4}
    leaf1 = plan.node("leaf1")
    via = {str(nb.ip) for nb in leaf1.neighbors}
    assert fib["leaf1"][loopback(plan, "leaf2")] == frozenset(via)
    # a spine reaches a leaf over its one link only
    assert len(fib["spine1"][loopback(plan, "leaf1")]) == 1
    # nobody holds a BGP route to its own prefixes
    assert loopback(plan, "leaf1") not in fib["leaf1"]


def test_spine_loss_removes_exactly_that_spine_from_every_leaf(plan: Plan) -> None:
    fault = resolve(plan, Step(kind="spine-loss", target="spine2"))
    fib = expected_fibs(plan, fault.nodes, fault.links)
    assert "spine2" not in fib
    assert set(ecmp_widths(plan, fib).values()) == {3}
    spine2_ips = {str(nb.ip) for leaf in plan.by_role("leaf") for nb in leaf.neighbors if nb.name == "spine2"}
    assert not any(hops & spine2_ips for routes in fib.values() for hops in routes.values())
    assert loopback(plan, "spine2") not in fib["leaf1"]


def test_link_down_is_not_routed_around_through_another_leaf(plan: Plan) -> None:
    """Spines share an ASN, so spine1 cannot reach leaf1 via leaf2 and spine2 (AS-path loop)."""
    fault = resolve(plan, Step(kind="link-down", target="leaf1:spine1"))
    fib = expected_fibs(plan, fault.nodes, fault.links)
    assert loopback(plan, "leaf1") not in fib["spine1"]
    assert len(fib["leaf2"][loopback(plan, "leaf1")]) == 3
    assert len(fib["leaf2"][loopback(plan, "leaf3")]) == 4
    assert len(fib["leaf1"][loopback(plan, "leaf2")]) == 3


def test_leaf_loss_withdraws_its_prefixes_everywhere(plan: Plan) -> None:
    fault = resolve(plan, Step(kind="leaf-loss", target="leaf1"))
    fib = expected_fibs(plan, fault.nodes, fault.links)
    gone = {str(p) for p in plan.node("leaf1").networks}
    assert not any(gone & set(routes) for routes in fib.values())
    assert set(ecmp_widths(plan, fib, exclude={"leaf1"}).values()) == {4}
    assert ecmp_widths(plan, fib, exclude={"leaf1"}).keys() == {f"leaf{i}" for i in range(2, 9)}


def test_mismatches_name_the_switch_and_prefix(plan: Plan) -> None:
    fib = expected_fibs(plan)
    actual = {node: dict(routes) for node, routes in fib.items()}
    prefix = loopback(plan, "leaf2")
    actual["leaf1"][prefix] = frozenset(sorted(actual["leaf1"][prefix])[:2])
    lines = mismatches(fib, actual)
    assert len(lines) == 1 and lines[0].startswith(f"leaf1 {prefix}: has ")
    assert mismatches(fib, actual, ignore={"leaf1"}) == []


def test_gray_and_mtu_faults_expect_no_routing_change(plan: Plan) -> None:
    for kind in ("link-gray", "mtu-mismatch"):
        fault = resolve(plan, Step(kind=kind))
        assert not fault.topology_change and not fault.links and not fault.nodes
