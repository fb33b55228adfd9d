"""Which FRR daemon takes each command of a rendered frr.conf, when every daemon reads its own file
(`-f`) as FRR's split configuration has it: what vtysh would send each daemon (FRR 8.4).

vtysh sends a command to every daemon that knows it. A daemon given a block it does not know leaves
config mode at its `exit` and drops everything after it (a `bfd ... exit` block given to bgpd loses
`router bgp`), so blocks go only to their owners; a daemon given a line inside a block it does not
know logs "No such command" and goes on. Lines every daemon takes (hostname, logging, defaults) go
to all.
"""

from __future__ import annotations

from collections.abc import Sequence

EVERY = "*"
Owners = frozenset[str]

# (first words of a top-level command, the daemons that take it)
_TOP: tuple[tuple[tuple[str, ...], Owners], ...] = (
    (("frr", "version"), frozenset({EVERY})),
    (("frr", "defaults"), frozenset({EVERY})),
    (("hostname",), frozenset({EVERY})),
    (("log",), frozenset({EVERY})),
    (("no", "log"), frozenset({EVERY})),
    (("password",), frozenset({EVERY})),
    (("enable", "password"), frozenset({EVERY})),
    (("line", "vty"), frozenset({EVERY})),
    (("service", "integrated-vtysh-config"), frozenset()),   # vtysh's own
    (("end",), frozenset()),
    (("router", "bgp"), frozenset({"bgpd"})),
    (("bgp",), frozenset({"bgpd"})),                        # as-path and community lists
    (("bfd",), frozenset({"bfdd"})),
    (("route-map",), frozenset({"zebra", "bgpd"})),
    (("ip", "prefix-list"), frozenset({"zebra", "bgpd"})),
    (("ipv6", "prefix-list"), frozenset({"zebra", "bgpd"})),
    (("ip", "protocol"), frozenset({"zebra"})),
    (("ipv6", "protocol"), frozenset({"zebra"})),
    (("ip", "nht"), frozenset({"zebra"})),
    (("ipv6", "nht"), frozenset({"zebra"})),
    (("zebra",), frozenset({"zebra"})),
    (("no", "zebra"), frozenset({"zebra"})),
    (("interface",), frozenset({"zebra"})),
    (("ip", "route"), frozenset({"staticd"})),
    (("ipv6", "route"), frozenset({"staticd"})),
)

_ZEBRA, _BGPD, _BOTH = frozenset({"zebra"}), frozenset({"bgpd"}), frozenset({"zebra", "bgpd"})

# (first words of a line inside a route-map entry, the daemons that take it), the longest match
# deciding: FRR's own route-map commands (lib) go to every daemon that keeps route-maps, zebra's and
# bgpd's to that daemon only. Read from FRR 8.4 itself: each line loaded with vtysh into a zebra and a
# bgpd, then looked for in each one's running-config (tests/integration/test_frr_split.py does it again).
ROUTE_MAP_LINES: tuple[tuple[tuple[str, ...], Owners], ...] = (
    (("description",), _BOTH),
    (("on-match",), _BOTH),
    (("call",), _BOTH),
    (("continue",), _BOTH),
    (("match", "interface"), _BOTH),
    (("match", "tag"), _BOTH),
    (("match", "metric"), _BOTH),
    (("match", "ip", "address"), _BOTH),
    (("match", "ipv6", "address"), _BOTH),
    (("match", "ip", "next-hop"), _BOTH),
    (("set", "metric"), _BOTH),
    (("set", "tag"), _BOTH),
    (("set", "ip", "next-hop"), _BOTH),
    (("set", "ipv6", "next-hop", "local"), _BOTH),
    (("set", "src"), _ZEBRA),
    (("match", "source-protocol"), _ZEBRA),
    (("match", "source-instance"), _ZEBRA),
    (("match", "ip", "address", "prefix-len"), _ZEBRA),
    (("match", "ipv6", "address", "prefix-len"), _ZEBRA),
    (("match", "ip", "next-hop", "prefix-len"), _ZEBRA),
    (("match", "ip", "next-hop", "address"), _BGPD),
    (("match", "ip", "route-source"), _BGPD),
    (("match", "ipv6", "next-hop"), _BGPD),
    (("match", "community"), _BGPD),
    (("match", "large-community"), _BGPD),
    (("match", "extcommunity"), _BGPD),
    (("match", "as-path"), _BGPD),
    (("match", "peer"), _BGPD),
    (("match", "origin"), _BGPD),
    (("match", "local-preference"), _BGPD),
    (("match", "mac"), _BGPD),
    (("match", "probability"), _BGPD),
    (("match", "source-vrf"), _BGPD),
    (("match", "alias"), _BGPD),
    (("set", "community"), _BGPD),
    (("set", "comm-list"), _BGPD),
    (("set", "large-community"), _BGPD),
    (("set", "large-comm-list"), _BGPD),
    (("set", "extcommunity"), _BGPD),
    (("set", "local-preference"), _BGPD),
    (("set", "weight"), _BGPD),
    (("set", "as-path"), _BGPD),
    (("set", "origin"), _BGPD),
    (("set", "originator-id"), _BGPD),
    (("set", "aggregator"), _BGPD),
    (("set", "atomic-aggregate"), _BGPD),
    (("set", "ip", "next-hop", "peer-address"), _BGPD),
    (("set", "ip", "next-hop", "unchanged"), _BGPD),
    (("set", "ipv6", "next-hop"), _BGPD),
    (("set", "label-index"), _BGPD),
    (("set", "distance"), _BGPD),
)


