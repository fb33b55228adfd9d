"""start_many: every item started, AT_ONCE of them at the same time, the first failure raised."""

from __future__ import annotations

import threading

import pytest

from twin.switch.start_many import AT_ONCE, start_many


def test_starts_run_side_by_side() -> None:
    """Each start waits at a barrier for AT_ONCE - 1 others: run one after the other, it breaks."""
    barrier = threading.Barrier(AT_ONCE, timeout=10)
    started: list[int] = []
    lock = threading.Lock()

    def start(item: int) -> None:
        barrier.wait()
        with lock:
            started.append(item)

    start_many(list(range(2 * AT_ONCE)), start)
    assert sorted(started) == list(range(2 * AT_ONCE))


def test_a_failed_start_is_raised_after_the_others_ran() -> None:
    started: list[int] = []

    def start(item: int) -> None:
        if item == 3:
            raise OSError("bind failed")
        started.append(item)

    with pytest.raises(OSError, match="bind failed"):
        start_many(list(range(8)), start)
    assert sorted(started) == [0, 1, 2, 4, 5, 6, 7]


def test_threads_started_are_running() -> None:
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait, daemon=True) for _ in range(20)]
    start_many(threads, threading.Thread.start)
    assert all(t.is_alive() for t in threads)
    stop.set()
