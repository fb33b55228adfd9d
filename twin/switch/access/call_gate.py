"""Which gRPC calls a switch runs, and when: logins slowed per client, concurrency capped (pure).

Every call is judged on arrival, from its metadata and client address, before it takes a thread:
- its password through the switch's `LoginThrottle` (a failure holds the address's next decision
  back; an attempt arriving meanwhile waits its turn);
- a call let in counts against the switch's `max_calls` and its address's `peer_calls` until it
  ends; beyond either it is refused with RESOURCE_EXHAUSTED;
- a refused login is answered when its delay ends. At most `peer_waiting` (and `max_waiting` for
  the switch) wait at once, so a flood of calls without credentials is held in bounded memory. An
  address at its cap, or one with refusals waiting while the switch's are at theirs, has every further
  call refused at once with RESOURCE_EXHAUSTED *before* its password is looked at: the answer is the
  same for a right and a wrong password, so a full queue never tells an attacker which guess was
  right (answering wrong guesses at once and right ones at the throttle's time did). A call whose
  refusal would have to wait while the switch's queue is full is refused the same way.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from enum import Enum

from twin.switch.access.login_throttle import LoginThrottle

MAX_CALLS = 256      # a switch's calls at once (a STREAM subscription holds one while it runs)
PEER_CALLS = 128     # one client address's calls at once on a switch
MAX_WAITING = 1024   # refused logins waiting for their answer on a switch
PEER_WAITING = 256   # ... from one client address


class Outcome(Enum):
    RUN = "run"                    # let in: run the call from `at` on
    UNAUTHENTICATED = "unauthenticated"
    BUSY = "busy"                  # the switch runs max_calls already
    PEER_BUSY = "peer-busy"        # this address runs peer_calls already
    FLOODED = "flooded"            # this address's refused logins fill its queue (or the switch's)


@dataclass(frozen=True)
class Ticket:
    """A call's judgement: what it gets, from when (the gate's clock), and what it holds until
    `CallGate.finished`: a running slot (RUN) or a waiting one (a delayed refusal)."""

    outcome: Outcome
    at: float
    peer: str
    holds: bool


class CallGate:
    """One switch's gate; thread-safe (calls arrive on the server's thread, end on workers)."""

    def __init__(self, throttle: LoginThrottle | None = None, max_calls: int = MAX_CALLS,
                 peer_calls: int = PEER_CALLS, max_waiting: int = MAX_WAITING,
                 peer_waiting: int = PEER_WAITING) -> None:
        self.throttle = throttle if throttle is not None else LoginThrottle()
        self.max_calls, self.peer_calls = max_calls, peer_calls
        self.max_waiting, self.peer_waiting = max_waiting, peer_waiting
        self._lock = threading.Lock()
        self._running: Counter[str] = Counter()
        self._waiting: Counter[str] = Counter()
        self._run_total = self._wait_total = 0

    def arrive(self, peer: str, authentic: bool, now: float) -> Ticket:
        with self._lock:
            full = self._wait_total >= self.max_waiting
            if self._waiting[peer] >= self.peer_waiting or (full and self._waiting[peer] > 0):
                return Ticket(Outcome.FLOODED, now, peer, holds=False)   # unchecked: whatever the password
            verdict = self.throttle.decide(peer, authentic, now)
            if not verdict.allowed:
                if verdict.at <= now:
                    return Ticket(Outcome.UNAUTHENTICATED, now, peer, holds=False)
                if full:
                    return Ticket(Outcome.FLOODED, now, peer, holds=False)
                self._waiting[peer] += 1
                self._wait_total += 1
                return Ticket(Outcome.UNAUTHENTICATED, verdict.at, peer, holds=True)
            if self._run_total >= self.max_calls:
                return Ticket(Outcome.BUSY, verdict.at, peer, holds=False)
            if self._running[peer] >= self.peer_calls:
                return Ticket(Outcome.PEER_BUSY, verdict.at, peer, holds=False)
            self._running[peer] += 1
            self._run_total += 1
            return Ticket(Outcome.RUN, verdict.at, peer, holds=True)

    def arrive_open(self, peer: str, now: float) -> Ticket:
        """A call of a method that takes no credentials (gRPC reflection): counted against the
        switch's and the address's calls as any other, never judged as a login, never delayed."""
        with self._lock:
            if self._run_total >= self.max_calls:
                return Ticket(Outcome.BUSY, now, peer, holds=False)
            if self._running[peer] >= self.peer_calls:
                return Ticket(Outcome.PEER_BUSY, now, peer, holds=False)
            self._running[peer] += 1
            self._run_total += 1
            return Ticket(Outcome.RUN, now, peer, holds=True)

    def finished(self, ticket: Ticket) -> None:
        """The call of `ticket` ended (ran, or had its refusal sent); call once per ticket."""
        if not ticket.holds:
            return
        with self._lock:
            counter = self._running if ticket.outcome is Outcome.RUN else self._waiting
            counter[ticket.peer] -= 1
            if counter[ticket.peer] <= 0:
                del counter[ticket.peer]
            if ticket.outcome is Outcome.RUN:
                self._run_total -= 1
            else:
                self._wait_total -= 1

    def running(self, peer: str | None = None) -> int:
        with self._lock:
            return self._run_total if peer is None else self._running[peer]

    def waiting(self, peer: str | None = None) -> int:
        with self._lock:
            return self._wait_total if peer is None else self._waiting[peer]
