"""What a change did on a switch: FRR's running config per daemon, its routes in the RIB and the FIB,
its BGP sessions and its links, before against after. Pure: the readings come from
twin.checks.snapshot.

FRR's config is compared line by line in context (twin.switch.frr.frr_drift.parse), so the order FRR
shows its lines in does not matter and a line is named with the blocks it sits in
(`bgpd: route-map FROM_BGP_PEER_V4 deny 100`). A change to a route-map or to a list a route-map
matches on is applied by bgpd only after its route-map delay-timer (5 s unless `bgp route-map
delay-timer` says otherwise; 0: at once): `frr_delay_s` says how long to wait for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from twin.model.results import RouteChange, SwitchEffect
from twin.switch.frr.frr_drift import parse

Routes = dict[str, frozenset[str]]   # prefix -> next hops


@dataclass(frozen=True)
class Link:
    mtu: int
    up: bool
    addresses: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Session:
    state: str
    timers: str = ""        # "keepalive/hold s" as configured for the neighbor (what FRR runs it with)
    established: int = 0    # how many times it became Established: a reset shows as one more


@dataclass(frozen=True)
class SwitchSnapshot:
    """One switch at one moment; None where it could not be read (the effect then says nothing of it)."""

    frr: Mapping[str, str] | None = None       # daemon -> its running config
    rib: Routes | None = None                   # zebra's selected BGP routes
    fib: Routes | None = None                   # the kernel's BGP routes
    sessions: Mapping[str, Session] | None = None   # peer -> its BGP session
    links: Mapping[str, Link] = field(default_factory=dict)


# Top-level FRR blocks and lines bgpd applies only when its route-map delay-timer fires.
POLICY = ("route-map ", "ip prefix-list ", "ipv6 prefix-list ", "bgp community-list ", "bgp extcommunity-list ",
          "bgp large-community-list ", "bgp as-path access-list ")
ROUTE_MAP_DELAY_S = 5.0   # FRR's default `bgp route-map delay-timer`, which it does not show
_DELAY = re.compile(r"^bgp route-map delay-timer (\d+)\s*$", re.MULTILINE)


def frr_lines(config: Mapping[str, str]) -> set[str]:
    """Every line of every daemon's config in its context: `daemon: block > line`."""
    return {f"{daemon}: {' > '.join(path)}" for daemon, text in config.items() for _, path in parse(text)}


def route_changes(before: Routes, after: Routes) -> list[RouteChange]:
    return [RouteChange(prefix=p, before=sorted(before.get(p, ())), after=sorted(after.get(p, ())))
            for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]


def link_changes(before: Mapping[str, Link], after: Mapping[str, Link]) -> list[str]:
    out = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a is None or b is None:
            out.append(f"{name}: {'added' if a is None else 'removed'}")
            continue
        if a.mtu != b.mtu:
            out.append(f"{name}: mtu {a.mtu} -> {b.mtu}")
        if a.up != b.up:
            out.append(f"{name}: {'up' if a.up else 'down'} -> {'up' if b.up else 'down'}")
        for address in sorted(a.addresses - b.addresses):
            out.append(f"{name}: address {address} removed")
        for address in sorted(b.addresses - a.addresses):
            out.append(f"{name}: address {address} added")
    return out


def session_changes(before: Mapping[str, Session], after: Mapping[str, Session]) -> list[str]:
    out = []
    for peer in sorted(set(before) | set(after)):
        a, b = before.get(peer), after.get(peer)
        if a is None or b is None or a.state != b.state:
            out.append(f"{peer}: {a.state if a else '(none)'} -> {b.state if b else '(none)'}")
            continue
        if a.established != b.established:
            out.append(f"{peer}: reset {b.established - a.established} time(s) ({b.state} again)")
        if a.timers != b.timers:
            out.append(f"{peer}: timers {a.timers} -> {b.timers}")
    return out


def switch_effect(switch: str, before: SwitchSnapshot, after: SwitchSnapshot,
                  fields: Iterable[str] = ()) -> SwitchEffect:
    effect = SwitchEffect(switch=switch, fields=list(fields))
    if before.frr is not None and after.frr is not None:
        old, new = frr_lines(before.frr), frr_lines(after.frr)
        effect.frr_added, effect.frr_removed = sorted(new - old), sorted(old - new)
    if before.rib is not None and after.rib is not None:
        effect.rib = route_changes(before.rib, after.rib)
    if before.fib is not None and after.fib is not None:
        effect.fib = route_changes(before.fib, after.fib)
    if before.sessions is not None and after.sessions is not None:
        effect.sessions = session_changes(before.sessions, after.sessions)
    effect.links = link_changes(before.links, after.links)
    return effect


def route_map_delay_s(bgpd_config: str) -> float:
    match = _DELAY.search(bgpd_config)
    return float(match.group(1)) if match else ROUTE_MAP_DELAY_S


def frr_delay_s(before: Mapping[str, str] | None, after: Mapping[str, str] | None) -> float:
    """How long after it was configured bgpd applies this change of FRR's config: its route-map
    delay-timer when a route-map or a list (prefix, community, AS-path) changed, else 0."""
    if before is None or after is None:
        return 0.0
    changed = frr_lines(before) ^ frr_lines(after)
    if not any(line.split(": ", 1)[1].startswith(POLICY) for line in changed):
        return 0.0
    return route_map_delay_s(after.get("bgpd", ""))


def described(effect: SwitchEffect, limit: int = 8) -> list[str]:
    """The effect as lines a person reads. A change that moved no route, session or link had no
    effect, whatever it changed in FRR's config: said with the fields it set and the FRR lines."""
    lines = [f"FRR + {line}" for line in effect.frr_added] + [f"FRR - {line}" for line in effect.frr_removed]
    if effect.no_effect:
        fields = f" ({', '.join(effect.fields)})" if effect.fields else ""
        in_frr = "; FRR's config changed, but no route, session or link did" if lines else ""
        return [f"no effect{fields}{in_frr}", *lines[:limit]]
    for where, changes in (("RIB", effect.rib), ("FIB", effect.fib)):
        gained = [c.prefix for c in changes if not c.before]
        lost = [c.prefix for c in changes if not c.after]
        moved = [c for c in changes if c.before and c.after]
        if gained:
            lines.append(f"{where} gained {len(gained)}: {_some(gained)}")
        if lost:
            lines.append(f"{where} lost {len(lost)}: {_some(lost)}")
        if moved:
            lines.append(f"{where} paths changed {len(moved)}: "
                         + _some([f"{c.prefix} {len(c.before)} -> {len(c.after)} next hops" for c in moved]))
    lines += [f"session {s}" for s in effect.sessions] + [f"link {s}" for s in effect.links]
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def causes(effects: Iterable[SwitchEffect]) -> list[str]:
    """The change's lines behind a failure, switch by switch: the CONFIG_DB fields it set and what they
    became in FRR, for every switch it touched that moved something."""
    out = []
    for e in effects:
        if not e.fields or e.no_effect:
            continue
        frr = f"; FRR: {_some([f'+ {line}' for line in e.frr_added] + [f'- {line}' for line in e.frr_removed], 3)}" \
            if e.frr_added or e.frr_removed else ""
        out.append(f"{e.switch}: {_some(e.fields, 3)}{frr}")
    return out


def _some(items: list[str], limit: int = 4) -> str:
    return ", ".join(items[:limit]) + (f" (+{len(items) - limit})" if len(items) > limit else "")
