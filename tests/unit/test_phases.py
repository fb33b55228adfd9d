"""Bring-up milestones turned into phases (twin.model.phases), and a process's start time."""

from __future__ import annotations

import os
import threading
import time

import pytest

from twin.host.processes import started_monotonic
from twin.model import phases
from twin.model.phases import ORDER, Phases


def test_phases_last_from_the_end_of_the_phase_before() -> None:
    p = Phases(start=100.0)
    p.reach("cli_start", at=100.5)
    p.reach("plan", at=101.0)
    p.reach("wiring", at=102.5)   # namespaces never marked: its time counts in wiring
    assert p.seconds() == {"cli_start": 0.5, "plan": 0.5, "wiring": 1.5}


def test_overlapped_phase_costs_nothing_and_the_phases_add_up() -> None:
    p = Phases(start=0.0)
    p.reach("config_applied", at=3.0)
    p.reach("sessions_established", at=4.0)   # before the agent served: overlapped
    p.reach("agents_ready", at=5.0)
    p.reach("fib_full", at=6.0)
    assert p.seconds() == {"config_applied": 3.0, "agents_ready": 2.0, "sessions_established": 0.0,
                           "fib_full": 1.0}
    assert sum(p.seconds().values()) == 6.0


def test_parallel_milestone_keeps_the_last_node_and_first_keeps_the_earliest() -> None:
    p = Phases(start=0.0)
    for at in (2.0, 5.0, 3.0):
        p.reach("daemon_launch", at=at)
    p.reach("fib_full", at=7.0, first=True)
    p.reach("fib_full", at=9.0, first=True)
    assert p.seconds() == {"daemon_launch": 5.0, "fib_full": 2.0}


def test_unknown_milestone_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown bring-up milestone 'launch'"):
        Phases().reach("launch")


def test_reach_marks_only_the_active_recorder_and_threads_get_it_explicitly() -> None:
    phases.reach("plan")   # no recorder: nothing to mark, no error
    p = Phases()
    with phases.recording(p):
        phases.reach("plan")
        assert phases.current() is p
        seen: list[Phases | None] = []
        worker = threading.Thread(target=lambda: seen.append(phases.current()))
        worker.start()
        worker.join()
        assert seen == [None]   # a new thread starts without it: bring-up passes it on
    assert phases.current() is None
    assert list(p.seconds()) == ["plan"]
    assert set(ORDER) >= set(p.seconds())


def test_this_process_started_before_now() -> None:
    age = time.monotonic() - started_monotonic()
    assert 0.0 <= age < time.clock_gettime(time.CLOCK_BOOTTIME)
    assert started_monotonic(os.getpid()) == pytest.approx(started_monotonic(), abs=0.05)
