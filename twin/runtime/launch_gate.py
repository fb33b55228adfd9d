"""Staged start: a large lab's switches launch their routing daemons while the machine keeps up.

Every launched switch starts peering at once, and peering is CPU-bound: launching 192 switches as
fast as they can be started puts hundreds of runnable daemons on 2 CPUs, keepalives go late,
sessions reset and their work is done again. So the first `free` launches go at once (a lab of
that size never saturates the machine), and each later one waits until the run queue, averaged
over the last half second, is at most `per_cpu` runnable tasks per CPU, or `max_hold_s` passed
(the gate slows a bring-up, it never stops one).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

FREE_PER_CPU = 8      # launches per CPU that never wait
PER_CPU = 3.0         # runnable tasks per CPU the machine keeps up with
MAX_HOLD_S = 1.0      # the longest one launch waits
SAMPLE_S = 0.05
WINDOW_S = 0.5        # samples averaged over the last half second


def runnable() -> int:
    """Tasks runnable now (/proc/loadavg's fourth field, running/total), this reader excluded."""
    return max(0, int(Path("/proc/loadavg").read_text().split()[3].split("/")[0]) - 1)


class LaunchGate:
    """Shared by the threads that start a lab's nodes; `admit()` before a switch launches its daemons."""

    def __init__(self, cpus: int | None = None, free: int | None = None, per_cpu: float = PER_CPU,
                 max_hold_s: float = MAX_HOLD_S, sample: Callable[[], int] = runnable,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        cpus = cpus or os.cpu_count() or 1
        self.free = FREE_PER_CPU * cpus if free is None else free
        self.limit = per_cpu * cpus
        self.max_hold_s = max_hold_s
        self.sample, self.clock, self.sleep = sample, clock, sleep
        self.admitted = 0
        self.waited = 0     # launches that waited at all
        self.held_s = 0.0   # total time launches waited, for `twin up`'s notes
        self._lock = threading.Lock()
        self._recent: deque[tuple[float, int]] = deque()

    def admit(self) -> float:
        """Return when this launch may go; how long it waited."""
        with self._lock:   # one launch is judged at a time: a calm moment admits one, then looks again
            self.admitted += 1
            if self.admitted <= self.free:
                return 0.0
            start = self.clock()
            while not self._calm() and self.clock() - start < self.max_hold_s:
                self.sleep(SAMPLE_S)
            waited = self.clock() - start
            self.held_s += waited
            self.waited += waited > 0
            return waited

    def _calm(self) -> bool:
        """A new sample; True when the samples of the last WINDOW_S average at most the limit."""
        now = self.clock()
        self._recent.append((now, self.sample()))
        while self._recent and now - self._recent[0][0] > WINDOW_S:
            self._recent.popleft()
        return sum(v for _, v in self._recent) / len(self._recent) <= self.limit
