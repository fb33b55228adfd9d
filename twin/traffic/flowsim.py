"""A flow-level simulation: when each transfer of a collective starts and ends (pure, no I/O).

Each transfer carries its bits along a route of links; it starts when every transfer it waits for has
ended (a ring's step waits for the chunk the previous step brought). Rates are max-min fair over the
links (twin.traffic.fairshare) and are computed again whenever a transfer starts or ends, so the
rates between two events are constant and the next event is exact. A collective's time is its last
transfer's end.

With an `Outage` (a fault at time 0 that the fabric needs `ms` to route around): until then, the
transfers whose route crosses the failed element (`hit`) move nothing and the others keep their
routes; from then on every transfer takes its route of the converged fabric (`routes`). A transfer
with no route never ends (None).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from twin.traffic.fairshare import max_min

K = TypeVar("K", bound=Hashable)   # a link's key
BITS_PER_MS_PER_MBPS = 1000.0    # 1 Mb/s moves 1000 bits in a millisecond
DONE = 1e-9                      # what is left of a transfer, as a share of its bits, when it counts as done


@dataclass(frozen=True)
class Transfer(Generic[K]):
    bits: float
    route: tuple[K, ...] | None       # the links it crosses (None: no path)
    after: tuple[int, ...] = ()       # the transfers (indices) that must end before it starts


@dataclass(frozen=True)
class Outage(Generic[K]):
    ms: float
    hit: frozenset[int]               # transfers whose route crosses the failed element
    routes: Sequence[tuple[K, ...] | None]   # every transfer's route once the fabric has converged


@dataclass(frozen=True)
class Timing:
    start_ms: float | None            # None: never started (something it waits for never ended)
    end_ms: float | None              # None: never ended (no path, or never started)
    waited_ms: float = 0.0            # time it stood still, started, because its route crossed the fault


def simulate(transfers: Sequence[Transfer[K]], caps_mbps: Mapping[K, float],
             outage: Outage[K] | None = None) -> list[Timing]:
    """Each transfer's start, end and stall, in ms from the collective's start."""
    n = len(transfers)
    left = [t.bits for t in transfers]
    start: list[float | None] = [None] * n
    end: list[float | None] = [None] * n
    waited = [0.0] * n
    waiting_on = [len(set(t.after)) for t in transfers]
    dependents: list[list[int]] = [[] for _ in transfers]
    for k, t in enumerate(transfers):
        for d in set(t.after):
            dependents[d].append(k)
    running: set[int] = set()
    now = 0.0

    def begin(k: int) -> None:
        start[k] = now
        if left[k] <= 0:
            finish(k)
        else:
            running.add(k)

    def finish(k: int) -> None:
        end[k] = now
        running.discard(k)
        for d in dependents[k]:
            waiting_on[d] -= 1
            if waiting_on[d] == 0:
                begin(d)

    for k in range(n):
        if waiting_on[k] == 0 and start[k] is None:
            begin(k)
    while running:
        before_outage = outage is not None and now < outage.ms
        movable: list[int] = []
        routes: list[tuple[K, ...]] = []
        for k in sorted(running):
            route = transfers[k].route if outage is None or before_outage else outage.routes[k]
            if route is None or (before_outage and outage is not None and k in outage.hit):
                continue
            movable.append(k)
            routes.append(route)
        rates = max_min(routes, caps_mbps)
        step, first = float("inf"), -1
        for k, rate in zip(movable, rates, strict=True):
            if rate > 0 and left[k] / (rate * BITS_PER_MS_PER_MBPS) < step:
                step, first = left[k] / (rate * BITS_PER_MS_PER_MBPS), k
        if outage is not None and before_outage and outage.ms - now < step:
            step, first = outage.ms - now, -1
        if first < 0 and step == float("inf"):
            break             # nothing can move any more: the rest never ends
        if outage is not None and before_outage:
            for k in running:
                if k in outage.hit:
                    waited[k] += step
        now = outage.ms if first < 0 and outage is not None else now + step
        done = []
        for k, rate in zip(movable, rates, strict=True):
            left[k] -= rate * BITS_PER_MS_PER_MBPS * step
            if k == first or left[k] <= DONE * transfers[k].bits:
                left[k] = 0.0
                done.append(k)
        for k in done:
            finish(k)
    return [Timing(start[k], end[k], waited[k]) for k in range(n)]
