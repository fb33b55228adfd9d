"""A drill's report assembled from hand-made observations (no lab): a spine lost and brought back,
and a gray link the fabric did not notice; then judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.drills.assemble import assemble, broken_flows
from twin.drills.faults.base import LinkKey
from twin.drills.judge import judge
from twin.drills.observations import (
    During,
    FibHistory,
    FlowPaths,
    FlowResult,
    Observations,
    ProbePair,
    ProbeResult,
    ProbeSpec,
)
from twin.drills.oracle import Fib, expected_fibs
from twin.drills.schedule import plan_actions
from twin.drills.slo import single
from twin.drills.targets import resolve
from twin.model.drill import SessionEvent, Slo
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"
ZERO = 100.0


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "gate-2x4.yaml"))  # 2 spines, 4 leaves


def pair(src: str, dst: str, dport: int, sports: list[int]) -> ProbePair:
    return ProbePair(src=f"s-{src}", src_ns="ns", src_ip="10.0.0.1", src_leaf=src, src_port="e1",
                     dst=f"s-{dst}", dst_ns="ns", dst_ip="10.0.0.2", dst_leaf=dst, dport=dport, sports=sports)


SPEC = ProbeSpec(rate_hz=100, pairs=[pair("leaf1", "leaf2", 1, [10, 11]), pair("leaf2", "leaf1", 2, [12, 13])])
BEFORE = {0: "spine1", 1: "spine2", 2: "spine1", 3: "spine2"}


def history(*states: tuple[float, Fib]) -> FibHistory:
    return [(t, node, routes) for t, fib in states for node, routes in sorted(fib.items())]


def probe(runs: dict[int, list[list[float]]], stopped: float = 105.0) -> ProbeResult:
    return ProbeResult(t0=99.0, stopped=stopped, rate_hz=100, flows=[
        FlowResult(flow=f, sent=600, received=600 - int(sum(r[1] for r in runs.get(f, []))),
                   runs=runs.get(f, [])) for f in range(4)], sent_bins=[(0, 4), (1, 4)], recv_bins=[(0, 4), (1, 3)])


def spine_loss(plan: Plan) -> Observations:
    """spine1 lost at 100.0 (sessions down 10 ms later, FIBs converged at 50 ms, one flow lost 5
    packets), restored at 102.0 (sessions up at 100 ms, FIBs back at 300 ms)."""
    steps, actions = plan_actions(single("spine-loss", "spine1"))
    faults = [resolve(plan, s) for s in steps]
    actions[0].t, actions[0].how = ZERO, "all links of spine1 down"
    actions[1].t = 102.0
    baseline = expected_fibs(plan)
    without = expected_fibs(plan, {"spine1"})
    downs = [SessionEvent(t=100.01, node=s.node, peer=s.peer, state="down") for s in faults[0].sessions]
    ups = [SessionEvent(t=102.1, node=s.node, peer=s.peer, state="up") for s in faults[0].sessions]
    return Observations(
        faults=faults, steps=steps, actions=actions, spec=SPEC, probe=probe({0: [[40, 5, 100.002, 100.05]]}),
        started=98.0, zero=ZERO, before=(98.0, 99.5),
        during=During(window=(101.0, 101.9), fib=without, paths={f: "spine2" for f in range(4)}),
        recovered_at=102.5, restored=True, why="", ended=105.0, paths_before=BEFORE, paths_after=BEFORE,
        fib_before=baseline, fib_after=baseline,
        fib_history=history((99.0, baseline), (100.05, without), (102.3, baseline)),
        samples=[(98.0, {"spine1": 0, "spine2": 0}), (99.5, {"spine1": 100, "spine2": 100}),
                 (101.0, {"spine1": 100, "spine2": 300}), (101.9, {"spine1": 100, "spine2": 500})],
        events=downs + ups, checks={"health_after": True})


def test_spine_loss_report(plan: Plan) -> None:
    report = assemble(plan, "spine-loss", "t", Slo(loss_ms=200), spine_loss(plan))
    assert (report.drill, report.target, report.lab, report.restored) == ("spine-loss", "spine1", "t", True)
    assert (report.detect_ms, report.detect_target_ms) == (10.0, 10.0)
    assert (report.converge_ms, report.loss_ms) == (50.0, 50.0)
    assert report.recovery == {"detect_ms": 100.0, "converge_ms": 300.0, "loss_ms": 0.0}
    assert report.paths_before == {f"leaf{i}": 2 for i in range(1, 5)}
    assert report.paths_during == {f"leaf{i}": 1 for i in range(1, 5)}
    assert report.distribution == {"spine1": 0.0, "spine2": 1.0} and report.imbalance == 1.0
    assert report.distribution_before == {"spine1": 0.5, "spine2": 0.5}
    assert (report.flows, report.flows_moved, report.flows_moved_healthy) == (4, 2, 0)
    assert report.probe == {"rate_hz_per_flow": 100, "sent": 2400, "received": 2395, "lost": 5,
                            "send_errors": 0, "reordered": 0}
    assert [(a.action, a.t_ms, a.settled, a.how) for a in report.actions] == [
        ("inject", 0.0, True, "all links of spine1 down"), ("restore", 2000.0, True, "")]
    assert report.cycle_s == 5.0 and report.checks == {"health_after": True}
    assert report.notes == ["faults: spine-loss spine1"]
    assert report.timeline["actions"] == [[0.0, 1.0], [2000.0, 0.0]]
    assert report.timeline["delivery"] == [[-1000.0, 1.0], [-950.0, 0.75]]
    assert not report.passed and report.violations == []  # judged apart


@pytest.mark.parametrize(("slo", "restored", "lost_late", "expected"), [
    (Slo(loss_ms=200, cycle_s=20), True, False, []),
    (Slo(loss_ms=10), True, False, ["loss_ms: 50 > 10"]),
    (Slo(), False, False, ["the fabric was not restored to its baseline"]),
    (Slo(), True, True, ["probe lost 3 packets after recovery"]),
])
def test_judged_spine_loss(plan: Plan, slo: Slo, restored: bool, lost_late: bool, expected: list[str]) -> None:
    obs = spine_loss(plan)
    obs.restored = restored
    if lost_late:
        obs.probe = probe({0: [[40, 5, 100.002, 100.05]], 1: [[300, 3, 103.0, 103.03]]})
    report = judge(assemble(plan, "spine-loss", "t", slo, obs), slo, obs)
    assert report.violations == expected and report.passed == (not expected)


def test_unrestored_report_says_why(plan: Plan) -> None:
    obs = spine_loss(plan)
    obs.restored, obs.why, obs.recovered_at = False, "BGP sessions still down", None
    report = assemble(plan, "spine-loss", "t", Slo(), obs)
    assert report.notes[-1] == "NOT RESTORED: BGP sessions still down" and report.distribution_after == {}


def test_gray_link_the_fabric_did_not_notice(plan: Plan) -> None:
    steps, actions = plan_actions(single("link-gray", "leaf1:spine1", loss_pct=5))
    faults = [resolve(plan, s) for s in steps]
    actions[0].t, actions[1].t = ZERO, 103.0   # held GRAY_HOLD_MS
    baseline = expected_fibs(plan)
    obs = Observations(
        faults=faults, steps=steps, actions=actions, spec=SPEC,
        probe=probe({0: [[10, 9, 100.5, 100.59]], 2: [[30, 6, 101.0, 101.06]], 1: [[7, 4, 101.0, 101.04]]}),
        started=98.0, zero=ZERO, before=(98.0, 99.5), during=None, recovered_at=103.2, restored=True, why="",
        ended=104.0, paths_before=BEFORE, paths_after=BEFORE, fib_before=baseline, fib_after=baseline,
        fib_history=history((99.0, baseline)), samples=[], events=[])
    report = assemble(plan, "link-gray", "t", Slo(), obs)
    assert not report.noticed and report.paths_during == report.paths_before
    # flows 0 and 2 cross leaf1-spine1: 15 of 2 x 3 s x 100 packets lost; flow 1 (spine2) does not count
    assert report.notes[-1] == ("gray link: 2 probe flows crossed it and lost 2.50% of their packets "
                                "(5% injected); the fabric did NOT notice: BGP and BFD stayed up and every FIB "
                                "kept the link, so traffic kept being hashed onto it")
    assert [a.timed for a in report.actions] == [True, True]


@pytest.mark.parametrize(("paths", "nodes", "links", "broken"), [
    (BEFORE, {"spine1"}, set(), {0, 2}),
    (BEFORE, set(), {(("leaf1", "Ethernet0"), ("spine2", "Ethernet0"))}, {1, 3}),  # both ways
    (BEFORE, set(), {(("leaf1", "Ethernet0"), ("spine1", "Ethernet0"))}, {0, 2}),
    ({0: None, 1: "spine2", 2: "spine2", 3: "spine2"}, set(), set(), {0}),
])
def test_broken_flows(paths: FlowPaths, nodes: set[str], links: set[LinkKey], broken: set[int]) -> None:
    assert broken_flows(SPEC, nodes, links, paths) == broken


def test_fibs_that_never_matched_are_named_switch_by_switch(plan: Plan) -> None:
    """The spine is lost but leaf1 keeps it as a next hop (its FIB never follows): the action says which
    switch and prefix stayed wrong, and the verdict carries it."""
    obs = spine_loss(plan)
    baseline, without = expected_fibs(plan), expected_fibs(plan, {"spine1"})
    stuck = {**without, "leaf1": baseline["leaf1"]}
    obs.fib_history = history((99.0, baseline), (100.05, stuck), (102.3, baseline))
    report = assemble(plan, "spine-loss", "t", Slo(), obs)
    inject = report.actions[0]
    assert inject.converge_ms is None and inject.unmatched
    assert all(line.startswith("leaf1 ") for line in inject.unmatched)
    judged = judge(report, Slo(), obs)
    assert any("the FIBs never matched" in v and "leaf1 10." in v for v in judged.violations)
