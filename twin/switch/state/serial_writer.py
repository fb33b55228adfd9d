"""One switch's redis writes, in order, on a thread of that switch's own.

The agent's state loop (twin.switch.state.switchd) serves every switch from one thread; if it wrote to
each switch's redis itself, one switch whose redis is slow or paused (a CLIENT PAUSE, a long
script) would hold every other switch's STATE_DB back (19 s measured before this). Each switch's
producers hand their writes to a `SerialWriter` instead: jobs run in the order given, on the
writer's thread once `start` was called (inline before, as unit tests and one-shot users want),
and the loop asks `backlog()` before giving a switch more work, so a stuck switch holds at most a
few jobs. A job that fails drops the jobs queued behind it (they may depend on it) and is kept as
`failure`, which the loop takes to write that switch's tables afresh.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable

Job = Callable[[], object]
log = logging.getLogger("twin.switchd")


class SerialWriter:
    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: collections.deque[Job] = collections.deque()
        self._cond = threading.Condition()
        self._running = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._wake: Callable[[], None] = lambda: None
        self._failure: Exception | None = None

    def start(self, wake: Callable[[], None] = lambda: None) -> None:
        """From now on jobs run on the writer's own thread; `wake()` is called each time it has run
        every job it was given (from that thread)."""
        self._wake = wake
        self._thread = threading.Thread(target=self._run, name=f"redis-{self.name}", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> None:
        """Run `job` after every job submitted before it (now, when the writer was not started)."""
        if self._thread is None:
            job()
            return
        with self._cond:
            self._jobs.append(job)
            self._cond.notify()

    def backlog(self) -> int:
        """Jobs given and not done (the one running included)."""
        with self._cond:
            return len(self._jobs) + self._running

    def take_failure(self) -> Exception | None:
        """The error of a job that failed since the last call (None: none did)."""
        with self._cond:
            failure, self._failure = self._failure, None
            return failure

    def wait_idle(self, timeout: float) -> bool:
        """Until every job given has run; False after `timeout` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._jobs and not self._running, timeout)

    def close(self, timeout: float = 2.0) -> None:
        with self._cond:
            self._stopping = True
            self._jobs.clear()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                job = self._jobs.popleft()
                self._running = True
            failure: Exception | None = None
            try:
                job()
            except Exception as exc:
                failure = exc
            with self._cond:
                self._running = False
                dropped = 0
                if failure is not None:
                    dropped = len(self._jobs)
                    self._jobs.clear()
                    self._failure = failure
                idle = not self._jobs
                self._cond.notify_all()
            if failure is not None:
                log.error("%s: writing its redis failed (%s: %s); %d queued writes dropped, its tables are "
                          "written afresh", self.name, type(failure).__name__, failure, dropped)
            if idle:
                self._wake()
