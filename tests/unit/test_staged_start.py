"""Staged start and the agent's polling budget: what keeps a large lab's bring-up from thrashing."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from twin.runtime.launch_gate import SAMPLE_S, LaunchGate
from twin.switch import producers as producers_module
from twin.switch.switchd import PollBudget, StateLoop


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def gate(load: list[int], clock: FakeClock, free: int = 2) -> LaunchGate:
    """A gate on 2 CPUs (limit 6 runnable) reading `load` one sample at a time (the last one repeats)."""
    samples = iter(load)
    last = [load[-1]]

    def sample() -> int:
        last[0] = next(samples, last[0])
        return last[0]

    return LaunchGate(cpus=2, free=free, sample=sample, clock=clock, sleep=clock.sleep, max_hold_s=3.0)


def test_the_first_launches_never_wait() -> None:
    clock = FakeClock()
    g = gate([100], clock, free=2)
    assert g.admit() == 0.0 and g.admit() == 0.0
    assert clock.now == 0.0


def test_a_calm_machine_admits_at_once() -> None:
    clock = FakeClock()
    g = gate([1], clock, free=0)
    assert [g.admit() for _ in range(5)] == [0.0] * 5
    assert g.waited == 0


def test_a_busy_machine_holds_the_launch_until_the_run_queue_drains() -> None:
    clock = FakeClock()
    g = gate([40] * 20 + [0] * 200, clock, free=0)
    waited = g.admit()
    # 20 samples at 40 runnable, then calm samples until the half-second average is under 6
    assert 20 * SAMPLE_S <= waited < 3.0
    assert g.held_s == pytest.approx(waited) and g.waited == 1


def test_a_launch_is_never_held_longer_than_the_limit() -> None:
    clock = FakeClock()
    g = gate([500], clock, free=0)
    assert g.admit() == pytest.approx(3.0, abs=SAMPLE_S)
    assert g.admit() == pytest.approx(3.0, abs=SAMPLE_S)   # slowed, never stopped


def test_the_budget_refills_at_its_duty_and_caps_at_its_burst() -> None:
    budget = PollBudget(duty=0.25, burst=0.25, now=0.0)
    budget.spend(1.0)                 # one slow poll: 0.75 s in debt
    budget.refill(2.0)                # 0.5 s earned
    assert not budget.allows()
    budget.refill(3.1)
    assert budget.allows()
    budget.refill(100.0)
    assert budget.tokens == 0.25


class _Producers:
    """Stands in for one switch's producers: counts what it was asked."""

    def __init__(self, name: str, cost: float, clock: FakeClock) -> None:
        self.name, self.cost, self.clock = name, cost, clock
        self.frr_polls = 0

    def poll_frr(self) -> None:
        self.frr_polls += 1
        self.clock.sleep(self.cost)

    def poll_counters(self) -> None:
        self.clock.sleep(self.cost)


def test_many_switches_changing_at_once_are_asked_in_turn_within_the_budget(monkeypatch: Any) -> None:
    clock = FakeClock()
    monkeypatch.setattr("twin.switch.switchd.time.monotonic", clock)
    switches = [_Producers(f"s{i}", 0.05, clock) for i in range(20)]
    loop = StateLoop(switches)  # type: ignore[arg-type]
    loop.budget = PollBudget(duty=0.25, burst=0.25, now=0.0)
    asked: list[str] = []
    for _ in range(10):   # ten loop turns, every switch due each time
        for item in loop.items:
            item.frr_due = True
        before = {s.name: s.frr_polls for s in switches}
        loop.ask_frr(clock.now)
        asked += [s.name for s in switches if s.frr_polls > before[s.name]]
        clock.sleep(0.02)
    # within budget: the polls took no more than a quarter of the time plus the burst
    assert sum(s.frr_polls for s in switches) * 0.05 <= 0.25 * clock.now + 0.25 + 0.05
    # longest-waiting first: nobody is asked twice before everyone was asked once
    assert len(set(asked[:20])) == min(20, len(asked))


def test_a_few_switches_changing_are_asked_at_once() -> None:
    clock = FakeClock()
    switches = [_Producers(f"s{i}", 0.003, clock) for i in range(12)]
    loop = StateLoop(switches)  # type: ignore[arg-type]
    loop.budget = PollBudget(now=0.0)
    for item in loop.items:
        item.frr_due = item.producers.name in ("s0", "s1")
    loop.budget.refill(1.0)
    due = loop.due_frr(1.0)
    assert [i.producers.name for i in due] == ["s0", "s1"] and loop.budget.allows()


class _Db:
    def pipeline(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not reached")


def test_a_large_backlog_of_kernel_events_is_read_as_one_resync(monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setattr(producers_module, "RESYNC_BACKLOG", 4096)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.setblocking(False)
    for _ in range(3):
        b.send(b"\0" * 2048)
    p = producers_module.SwitchProducers.__new__(producers_module.SwitchProducers)
    p.sock = a
    resyncs, decoded = [], []
    monkeypatch.setattr(p, "resync_kernel", lambda batch: resyncs.append(batch), raising=False)
    monkeypatch.setattr(producers_module.netlink, "decode", lambda data: decoded.append(data) or [])
    monkeypatch.setattr(producers_module, "Batch", lambda db: type("B", (), {"execute": lambda self: None})())
    p.db = _Db()  # type: ignore[assignment]
    assert p.on_kernel_events() == 1
    assert len(resyncs) == 1 and decoded == [], "nothing decoded: the tables are read whole instead"
    b.send(b"\0" * 100)
    p.on_kernel_events()
    assert len(resyncs) == 1 and len(decoded) == 1, "a small backlog is decoded event by event"
    a.close()
    b.close()
