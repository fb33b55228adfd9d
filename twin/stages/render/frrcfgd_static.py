"""The static routes frrcfgd gives staticd from CONFIG_DB's STATIC_ROUTE. Pure.

What SONiC renders at boot (src/sonic-frr-mgmt-framework/templates/staticd/staticd.db.conf.j2), line for
line: a key is `prefix` or `vrf|prefix`; its row lists next hops position by position, comma-separated
(`blackhole`, `nexthop`, `ifname`, `distance`, `tag`, `nexthop-vrf`, and any other field counted too);
fields of different lengths make the route invalid, and it is left out. Each next hop is one line
`ip[v6] route <prefix> <nexthop> <ifname> tag <tag> <distance> nexthop-vrf <vrf>` (or `... blackhole
tag <tag> <distance>`), the parts that are empty, `0.0.0.0`/`::` or `0` left out; a next hop with no
address, interface or blackhole is dropped. frrcfgd sends the same lines when a route changes: the next
hops gone negated, the new ones added (its IpNextHopSet's symmetric difference). Routes of a VRF other
than default are not rendered (twin's switches have one routing table).
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import ip_network
from typing import Any

_ZERO = ("0.0.0.0", "::")


def _values(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return str(value).split(",")


def _route_lines(prefix: str, row: Mapping[str, Any]) -> list[str]:
    fields = {name: _values(value) for name, value in row.items()}
    counts = {len(values) for values in fields.values()}
    if len(counts) > 1:
        return []   # next-hop lists of different lengths: the template leaves the route out
    head = "ip route" if _is_v4(prefix) else "ipv6 route"
    lines = []
    for i in range(counts.pop() if counts else 0):
        def at(name: str, empty: tuple[str, ...] = ("",), i: int = i) -> str | None:
            value = fields[name][i] if name in fields else None
            return None if value is None or value in empty else value
        tag, dist, vrf = at("tag", ("0",)), at("distance", ("0",)), at("nexthop-vrf")
        tag_words = f"tag {tag}" if tag is not None else None
        if at("blackhole") == "true":
            words = [prefix, "blackhole", tag_words, dist]
        else:
            ip, intf = at("nexthop", _ZERO), at("ifname")
            if ip is None and intf is None:
                continue
            words = [prefix, ip, intf, tag_words, dist, f"nexthop-vrf {vrf}" if vrf is not None else None]
        lines.append(" ".join([head, *(w for w in words if w is not None)]))
    return lines


def _is_v4(prefix: str) -> bool:
    try:
        return ip_network(prefix, strict=False).version == 4
    except ValueError:
        return "." in prefix


def static_route_lines(db: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """staticd.db.conf.j2's lines for the default VRF's STATIC_ROUTE rows, in the table's order."""
    lines: list[str] = []
    for key, row in db.get("STATIC_ROUTE", {}).items():
        vrf, sep, prefix = key.partition("|")
        if not sep:
            vrf, prefix = "default", key
        if vrf == "default":
            lines += _route_lines(prefix, row or {})
    return lines
