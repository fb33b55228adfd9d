"""The staged start: a lab's nodes start WORKERS at a time, in plan order, every one of them."""

from __future__ import annotations

import threading
import time
from typing import Any

from twin.runtime import wiring


def test_nodes_start_at_most_workers_at_a_time_and_all_start() -> None:
    nodes: list[Any] = [f"node{i}" for i in range(3 * wiring.WORKERS + 1)]
    running = peak = 0
    lock = threading.Lock()
    ticks: list[int] = []

    def start(node: Any) -> list[str]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return [f"{node} started"]

    notes = wiring.parallel(nodes, start, lambda: ticks.append(1))
    assert peak == wiring.WORKERS
    assert notes == [f"{n} started" for n in nodes] and len(ticks) == len(nodes)
