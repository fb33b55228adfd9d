"""Every twin switch's SONiC daemons in one process (the lab's agent), so Python is paid once.

Per switch: a config daemon thread following CONFIG_DB keyspace events (twin.switch.config.cfgmgr), and
its state producers (twin.switch.state.producers) served by one shared event loop: one selector over
every switch's rtnetlink socket and one inotify descriptor telling which switches' frr.log was
written (bgpmon's activity test, twin.switch.state.logwatch), a refresh of FRR's view once a second
where something FRR does not log may change (a session not yet Established, any BFD session), and
the counters of one switch at a time so each is read about once a second. Between these the loop
sleeps.

Asking FRR and reading counters is paid from a budget (PollBudget): at most a quarter of the wall
clock. A few switches changing at once (a drill) are each asked within 20 ms; when every switch of
a large fabric changes at once (bring-up: 192 bgpds, each answering `show bgp summary json` for up
to 128 peers), the switches are asked in turn, longest-waiting first, as often as the budget allows,
so the agent never takes the CPU the fabric's daemons need to converge. SONiC's bgpmon asks every
15 s; the counters, PORT_STAT's 1 s interval, stretch the same way under load.

The loop reads the kernel and FRR; it writes no redis itself. Each switch's writes go to that
switch's own writer thread (twin.switch.state.serial_writer), over connections of the producers' own, so
a switch whose redis is slow or paused (a client's CLIENT PAUSE, a long script) holds back its own
tables only: while its writer has MAX_BACKLOG jobs waiting, the loop gives that switch nothing more
(its kernel events wait in its socket, FRR stays due) and carries on with the others; the writer
wakes the loop when it has caught up. A switch whose writes failed has its tables written afresh
at the next refresh.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import selectors
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from twin.switch.config.cfgmgr import ConfigDaemon, listen, wake
from twin.switch.start_many import start_many
from twin.switch.state.logwatch import LogWatch
from twin.switch.state.producers import SwitchProducers

MIN_FRR_GAP_S = 0.02  # at most one FRR query per switch this often, however many events arrive
MIN_WAIT_S = 0.002  # the loop's shortest sleep
REFRESH_S = 1.0  # FRR's view is read this often without events where not all would be logged (SwitchProducers)
COUNTERS_S = 1.0  # SONiC's PORT_STAT flex counter interval
POLL_DUTY = 0.25  # the share of the wall clock the loop may spend asking FRR and reading counters
POLL_BURST_S = 0.25  # polling time saved up while idle, for a burst of changes
# A subscribed switch's kernel events kept until run() reads its tables (and drops them): while a
# large fabric launches, 192 sockets of netlink.RCVBUF would hold up to 1.5 GiB of stale events.
SUBSCRIBED_RCVBUF = 64 << 10
FIRST_PASS_WORKERS = 4  # switches read at once in the first pass (StateLoop.first_pass)
MAX_BACKLOG = 4  # redis jobs a switch's writer may hold before the loop gives that switch no more work
log = logging.getLogger("twin.switchd")


class PollBudget:
    """A token bucket of polling time: `duty` seconds accrue per second of wall clock, up to `burst`;
    each poll spends what it took (including the daemon's time to answer, and any wait for the CPU,
    so a loaded machine is asked less)."""

    def __init__(self, duty: float = POLL_DUTY, burst: float = POLL_BURST_S, now: float = 0.0) -> None:
        self.duty, self.burst = duty, burst
        self.tokens, self.last = burst, now

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.last) * self.duty)
        self.last = now

    def allows(self) -> bool:
        return self.tokens > 0

    def spend(self, seconds: float) -> None:
        self.tokens -= seconds


@dataclass
class _Due:
    producers: SwitchProducers
    frr_due: bool = True   # bgpd and bfdd to be asked
    bfd_due: bool = False  # bfdd to be asked (the refresh of a switch whose BGP sessions are all up)
    last_frr: float = 0.0
    parked: bool = False   # its kernel events left waiting in its socket while its writer catches up

    def keeps_up(self) -> bool:
        """Whether the switch's redis takes its writes: its writer is not MAX_BACKLOG jobs behind."""
        return self.producers.writer.backlog() < MAX_BACKLOG

    def refresh(self) -> None:
        """Ask again what may have changed without a log line: bgpd while a session is on its way
        up, bfdd always (it logs no state change). An idle fabric's bgpds are not asked."""
        if not self.producers.bgp_settled():
            self.frr_due = True
        elif self.producers.runs_bfdd():
            self.bfd_due = True

    def kernel_events(self) -> None:
        """Handle the switch's kernel events; FRR is asked again after any (a link or route
        change often comes with a session change)."""
        if self.producers.on_kernel_events():
            self.frr_due = True


