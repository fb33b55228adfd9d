"""Fault kinds: one registered class per name in model.drill.KINDS, and what resolve takes from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.drills.faults.base import FaultKind
from twin.drills.faults.injector import check_tools
from twin.drills.faults.link_gray import gray_rules
from twin.drills.faults.registry import FAULT_KINDS, fault_kind
from twin.drills.slo import DEFAULT_SLO
from twin.drills.targets import resolve
from twin.model.drill import KINDS, Slo, Step
from twin.model.errors import DrillError, PlanError
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "clos-4x8.yaml"))


def test_every_kind_has_exactly_one_registered_class() -> None:
    assert sorted(FAULT_KINDS) == sorted(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_a_kind_class_is_complete(kind: str) -> None:
    cls = fault_kind(kind)
    assert cls.kind == kind and issubclass(cls, FaultKind)
    assert cls.inject is not FaultKind.inject and cls.restore is not FaultKind.restore
    assert cls.role in (None, "spine", "leaf")
    assert cls.__module__ == f"twin.drills.faults.{kind.replace('-', '_')}"  # one module per kind


def test_a_kind_class_must_name_itself() -> None:
    with pytest.raises(TypeError, match="NoName must set `kind`"):
        type("NoName", (fault_kind("link-down"),), {})


def test_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(DrillError, match="unknown drill kind nope; kinds: spine-loss"):
        fault_kind("nope")


@pytest.mark.parametrize("kind", KINDS)
def test_resolved_fault_carries_its_kinds_topology_change(plan: Plan, kind: str) -> None:
    fault = resolve(plan, Step.model_validate({"kind": kind}))
    assert fault.kind == kind and fault.topology_change == fault_kind(kind).changes_topology
    # a node taken out of the fabric: a node kind that changes the topology (warm-reboot keeps its leaf in)
    assert bool(fault.nodes) == (fault_kind(kind).role is not None and fault_kind(kind).changes_topology)
    if fault_kind(kind).role is not None and not fault_kind(kind).changes_topology:
        assert fault.sessions and not fault.links


@pytest.mark.parametrize(("kind", "target", "role"), [("spine-loss", "leaf1", "spine"),
                                                      ("leaf-loss", "spine1", "leaf")])
def test_node_kinds_take_a_node_of_their_role(plan: Plan, kind: str, target: str, role: str) -> None:
    with pytest.raises(PlanError, match=f"is not a {role} of lab"):
        resolve(plan, Step.model_validate({"kind": kind, "target": target}))


def test_a_missing_tool_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("twin.drills.faults.injector.shutil.which", lambda name: None)
    check_tools(["link-down", "spine-loss"])  # need nothing beyond the runtime
    with pytest.raises(DrillError, match="spine-silent needs nft, which is not installed: apt-get install nftables"):
        check_tools(["link-down", "spine-silent", "link-gray"])


def test_gray_rules_drop_both_ways() -> None:
    rules = gray_rules("e1", 0.05)
    assert [r[:5] for r in rules] == [["-t", "raw", "PREROUTING", "-i", "e1"],
                                      ["-t", "mangle", "POSTROUTING", "-o", "e1"]]
    assert all(r[-5:] == ["random", "--probability", "0.050000", "-j", "DROP"] for r in rules)


@pytest.mark.parametrize(("kind", "slo"), [
    ("spine-loss", Slo(loss_ms=200, cycle_s=20)),
    ("spine-silent", Slo(loss_ms=1500, cycle_s=20)),   # only BFD sees it: ~900 ms, then BGP withdraws
    ("leaf-loss", Slo(loss_ms=200, cycle_s=20)),
    ("link-down", Slo(loss_ms=200, cycle_s=20)),
    ("session-reset", Slo(loss_ms=200, cycle_s=20)),
    ("link-flap", None), ("link-gray", None), ("mtu-mismatch", None),
])
def test_built_in_slos_come_from_the_kinds(kind: str, slo: Slo | None) -> None:
    assert DEFAULT_SLO.get(kind) == slo


@pytest.mark.parametrize(("kind", "hold_ms", "repeated"), [("link-gray", 3000, False), ("link-flap", None, True),
                                                           ("link-down", None, False), ("mtu-mismatch", None, False)])
def test_schedule_facts_of_a_kind(kind: str, hold_ms: float | None, repeated: bool) -> None:
    assert (fault_kind(kind).hold_ms, fault_kind(kind).repeated) == (hold_ms, repeated)
