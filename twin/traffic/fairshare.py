"""Max-min fair rates of flows over links of given capacities (pure).

Progressive filling, done bottleneck by bottleneck: every unfrozen flow's rate rises together until a
link runs full; that link's flows are frozen at its fair share (what is left of its capacity divided
by its unfrozen flows), and the others go on. The link that fills first is always the one with the
least fair share, so a heap of fair shares, updated as flows freeze, gives the same rates as the
level-by-level loop at O(hops x log links) per flow.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def max_min(routes: Sequence[Sequence[K] | None], caps: Mapping[K, float]) -> list[float]:
    """Each flow's max-min fair rate (the capacities' unit). A flow with no route (None or empty) gets 0,
    and so does one crossing a link `caps` does not know (a link of no capacity)."""
    index: dict[K, int] = {}
    legs: list[list[int]] = []
    for route in routes:
        legs.append([index.setdefault(link, len(index)) for link in route] if route else [])
    remaining = [0.0] * len(index)
    for link, i in index.items():
        remaining[i] = float(caps.get(link, 0.0))
    users: list[list[int]] = [[] for _ in index]
    for flow, links in enumerate(legs):
        for i in links:
            users[i].append(flow)
    unfrozen = [len(u) for u in users]
    version = [0] * len(index)
    heap = [(remaining[i] / unfrozen[i], 0, i) for i in range(len(index)) if unfrozen[i]]
    heapq.heapify(heap)
    rates = [0.0] * len(legs)
    frozen = [not links for links in legs]
    while heap:
        share, seen, i = heapq.heappop(heap)
        if seen != version[i] or not unfrozen[i]:
            continue          # an older entry of a link whose share has changed since
        share = max(share, 0.0)
        touched: set[int] = set()
        for flow in users[i]:
            if frozen[flow]:
                continue
            frozen[flow] = True
            rates[flow] = share
            for j in legs[flow]:
                remaining[j] -= share
                unfrozen[j] -= 1
                touched.add(j)
        for j in touched:
            version[j] += 1
            if unfrozen[j]:
                heapq.heappush(heap, (max(remaining[j], 0.0) / unfrozen[j], version[j], j))
    return rates
