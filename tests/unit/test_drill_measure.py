"""Drill arithmetic on recorded timelines: convergence, detection, loss runs, shares."""

from __future__ import annotations

import pytest

from twin.drills import measure
from twin.drills.faults.base import Session
from twin.drills.observations import ProbeResult
from twin.drills.observe.probe import Flow
from twin.model.drill import LossRun, SessionEvent

FULL = {"10.1.0.2/32": frozenset({"a", "b"})}
HALF = {"10.1.0.2/32": frozenset({"b"})}
EXPECT = {"leaf1": HALF, "leaf2": HALF}


def history(*entries: tuple[float, str, dict[str, frozenset[str]]]) -> measure.FibHistory:
    return [(0.0, "leaf1", FULL), (0.0, "leaf2", FULL), *entries]


def test_converged_when_the_last_switch_matches() -> None:
    h = history((10.05, "leaf1", HALF), (10.12, "leaf2", HALF))
    assert measure.converged_at(h, EXPECT, 10.0, 20.0) == 10.12


def test_a_flap_back_restarts_the_clock() -> None:
    h = history((10.05, "leaf1", HALF), (10.1, "leaf2", HALF), (10.2, "leaf1", FULL), (10.4, "leaf1", HALF))
    assert measure.converged_at(h, EXPECT, 10.0, 20.0) == 10.4


def test_never_converged_within_the_window() -> None:
    h = history((10.05, "leaf1", HALF), (25.0, "leaf2", HALF))
    assert measure.converged_at(h, EXPECT, 10.0, 20.0) is None


def test_already_matching_at_start_is_zero() -> None:
    assert measure.converged_at(history(), {"leaf1": FULL, "leaf2": FULL}, 10.0, 20.0) == 10.0


def test_ignored_switches_do_not_count() -> None:
    h = history((10.05, "leaf1", HALF))
    assert measure.converged_at(h, EXPECT, 10.0, 20.0, ignore={"leaf2"}) == 10.05


def test_first_events_per_session_in_window() -> None:
    s1, s2 = Session("leaf1", "spine1", "10.0.0.64"), Session("spine1", "leaf1", "10.0.0.65")
    events = [SessionEvent(t=9.0, node="leaf1", peer="spine1", state="down"),
              SessionEvent(t=10.3, node="leaf1", peer="spine1", state="down"),
              SessionEvent(t=10.31, node="spine1", peer="leaf1", state="down"),
              SessionEvent(t=10.5, node="leaf1", peer="spine1", state="down"),
              SessionEvent(t=11.0, node="leaf1", peer="spine1", state="up")]
    got = measure.first_events(events, [s1, s2], "down", 10.0, 12.0)
    assert got == {s1: 10.3, s2: 10.31}
    assert measure.ms(max(got.values()), 10.0) == pytest.approx(310.0)


def test_flow_turns_sequence_jumps_into_loss_runs() -> None:
    f = Flow(0, 0, 40000, 50000, sock=None, offset=0.0)  # type: ignore[arg-type]
    period = 0.01
    for seq in (0, 1, 2, 7, 8, 6, 9):
        f.receive(seq, 100.0 + seq * period, period)
    f.sent = 12
    f.finish(t0=100.0, stopped=100.12, period=period)
    assert f.received == 7 and f.reordered == 1
    assert f.runs[0][:2] == [3, 4] and f.runs[0][2] == pytest.approx(100.03)
    assert f.runs[1][:2] == [10, 2]  # lost at the end: sent but never seen


def test_longest_loss_is_packets_times_interval_within_the_window() -> None:
    runs = [LossRun(flow=0, first_seq=3, count=12, t_start=10.1, t_end=10.22),
            LossRun(flow=1, first_seq=5, count=30, t_start=10.2, t_end=10.5),
            LossRun(flow=2, first_seq=5, count=50, t_start=30.0, t_end=30.5)]
    assert measure.longest_loss(runs, 0.01, 10.0, 20.0) == (300.0, 42)
    assert measure.longest_loss(runs, 0.01, 20.0, 40.0) == (500.0, 50)
    assert measure.longest_loss([], 0.01, 0, 1) == (0.0, 0)


def test_shares_and_imbalance_from_counter_samples() -> None:
    samples = [(1.0, {"spine1": 100, "spine2": 100, "spine3": 100}),
               (2.0, {"spine1": 100, "spine2": 700, "spine3": 500})]
    share = measure.shares(samples, 0.5, 2.5)
    assert share == {"spine1": 0.0, "spine2": 0.6, "spine3": 0.4}
    assert measure.imbalance(share, ["spine2", "spine3"]) == pytest.approx(1.2)
    assert measure.shares(samples[:1], 0, 3) == {}


def test_moved_flows_separates_needless_moves() -> None:
    before = {0: "spine1", 1: "spine2", 2: "spine3", 3: "spine1"}
    during = {0: "spine2", 1: "spine3", 2: "spine3", 3: "spine3"}
    assert measure.moved_flows(before, during, broken={0, 3}) == (3, 1)


def test_delivery_timeline_is_received_over_sent_per_bin() -> None:
    result = ProbeResult(t0=100.0, stopped=100.1, rate_hz=100, bin_s=0.05, sent_bins=[(0, 10), (1, 10)],
                         recv_bins=[(0, 10), (1, 4)])
    assert measure.delivery_timeline(result, 100.0) == [[0.0, 1.0], [50.0, 0.4]]