class _Wake:
    """A pipe the switches' writers write to when they have caught up, so the loop looks again."""

    def __init__(self) -> None:
        self.rfd, self.wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def __call__(self) -> None:
        with contextlib.suppress(OSError):   # full (BlockingIOError): a wake is pending already
            os.write(self.wfd, b"w")

    def drain(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self.rfd, 4096):
                pass

    def close(self) -> None:
        os.close(self.rfd)
        os.close(self.wfd)


class StateLoop:
    """The producers of every switch on one thread; their redis writes on a thread per switch."""

    def __init__(self, producers: Sequence[SwitchProducers]) -> None:
        self.items = [_Due(p) for p in producers]
        self.selector = selectors.DefaultSelector()
        self.budget = PollBudget(now=time.monotonic())
        self.logs: LogWatch[_Due] = LogWatch()
        self.selector.register(self.logs.fileno(), selectors.EVENT_READ, self.logs)
        self.wake = _Wake()
        self.selector.register(self.wake.rfd, selectors.EVENT_READ, self.wake)

    def start(self, on_each: Callable[[], None] = lambda: None) -> None:
        """Subscribe to each switch's kernel events and frr.log (`on_each` after each) and start its
        redis writer; run() writes their state."""
        for item in self.items:
            sock = item.producers.subscribe(SUBSCRIBED_RCVBUF)
            self.selector.register(sock, selectors.EVENT_READ, item)
            self.logs.add(item.producers.log_path, item)
            item.producers.writer.start(self.wake)
            on_each()

    def run(self, stop: threading.Event, on_written: Callable[[], None] = lambda: None) -> None:
        """The state loop; `on_written()` once every switch's tables were written afresh and its
        writer has sent them."""
        # Each switch's tables written afresh first, here rather than in start(): on a 192-switch lab
        # this takes tens of CPU-seconds, and gNMI serves during it; `twin up` returns after it.
        began = time.monotonic()
        self.first_pass(stop)
        if stop.is_set():
            return
        read = time.monotonic()
        for each in self.items:
            while not stop.is_set() and not each.producers.writer.wait_idle(timeout=0.5):
                pass
        if stop.is_set():
            return
        log.info("first pass over %d switches: read in %.1f s, written %.1f s after", len(self.items),
                 read - began, time.monotonic() - read)
        on_written()
        now = time.monotonic()
        next_refresh = now
        counter_gap = COUNTERS_S / max(1, len(self.items))
        next_counter, turn = now, 0
        while not stop.is_set():
            for key, _ in self.selector.select(timeout=self.wait(time.monotonic(), min(next_refresh, next_counter))):
                self.on_ready(key.data)
            now = time.monotonic()
            if now >= next_refresh:
                next_refresh = now + REFRESH_S
                for item in self.items:
                    item.refresh()
                    self.recover(item)
            self.ask_frr(now)
            if self.items and now >= next_counter and self.budget.allows():
                next_counter = now + counter_gap
                item = self.items[turn % len(self.items)]
                turn += 1
                if item.keeps_up():   # else its turn passes: counters are read again a second later
                    self._paid(item, item.producers.poll_counters)

    def first_pass(self, stop: threading.Event) -> None:
        """Every switch's tables read and handed to its writer, FIRST_PASS_WORKERS switches at a
        time: a switch's reading waits on its bgpd, its redis and the kernel for most of its time
        (about 60 ms a switch at 64 x 128, 23 ms of it this process's CPU), so switches read side by
        side take what one waits for. Switches not begun when `stop` is set are not read."""
        def one(item: _Due) -> None:
            if not stop.is_set():
                self._guard(item, item.producers.write_all)

        start_many(self.items, one, FIRST_PASS_WORKERS)   # a step's error is logged by _guard, the others go on

    def on_ready(self, ready: LogWatch[_Due] | _Due | _Wake) -> None:
        """A switch's kernel events, frr.log written on some switches (FRR asked again there), or a
        writer that caught up (its switch's events read again)."""
        if isinstance(ready, LogWatch):
            for item in ready.changed():
                item.frr_due = True
        elif isinstance(ready, _Wake):
            ready.drain()
            for item in self.items:
                if item.parked and item.keeps_up():
                    self._unpark(item)
        elif not ready.keeps_up():   # its redis is behind: its events wait in its socket meanwhile
            self._park(ready)
        else:
            self._guard(ready, ready.kernel_events)

    def _park(self, item: _Due) -> None:
        if not item.parked and item.producers.sock is not None:
            self.selector.unregister(item.producers.sock)
            item.parked = True

    def _unpark(self, item: _Due) -> None:
        if item.parked and item.producers.sock is not None:
            self.selector.register(item.producers.sock, selectors.EVENT_READ, item)
        item.parked = False

    def recover(self, item: _Due) -> None:
        """A switch whose redis writes failed (redis was gone, or paused past the timeout) has its
        tables written afresh once its writer is free: what the loop remembers as written may not be.
        Parked events are read again (a wake may have come before the backlog fell)."""
        if not item.keeps_up():
            return
        if item.parked:
            self._unpark(item)
        if item.producers.writer.take_failure() is not None:
            self._guard(item, item.producers.write_all)

    def wait(self, now: float, deadline: float) -> float:
        """How long the loop may sleep: until its next timed step, or MIN_FRR_GAP_S while a switch
        waits to be asked (for its gap or the budget); never less than MIN_WAIT_S, so a step the
        budget holds back is not spun on."""
        if any(i.frr_due or i.bfd_due for i in self.items):
            return MIN_FRR_GAP_S
        return min(REFRESH_S, max(MIN_WAIT_S, deadline - now))

    def ask_frr(self, now: float) -> None:
        """Ask FRR for the switches that are due, longest-waiting first, while the budget allows."""
        self.budget.refill(now)
        for item in self.due_frr(now):
            if not self.budget.allows():
                break
            bgp = item.frr_due
            item.frr_due, item.bfd_due, item.last_frr = False, False, now
            self._paid(item, functools.partial(item.producers.poll_frr, bgp=bgp))

    def due_frr(self, now: float) -> list[_Due]:
        """Switches to ask FRR now, the longest-waiting first (each at most every MIN_FRR_GAP_S)."""
        due = [i for i in self.items
               if (i.frr_due or i.bfd_due) and now - i.last_frr >= MIN_FRR_GAP_S and i.keeps_up()]
        return sorted(due, key=lambda i: i.last_frr)

    def _paid(self, item: _Due, fn: Callable[[], object]) -> None:
        start = time.monotonic()
        self._guard(item, fn)
        self.budget.spend(time.monotonic() - start)

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
        self.logs.close()
        self.selector.close()
        self.wake.close()


