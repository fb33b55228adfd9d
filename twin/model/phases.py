"""Where the time of `twin up` goes: milestones reached during bring-up, reported as phases.

Each layer marks the milestone it reaches (`reach("wiring")`) on the recorder the command set up
(`recording(phases)`); with no recorder active, `reach` does nothing, so the library's other callers
(`twin ci`, the pytest plugin) pay nothing. Milestones reached by many nodes in parallel (daemons
launched, config applied) keep the latest node's time: the phase ends when the last node is there.

`Phases.seconds()` turns milestones into phases: a phase lasts from the end of the phase before it
to its own milestone, or 0 when its milestone was reached while an earlier phase was still running
(work overlapped); so the phases add up to the time from the command's start to its last milestone.
A milestone never reached (a runtime without it, a lab that did not become healthy) has no phase:
its time counts in the next phase that was reached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# In the order of a bring-up; the name each phase has in `twin up --json`.
ORDER = (
    "cli_start",            # the interpreter and twin's CLI, until `twin up` runs
    "plan",                 # the lab file loaded, planned and rendered
    "namespaces",           # every node exists (namespace, management address)
    "wiring",               # every link wired
    "prepared",             # every node ready to launch (a switch's databases, kernel and checked FRR files)
    "daemon_launch",        # every node's routing daemons (FRR) running
    "config_applied",       # every node's FRR config loaded
    "agents_ready",         # the lab's gNMI agent serves
    "sessions_established", # every expected BGP session Established
    "fib_full",             # every leaf's FIB at full ECMP width (and BFD Up where asked)
    "servers_reachable",    # the data-plane checks (server pings) pass: healthy
    "state_written",        # the gNMI agent has written every switch's state tables (what gNMI serves)
)


class Phases:
    """Milestones of one bring-up, as monotonic times, from `start` (the command's start)."""

    def __init__(self, start: float | None = None) -> None:
        self.start = time.monotonic() if start is None else start
        self._at: dict[str, float] = {}
        self._lock = threading.Lock()

    def reach(self, name: str, at: float | None = None, first: bool = False) -> None:
        """Mark `name` reached (now, or `at`): the latest time marked counts, or with `first` the
        earliest (a poll that saw it once, while later polls wait for something else)."""
        if name not in ORDER:
            raise ValueError(f"unknown bring-up milestone '{name}' (known: {', '.join(ORDER)})")
        when = time.monotonic() if at is None else at
        with self._lock:
            seen = self._at.get(name, when)
            self._at[name] = min(seen, when) if first else max(seen, when)

    def reached(self, name: str) -> bool:
        return name in self._at

    def seconds(self) -> dict[str, float]:
        """{phase: seconds} for the milestones reached, in bring-up order (see the module's doc)."""
        out: dict[str, float] = {}
        end = self.start
        for name in ORDER:
            if name in self._at:
                at = self._at[name]
                out[name] = round(max(0.0, at - end), 3)
                end = max(end, at)
        return out


_current: ContextVar[Phases | None] = ContextVar("twin_phases", default=None)


def current() -> Phases | None:
    """The recorder of this context; threads a bring-up starts pass it on explicitly (`recording`)."""
    return _current.get()


@contextmanager
def recording(phases: Phases | None) -> Iterator[Phases | None]:
    token = _current.set(phases)
    try:
        yield phases
    finally:
        _current.reset(token)


def reach(name: str, first: bool = False) -> None:
    """Mark `name` reached now on the active recorder, if there is one (see Phases.reach)."""
    phases = _current.get()
    if phases is not None:
        phases.reach(name, first=first)
