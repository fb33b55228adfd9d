"""wait_healthy's polls: while a fabric converges a poll reads switches a batch at a time and stops
at the first batch with a failing switch, only switches not yet read passing are read again, and the
lab is judged healthy only on a poll that read every switch. Within a batch the kernel is read
first (the FIBs), and FRR is asked only where the kernel's answers pass."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from twin.checks import health
from twin.checks.base import Check, Outputs
from twin.checks.bfd import BfdInput, BfdSessionsUp
from twin.checks.bgp import BgpInput, BgpSessionsEstablished
from twin.checks.catalog import expected_ecmp, expected_sessions, health_checks
from twin.checks.daemons import AgentInput, AgentServing, DaemonsInput, SwitchDaemonsRunning
from twin.checks.ecmp import EcmpInput, EcmpWidth
from twin.checks.health import evaluate, failing_nodes, wait_healthy
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


@pytest.fixture(scope="module")
def clos() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "clos-4x8.yaml"))


class Fabric:
    """Every switch's FRR and kernel as a converged fabric shows them, with sessions set down by
    hand; records which nodes each poll read."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.down: set[tuple[str, str]] = set()  # (switch, peer ip) not Established
        self.short: set[str] = set()              # leaves whose FIB is one path short everywhere
        self.reads: list[tuple[str, set[str] | None]] = []  # (what was read, of which nodes)

    def summary(self, switch: str) -> dict[str, Any]:
        peers = {ip: {"state": "Active" if (switch, ip) in self.down else "Established"}
                 for ip in expected_sessions(self.plan)[switch]}
        return {"ipv4Unicast": {"peers": peers}}

    def fib(self, leaf: str) -> list[dict[str, Any]]:
        width_of = expected_ecmp(self.plan)[leaf]
        return [{"dst": prefix, "nexthops": [{"gateway": f"10.0.0.{i}"}
                                             for i in range(width - (leaf in self.short))]}
                for prefix, width in width_of.items()]

    def read(self, node: str, need: str, probes: dict[str, Any]) -> Any:
        if need == "bgp_summary":
            return self.summary(node)
        if need == "bfd_sessions":
            return {f"default|{ip}": {"state": "Up"} for ip in expected_sessions(self.plan)[node]}
        if need == "fib":
            return self.fib(node)
        assert need == "ping", need
        return {src: sorted(targets) for src, targets in probes[node].items()}

    def collect(self, lab: object, checks: Iterable[Check[Any]], only: Collection[str] | None = None) -> Outputs:
        checks = list(checks)
        needs = {need for check in checks for need in check.needs}
        what = "kernel" if needs <= health.KERNEL_SOURCES else "pings" if needs == {"ping"} else "frr" \
            if not needs & health.KERNEL_SOURCES else "all"
        self.reads.append((what, None if only is None else set(only)))
        outputs: Outputs = {}
        for check in checks:
            probes = getattr(check.inputs, "probes", {})
            for need in check.needs:
                for node in check.nodes():
                    if only is not None and node not in only:
                        continue
                    outputs.setdefault(node, {})[need] = self.read(node, need, probes)
        return outputs


LEAVES = {f"leaf{i}" for i in range(1, 9)}   # the first batch (health.READ_BATCH, in name order)
SPINES = {f"spine{i}" for i in range(1, 5)}


def peer(plan: Plan, switch: str, name: str) -> tuple[str, str]:
    """(switch, the address of its peer `name`)"""
    return switch, next(ip for ip, n in expected_sessions(plan)[switch].items() if n == name)


def _wait(plan: Plan, fabric: Fabric, monkeypatch: pytest.MonkeyPatch, on_poll: Any) -> health.Health:
    monkeypatch.setattr(health, "collect_local", fabric.collect)
    monkeypatch.setattr(health, "process_checks", lambda lab: [])
    monkeypatch.setattr(health.time, "sleep", lambda s: None)
    return wait_healthy(SimpleNamespace(plan=plan), 60, on_poll)  # type: ignore[arg-type]


