"""Every twin switch's SONiC daemons in one process (the lab's agent), so Python is paid once.

Per switch: a config daemon thread following CONFIG_DB keyspace events (twin.switch.cfgmgr), and
its state producers (twin.switch.producers) served by one shared event loop: one selector over
every switch's rtnetlink socket, bgpmon's log check every 20 ms, a refresh of FRR's view once a
second, and the counters of one switch at a time so each is read about once a second.
"""

from __future__ import annotations

import logging
import selectors
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from twin.switch.cfgmgr import ConfigDaemon, listen
from twin.switch.producers import SwitchProducers

LOG_CHECK_S = 0.02  # how often frr.log is looked at (bgpmon: 15 s)
MIN_FRR_GAP_S = 0.02  # at most one FRR query per switch this often, however many events arrive
REFRESH_S = 1.0  # FRR's view is read this often even without events (BFD state changes log nothing)
COUNTERS_S = 1.0  # SONiC's PORT_STAT flex counter interval
log = logging.getLogger("twin.switchd")


@dataclass
class _Due:
    producers: SwitchProducers
    frr_due: bool = True
    last_frr: float = 0.0

    def kernel_events(self) -> None:
        """Handle the switch's kernel events; FRR is asked again after any (a link or route
        change often comes with a session change)."""
        if self.producers.on_kernel_events():
            self.frr_due = True


class StateLoop:
    """The producers of every switch on one thread."""

    def __init__(self, producers: Sequence[SwitchProducers]) -> None:
        self.items = [_Due(p) for p in producers]
        self.selector = selectors.DefaultSelector()

    def start(self) -> None:
        for item in self.items:
            sock = item.producers.start()
            self.selector.register(sock, selectors.EVENT_READ, item)

    def run(self, stop: threading.Event) -> None:
        now = time.monotonic()
        next_log = next_refresh = now
        counter_gap = COUNTERS_S / max(1, len(self.items))
        next_counter, turn = now, 0
        while not stop.is_set():
            for key, _ in self.selector.select(timeout=LOG_CHECK_S):
                item: _Due = key.data
                self._guard(item, item.kernel_events)
            now = time.monotonic()
            if now >= next_log:
                next_log = now + LOG_CHECK_S
                for item in self.items:
                    if item.producers.frr_log_changed():
                        item.frr_due = True
            if now >= next_refresh:
                next_refresh = now + REFRESH_S
                for item in self.items:
                    item.frr_due = True
            for item in self.items:
                if item.frr_due and now - item.last_frr >= MIN_FRR_GAP_S:
                    item.frr_due, item.last_frr = False, now
                    self._guard(item, item.producers.poll_frr)
            if self.items and now >= next_counter:
                next_counter = now + counter_gap
                item = self.items[turn % len(self.items)]
                turn += 1
                self._guard(item, item.producers.poll_counters)

    @staticmethod
    def _guard(item: _Due, fn: Callable[[], object]) -> None:
        """Run one producer step; a failing switch is logged, the others carry on."""
        try:
            fn()
        except Exception as exc:
            log.error("%s: %s", item.producers.name, exc)

    def close(self) -> None:
        for item in self.items:
            item.producers.close()
        self.selector.close()


class SwitchDaemons:
    """Config daemons and state producers of the switches one agent serves."""

    def __init__(self, daemons: Sequence[ConfigDaemon], producers: Sequence[SwitchProducers]) -> None:
        self.daemons = list(daemons)
        self.loop = StateLoop(producers)
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        self.loop.start()
        for daemon in self.daemons:
            t = threading.Thread(target=listen, args=(daemon, self.stop), name=f"cfgmgr-{daemon.name}", daemon=True)
            t.start()
            self.threads.append(t)
        t = threading.Thread(target=self.loop.run, args=(self.stop,), name="producers", daemon=True)
        t.start()
        self.threads.append(t)

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=2)
        self.loop.close()
