"""The arithmetic of a drill, over recorded timelines only (no I/O): convergence, detection,
loss runs, traffic shares. Times are wall-clock seconds; results are milliseconds."""

from __future__ import annotations

from collections.abc import Iterable

from twin.checks.fibwatch import Fib
from twin.drills.faults.base import Session
from twin.drills.observations import FibHistory, ProbeResult
from twin.drills.oracle import mismatches
from twin.model.drill import LossRun, SessionEvent


def fib_at(history: FibHistory, t: float) -> Fib:
    """Every switch's FIB as recorded at time t."""
    fib: Fib = {}
    for when, node, value in history:
        if when > t:
            break
        fib[node] = value
    return fib


def converged_at(history: FibHistory, expected: Fib, start: float, end: float,
                 ignore: Iterable[str] = ()) -> float | None:
    """The time from which every FIB matched `expected` until `end` (None: not by then).

    A FIB that already matches at `start` converged at `start`.
    """
    skip = set(ignore)
    fib = fib_at(history, start)
    matched_since: float | None = start if not mismatches(expected, fib, skip) else None
    for when, node, value in history:
        if when <= start:
            continue
        if when > end:
            break
        fib[node] = value
        ok = not mismatches(expected, fib, skip)
        if ok and matched_since is None:
            matched_since = when
        elif not ok:
            matched_since = None
    return matched_since


def first_events(events: Iterable[SessionEvent], sessions: Iterable[Session], state: str,
                 start: float, end: float) -> dict[Session, float]:
    """For each session, when its node first logged it entering `state` within [start, end]."""
    wanted = {(s.node, s.peer): s for s in sessions}
    out: dict[Session, float] = {}
    for e in sorted(events, key=lambda e: e.t):
        s = wanted.get((e.node, e.peer))
        if s is not None and s not in out and e.state == state and start <= e.t <= end:
            out[s] = e.t
    return out


def ms(t: float | None, since: float) -> float | None:
    return None if t is None else round((t - since) * 1000, 1)


def loss_runs(result: ProbeResult) -> list[LossRun]:
    return result.loss_runs()


def longest_loss(runs: Iterable[LossRun], period: float, start: float, end: float) -> tuple[float, int]:
    """(longest per-flow outage in ms, packets lost) over runs that began in [start, end).

    Outage = packets lost x the flow's sending interval (RFC 6413's loss-derived time).
    """
    longest, lost = 0.0, 0
    for r in runs:
        if start <= r.t_start < end:
            longest = max(longest, r.count * period * 1000)
            lost += r.count
    return round(longest, 1), lost


def shares(samples: list[tuple[float, dict[str, int]]], start: float, end: float) -> dict[str, float]:
    """Each spine's share of the packets the leaves sent up between start and end."""
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) < 2:
        return {}
    first, last = inside[0][1], inside[-1][1]
    delta = {k: last[k] - first.get(k, 0) for k in last}
    total = sum(delta.values())
    if total <= 0:
        return {}
    return {k: round(v / total, 4) for k, v in sorted(delta.items())}


def imbalance(share: dict[str, float], alive: Iterable[str]) -> float | None:
    """The busiest live spine's share over its fair share (1.0 = perfectly even)."""
    live = [s for s in alive if s in share]
    if not live:
        return None
    return round(max(share[s] for s in live) * len(live), 3)


def share_timeline(samples: list[tuple[float, dict[str, int]]], t0: float,
                   window: float = 0.1) -> dict[str, list[list[float]]]:
    """Per spine, [[t_ms, share]] over successive windows: for the timeline plot."""
    out: dict[str, list[list[float]]] = {}
    if not samples:
        return out
    prev_t, prev = samples[0]
    for t, counts in samples[1:]:
        if t - prev_t < window:
            continue
        delta = {k: counts[k] - prev.get(k, 0) for k in counts}
        total = sum(delta.values())
        for k, v in delta.items():
            out.setdefault(k, []).append([round((t - t0) * 1000, 1), round(v / total, 4) if total > 0 else 0.0])
        prev_t, prev = t, counts
    return out


def delivery_timeline(result: ProbeResult, t0: float) -> list[list[float]]:
    """[[t_ms, delivered share]] per probe bin, by send time."""
    sent, got = dict(result.sent_bins), dict(result.recv_bins)
    bin_s, base = result.bin_s, result.t0
    return [[round((base + b * bin_s - t0) * 1000, 1), round(min(1.0, got.get(b, 0) / n), 4)]
            for b, n in sorted((int(k), v) for k, v in sent.items()) if n]


def moved_flows(before: dict[int, str | None], during: dict[int, str | None],
                broken: set[int]) -> tuple[int, int]:
    """(flows whose spine changed, of those the ones whose path had not been broken by the fault).

    Hash-threshold multipath moves healthy flows too when the group shrinks; resilient
    hashing would move only the broken ones.
    """
    moved = [f for f, s in before.items() if during.get(f) != s]
    healthy = [f for f in moved if before[f] is not None and f not in broken]
    return len(moved), len(healthy)