def test_a_poll_stops_at_a_failing_batch_and_healthy_is_judged_on_a_poll_that_read_every_switch(
        clos: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(LEAVES) == health.READ_BATCH
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    polls: list[bool] = []

    def on_poll(h: Any) -> None:
        polls.append(h.healthy)
        if len(polls) == 1:      # after the first poll leaf2's session comes up
            fabric.down.clear()

    result = _wait(clos, fabric, monkeypatch, on_poll)
    assert result.healthy
    # the first batch, where leaf2 fails (the spines are not read); leaf2 first, then the switches
    # not yet read; every switch in one poll before judging (a batch, then one twice its size);
    # then the pings. Each batch: the FIBs first, then FRR.
    assert fabric.reads == [("kernel", LEAVES), ("frr", LEAVES),
                            ("kernel", {"leaf2", *SPINES}), ("frr", {"leaf2", *SPINES}),
                            ("kernel", LEAVES), ("frr", LEAVES), ("kernel", SPINES), ("frr", SPINES),
                            ("pings", None)]


def test_a_switch_read_earlier_that_went_down_is_caught_by_the_poll_that_reads_every_switch(
        clos: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    polls: list[bool] = []

    def on_poll(h: Any) -> None:
        polls.append(h.healthy)
        if len(polls) == 1:     # leaf2 comes up, and leaf1, not read in the next poll, goes down
            fabric.down = {peer(clos, "leaf1", "spine1")}
        elif len(polls) == 3:   # the poll that began with every switch saw leaf1 down; it comes back
            assert not h.healthy
            fabric.down.clear()

    result = _wait(clos, fabric, monkeypatch, on_poll)
    assert result.healthy
    assert [nodes for what, nodes in fabric.reads if what == "frr"] == [
        LEAVES, {"leaf2", *SPINES}, LEAVES, {"leaf1", *SPINES}, LEAVES, SPINES]


def test_frr_is_not_asked_while_a_leaf_s_fib_is_short(clos: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    """A leaf short of full ECMP fails its batch on the kernel's answer alone: no bgpd of that batch
    is asked, and the spines (read in later batches) are not either."""
    fabric = Fabric(clos)
    fabric.short = {"leaf3"}
    fabric.down = {peer(clos, "leaf3", "spine4")}
    polls: list[bool] = []

    def on_poll(h: Any) -> None:
        polls.append(h.healthy)
        if len(polls) == 2:     # two polls with leaf3's FIB short; then it converges
            fabric.short.clear()
            fabric.down.clear()

    assert _wait(clos, fabric, monkeypatch, on_poll).healthy
    assert fabric.reads[:3] == [("kernel", LEAVES), ("kernel", LEAVES), ("kernel", LEAVES)]
    assert fabric.reads[3] == ("frr", LEAVES)
    assert all(what != "frr" for what, _ in fabric.reads[:3])


def test_the_plan_s_sessions_and_ecmp_are_worked_out_once_for_every_poll_of_a_wait(
        clos: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each poll counts sessions, ECMP and resets against the plan; turning the plan's 16,384 session
    ends and 16,256 prefixes into strings on every poll of a 64 x 128 fabric took CPU from the
    convergence being waited for. Worked out once, the counts are still right on every poll."""
    calls = {"sessions": 0, "ecmp": 0}

    def counted(name: str, real: Any) -> Any:
        def work(plan: Plan) -> Any:
            calls[name] += 1
            return real(plan)
        return work

    monkeypatch.setattr(health, "expected_sessions", counted("sessions", expected_sessions))
    monkeypatch.setattr(health, "expected_ecmp", counted("ecmp", expected_ecmp))
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    seen: list[tuple[int, int]] = []

    def on_poll(h: Any) -> None:
        seen.append((h.bgp["established"], h.bgp["total"]))
        if len(seen) == 2:
            fabric.down.clear()

    assert _wait(clos, fabric, monkeypatch, on_poll).healthy
    assert len(seen) >= 4
    assert calls == {"sessions": 1, "ecmp": 1}
    sessions = expected_sessions(clos)
    total = sum(len(p) for p in sessions.values())
    # the first poll read the leaves' batch only, leaf2's session down; the last one every switch
    assert seen[0] == (sum(len(sessions[leaf]) for leaf in LEAVES) - 1, total)
    assert seen[-1] == (total, total)


def test_the_checks_are_judged_only_on_a_poll_that_read_every_switch_passing(
        clos: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    """A poll that stopped at a failing switch shows its progress (sessions, ECMP) without judging
    the lab's checks: at 64 x 128 that judging built 32,640 items, about 170 ms of CPU, on every
    poll of the wait, back to back, while the fabric converged on the same CPUs."""
    judged: list[int] = []
    real = health.evaluate

    def evaluating(*args: Any, **kwargs: Any) -> Any:
        judged.append(len(seen))
        return real(*args, **kwargs)

    monkeypatch.setattr(health, "evaluate", evaluating)
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    seen: list[tuple[bool, int, int, int]] = []

    def on_poll(h: Any) -> None:
        seen.append((h.healthy, len(h.results), h.bgp["established"], len(h.ecmp)))
        if len(seen) == 3:
            fabric.down.clear()

    assert _wait(clos, fabric, monkeypatch, on_poll).healthy
    total = sum(len(p) for p in expected_sessions(clos).values())
    # three polls stopped at leaf2, and the fourth read the switches not yet read passing: counted,
    # not judged. The fifth read every switch passing: judged, the control plane and then with the pings
    assert [s[:2] for s in seen[:4]] == [(False, 0)] * 4
    assert seen[2][2] == total - 1 and seen[2][3] == len(LEAVES)
    assert judged == [4, 5]
    assert seen[4][0] and seen[4][1] > 0 and seen[-1][2] == total


def test_a_batch_is_judged_by_the_checks_narrowed_to_its_nodes(clos: Plan) -> None:
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    outputs = fabric.collect(None, health_checks(clos))
    bgp = next(c for c in health_checks(clos) if isinstance(c, BgpSessionsEstablished))
    assert bgp.evaluate(outputs).status == "failure"
    others = bgp.narrowed(sorted(LEAVES - {"leaf2"}))
    assert others.nodes() == sorted(LEAVES - {"leaf2"}) and others.evaluate(outputs).status == "success"
    alone = bgp.narrowed(["leaf2"]).evaluate(outputs)
    assert alone.status == "failure" and {i.subject.split()[0] for i in alone.items} == {"leaf2"}
    assert bgp.nodes() == sorted(expected_sessions(clos))   # the check itself is left whole


def test_every_check_a_health_poll_reads_is_narrowed_per_node(clos: Plan) -> None:
    """A check that cannot be narrowed would be judged whole for every batch again: each one the
    health poll runs names the input field that is keyed by its nodes."""
    processes = [AgentServing(AgentInput(lab="lab", switches=["leaf1", "spine1"])),
                 SwitchDaemonsRunning(DaemonsInput(lab="lab", daemons={"leaf1": ["bgpd"], "spine1": ["zebra"]})),
                 BfdSessionsUp(BfdInput(peers={"leaf1": ["10.0.0.1"], "spine1": ["10.0.0.0"]}))]
    for check in [*health_checks(clos), *processes]:
        if "ping" in check.needs:
            continue  # read once the control plane is healthy, not per batch
        some = check.nodes()[:2]
        assert check.per_node is not None, type(check).__name__
        assert check.narrowed(some).nodes() == some, type(check).__name__


def test_a_poll_judges_each_batch_on_its_own_nodes(clos: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    judged: list[list[str]] = []
    real = BgpSessionsEstablished.evaluate_items

    def recording(self: BgpSessionsEstablished, outputs: Outputs) -> Any:
        judged.append(self.nodes())
        return real(self, outputs)

    monkeypatch.setattr(BgpSessionsEstablished, "evaluate_items", recording)
    monkeypatch.setattr(health, "collect_local", fabric.collect)
    outputs: Outputs = {}
    everyone = sorted(expected_sessions(clos))
    left = health.read_until_failing(SimpleNamespace(plan=clos), health_checks(clos), outputs, everyone)  # type: ignore[arg-type]
    assert left[0] == "leaf2"
    assert judged == [sorted(LEAVES)]  # the first batch, where leaf2 fails: not the 12 switches


class Clock:
    """time.monotonic and time.sleep of a poll whose every read takes `read_s`."""

    def __init__(self, read_s: float) -> None:
        self.now, self.read_s, self.slept = 0.0, read_s, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


@pytest.mark.parametrize(("read_s", "sleep_s"), [(0.01, health.POLL_MIN_S), (0.05, 0.1), (2.0, health.POLL_MAX_S)])
def test_polls_wait_as_long_as_the_last_poll_took_within_bounds(
        clos: Plan, monkeypatch: pytest.MonkeyPatch, read_s: float, sleep_s: float) -> None:
    fabric, clock = Fabric(clos), Clock(read_s)
    fabric.down = {peer(clos, "leaf2", "spine2")}
    polls: list[bool] = []

    def collect(lab: object, checks: Iterable[Check[Any]], only: Collection[str] | None = None) -> Outputs:
        clock.now += read_s
        return fabric.collect(lab, checks, only)

    def on_poll(h: Any) -> None:
        polls.append(h.healthy)
        if len(polls) == 3:     # up after three failing polls
            fabric.down.clear()

    monkeypatch.setattr(health, "collect_local", collect)
    monkeypatch.setattr(health, "process_checks", lambda lab: [])
    monkeypatch.setattr(health, "time", clock)
    assert wait_healthy(SimpleNamespace(plan=clos), 60, on_poll).healthy  # type: ignore[arg-type]
    # each failing poll read the first batch's FIBs, then its FRR, and stopped there
    assert clock.slept == [sleep_s] * 3


def test_failing_nodes_are_named_by_the_items_they_failed(clos: Plan) -> None:
    fabric = Fabric(clos)
    fabric.down = {peer(clos, "leaf3", "spine1"), peer(clos, "spine1", "leaf4")}
    checks: list[Check[Any]] = [BgpSessionsEstablished(BgpInput(sessions=expected_sessions(clos))),
                                EcmpWidth(EcmpInput(expected=expected_ecmp(clos)))]
    outputs = fabric.collect(None, checks)
    outputs["leaf5"]["fib"] = outputs["leaf5"]["fib"][1:]  # leaf5 misses a prefix
    results = evaluate(clos, checks, outputs).results
    assert failing_nodes(checks, results) == {"leaf3", "spine1", "leaf5"}
    assert failing_nodes(checks, evaluate(clos, checks, fabric.collect(None, checks, only=[])).results) == {
        n for c in checks for n in c.nodes()}   # nothing read: every node fails by name


def test_a_failure_about_no_node_reads_every_node_again(clos: Plan) -> None:
    agent = AgentServing(AgentInput(lab="lab1", switches=["leaf1"]))  # its failure is the lab's
    checks: list[Check[Any]] = [*health_checks(clos)[:1], agent]
    results = evaluate(clos, checks, {}).results
    assert failing_nodes(checks, results) is None
