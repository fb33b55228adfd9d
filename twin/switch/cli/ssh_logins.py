"""SSH logins on one switch as SONiC's sshd limits them, or stricter.

- `MaxStartups`: sshd's default `MaxStartups 10:30:100`: past 10 connections that have not logged
  in yet, a new one is dropped with probability 30 %, rising linearly to 100 % at 100.
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
from collections.abc import Callable

from twin.switch.access.login_throttle import LoginThrottle

STARTUPS_BEGIN, STARTUPS_RATE, STARTUPS_FULL = 10, 30, 100
LOGIN_GRACE_S = 120.0


class MaxStartups:
    """sshd's start:rate:full random early drop of connections not logged in yet."""

    def __init__(self, begin: int = STARTUPS_BEGIN, rate: int = STARTUPS_RATE, full: int = STARTUPS_FULL,
                 draw: Callable[[], float] = random.random) -> None:
        self.begin, self.rate, self.full, self.draw = begin, rate, full, draw
        self.pending = 0

    def admit(self) -> bool:
        """A new connection: True (and counted until `logged_in` or `gone`) unless dropped."""
        if self.pending >= self.full:
            return False
        if self.pending >= self.begin:
            chance = (self.rate + (100 - self.rate) * (self.pending - self.begin) / (self.full - self.begin)) / 100
            if self.draw() < chance:
                return False
        self.pending += 1
        return True

    def done(self) -> None:
        """An admitted connection logged in or went away before it did."""
        self.pending = max(0, self.pending - 1)


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