class SwitchDaemons:
    """Config daemons and state producers of the switches one agent serves."""

    def __init__(self, daemons: Sequence[ConfigDaemon], producers: Sequence[SwitchProducers]) -> None:
        self.daemons = list(daemons)
        self.loop = StateLoop(producers)
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.listeners: list[tuple[ConfigDaemon, threading.Thread]] = []   # the config daemons' (start_config)

    def start_config(self) -> None:
        """The config daemons, each following its switch's CONFIG_DB."""
        threads = [threading.Thread(target=listen, args=(daemon, self.stop), name=f"cfgmgr-{daemon.name}",
                                    daemon=True) for daemon in self.daemons]
        start_many(threads, threading.Thread.start)
        self.listeners = list(zip(self.daemons, threads, strict=True))
        self.threads += threads

    def subscribe(self, on_each: Callable[[], None] = lambda: None) -> None:
        """The state producers subscribed to their switches' events (`on_each` after each); they
        write nothing until start_state."""
        self.loop.start(on_each)

    def start_state(self, on_written: Callable[[], None] = lambda: None) -> None:
        """The state producers: each switch's tables written afresh (then `on_written()`), then kept
        as events come."""
        t = threading.Thread(target=self.loop.run, args=(self.stop, on_written), name="producers", daemon=True)
        t.start()
        self.threads.append(t)

    def close(self) -> None:
        self.stop.set()
        for daemon, listener in self.listeners:
            if listener.is_alive():   # one whose switch's redis went away has ended on its error
                wake(daemon)
        for t in self.threads:
            t.join(timeout=2)
        self.loop.close()
