"""SSH logins on one switch as SONiC's sshd limits them, or stricter.

- `MaxStartups`: sshd's default `MaxStartups 10:30:100`: past 10 connections that have not logged
  in yet, a new one is dropped with probability 30 %, rising linearly to 100 % at 100; and, stricter
  than SONiC's sshd (which sets no `PerSourceMaxStartups`), one client address holds at most 10 of
  them, and an address counts once towards the 10:30:100, however many it holds: silent connections
  from one GPU server (100 of them filled sshd's start-up slots for 120 s each) never drop another's.
- Failed passwords are slowed per client address by a `LoginThrottle` (twin.switch.access.login_throttle),
  as for gNMI: sshd with PAM waits about 2 s after each failure, per connection; twin decides an
  address's attempts one after another, the wait doubling with consecutive failures. The wait is an
  asyncio sleep: no thread is held, other clients are answered meanwhile.
- An unauthenticated connection is closed after 120 s (sshd's LoginGraceTime, asyncssh's
  login_timeout default).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable

from twin.switch.access.login_throttle import LoginThrottle

STARTUPS_BEGIN, STARTUPS_RATE, STARTUPS_FULL = 10, 30, 100
PER_SOURCE = 10
LOGIN_GRACE_S = 120.0


class MaxStartups:
    """sshd's start:rate:full random early drop of connections not logged in yet, counted by client
    address (an address at most `per_source` connections, counting once towards start:rate:full)."""

    def __init__(self, begin: int = STARTUPS_BEGIN, rate: int = STARTUPS_RATE, full: int = STARTUPS_FULL,
                 draw: Callable[[], float] = random.random, per_source: int = PER_SOURCE) -> None:
        self.begin, self.rate, self.full, self.draw = begin, rate, full, draw
        self.per_source = per_source
        self.by_source: Counter[str] = Counter()

    @property
    def pending(self) -> int:
        return sum(self.by_source.values())

    def admit(self, source: str = "") -> bool:
        """A new connection from `source`: True (and counted until `done`) unless dropped."""
        if self.by_source[source] >= self.per_source:
            return False
        pending = len(self.by_source)   # sshd's count of connections not logged in, an address counted once
        if pending >= self.full:
            return False
        if pending >= self.begin:
            chance = (self.rate + (100 - self.rate) * (pending - self.begin) / (self.full - self.begin)) / 100
            if self.draw() < chance:
                return False
        self.by_source[source] += 1
        return True

    def done(self, source: str = "") -> None:
        """An admitted connection from `source` logged in or went away before it did."""
        self.by_source[source] -= 1
        if self.by_source[source] <= 0:
            del self.by_source[source]


class SshLogins:
    """One switch's SSH login limits (used from its asyncio loop only)."""

    def __init__(self, throttle: LoginThrottle | None = None, startups: MaxStartups | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.throttle = throttle if throttle is not None else LoginThrottle()
        self.startups = startups if startups is not None else MaxStartups()
        self.clock = clock

    async def verdict(self, peer: str, authentic: bool) -> bool:
        """The answer to one password attempt from `peer`, given once its turn and delay came."""
        now = self.clock()
        verdict = self.throttle.decide(peer, authentic, now)
        if verdict.at > now:
            await asyncio.sleep(verdict.at - now)
        return verdict.allowed
