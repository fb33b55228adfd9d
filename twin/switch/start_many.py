"""Start many independent things at once (servers, threads, sockets bound in other namespaces).

Each start waits for a new thread to be scheduled (threading.Thread.start returns once the thread
runs; a gRPC server's start makes its serving thread; run_in_netns binds from a thread of its own).
On a loaded machine that wait is ~0.1 s: at 64 x 128, 192 converging bgpds keep ~200 threads
runnable, and one start after the other, the agent's 192 servers took 22 s to start and its 192
config-daemon threads 19 s, with next to no CPU spent. Started AT_ONCE at a time, the waits overlap.
The state loop's first pass reads its switches the same way, fewer at once (switchd.FIRST_PASS_WORKERS).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

AT_ONCE = 16
T = TypeVar("T")


def start_many(items: Sequence[T], start: Callable[[T], object], at_once: int = AT_ONCE) -> None:
    """`start(item)` for every item, `at_once` at a time; the first failure is raised once all ran."""
    if not items:
        return
    with ThreadPoolExecutor(max_workers=min(at_once, len(items)), thread_name_prefix="start") as pool:
        done = [pool.submit(start, item) for item in items]
    for each in done:
        each.result()