def _lookup(table: tuple[tuple[tuple[str, ...], Owners], ...], line: str) -> Owners | None:
    """The owners of the longest entry of `table` that `line` starts with (None: no entry)."""
    words = tuple(line.split())
    best: tuple[int, Owners] | None = None
    for first, owners in table:
        if words[:len(first)] == first and (best is None or len(first) > best[0]):
            best = (len(first), owners)
    return None if best is None else best[1]


def top_owners(line: str) -> Owners | None:
    """The daemons a top-level command goes to (EVERY: all); None when twin does not know."""
    return _lookup(_TOP, line)


def route_map_owners(line: str) -> Owners | None:
    """The daemons a line inside a route-map entry goes to; None when twin does not know."""
    return _lookup(ROUTE_MAP_LINES, line)


def stanzas(conf: str) -> list[list[str]]:
    """Top-level commands, each with the indented lines and the `exit` of its block; comments dropped."""
    found: list[list[str]] = []
    for line in conf.splitlines():
        text = line.rstrip()
        if not text.strip() or text.lstrip().startswith("!"):
            continue
        if text[0].isspace() or (text.startswith("exit") and found):
            found[-1].append(text)
        else:
            found.append([text])
    return found


def _take(stanza: list[str], daemon: str) -> list[str] | None:
    """What of `stanza` `daemon` takes: all of it, or of a route-map entry its own lines (None: a
    line no daemon is known to take)."""
    if stanza[0].split()[0] != "route-map":
        return stanza
    kept = [stanza[0]]
    for line in stanza[1:]:
        owners = frozenset({EVERY}) if line.strip() == "exit" else route_map_owners(line)
        if owners is None:
            return None
        if EVERY in owners or daemon in owners:
            kept.append(line)
    return kept


def per_daemon_configs(conf: str, daemons: Sequence[str]) -> dict[str, str] | None:
    """Each daemon's own config file from one frr.conf, as FRR's split configuration holds it (what
    vtysh would send each daemon). None when a command has no known owner among `daemons`: loading
    the whole file with vtysh (twin.switch.frr.frr_daemons.load_frr) is then the only faithful way, and
    reports what FRR refuses."""
    files: dict[str, list[str]] = {d: [] for d in daemons}
    for stanza in stanzas(conf):
        owners = top_owners(stanza[0])
        if owners is None:
            return None
        takers = list(daemons) if EVERY in owners else [d for d in daemons if d in owners]
        if owners and not takers:
            return None
        for d in takers:
            taken = _take(stanza, d)
            if taken is None:
                return None
            files[d] += taken
    return {d: "\n".join(lines) + "\n" for d, lines in files.items()}
