"""bgpcfgd's StaticRouteMgr (managers_static_rt.py, sonic-buildimage 086b03bd): STATIC_ROUTE as staticd gets it.

A key is `prefix` or `vrf|prefix`; its row lists next hops position by position, comma-separated:
`nexthop`, `ifname`, `blackhole`, `distance`, `nexthop-vrf` (lists given must have one length, else
the route is not taken). Each next hop is one line `ip[v6] route <prefix>[ blackhole][ <ip>][ <ifname>]
[ <distance>][ nexthop-vrf <vrf>][ vrf <vrf>] tag 1` (tag 2 with `advertise` "false"); one without
an address, an interface or blackhole is dropped. A SET sends the next hops that went (`no ...`) and
those that came (all of them again when the tag changed); a DEL removes them. The first route of a VRF
also turns on `redistribute static route-map STATIC_ROUTE_FILTER` (permit 10, match tag 1) in IPv4 and
IPv6 unicast, and the last one's DEL turns it off and removes the route-map. A route with `bfd` "true"
is left to staticroutebfd, which twin does not run (the routing surface lists the field).

The manager keeps its next hops in a Python set: the order of its lines within one route is the set's;
twin sends them sorted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import ip_address, ip_network
from typing import Any

TABLE = "STATIC_ROUTE"
ADVERTISE, NO_ADVERTISE = "1", "2"


@dataclass(frozen=True, order=True)
class NextHop:
    blackhole: str
    ip: str
    interface: str
    distance: int
    nh_vrf: str

    def words(self, v6: bool) -> str:
        """IpNextHop.__format__."""
        out = " blackhole" if self.blackhole == "true" else ""
        if not _zero(self.ip, v6):
            out += f" {self.ip}"
        out += f" {self.interface}" if self.interface else ""
        out += f" {self.distance}" if self.distance else ""
        return out + (f" nexthop-vrf {self.nh_vrf}" if self.nh_vrf else "")


def _zero(ip: str, v6: bool) -> bool:
    try:
        return int(ip_address(ip)) == 0 and ip_address(ip).version == (6 if v6 else 4)
    except ValueError:
        return False


def split_key(key: str) -> tuple[str, str]:
    """(vrf, prefix): `vrf|prefix`, or a bare prefix in the default VRF."""
    if "|" in key:
        vrf, prefix = key.split("|", 1)
        return vrf, prefix
    return "default", key


def _is_v6(prefix: str) -> bool:
    try:
        return ip_network(prefix, strict=False).version == 6
    except ValueError:
        return False


def _list(row: Mapping[str, Any], name: str) -> list[str] | None:
    if name not in row:
        return None
    value = str(row[name])
    return value.split(",") if value.strip() else None


class BadAddress(Exception):
    """A next hop's address is no address of the route's family: bgpcfgd's socket.inet_pton raises an
    OSError its next-hop loop does not catch, and the whole SET fails."""


def _next_hop(v6: bool, blackhole: str | None, ip: str | None, ifname: str | None, dist: str | None,
              vrf: str | None) -> NextHop | None:
    """IpNextHop, None where its constructor raises ValueError (that next hop is skipped)."""
    black = blackhole or "false"
    try:
        distance = int(dist) if dist is not None else 0
    except ValueError:
        return None
    if black == "true":
        ip = ifname = vrf = None
    addr = ip or ("::" if v6 else "0.0.0.0")
    interface, nh_vrf = ifname or "", vrf or ""
    if not addr.startswith("PortChannel"):
        try:
            valid = ip_address(addr).version == (6 if v6 else 4)
        except ValueError:
            valid = False
        if not valid:
            raise BadAddress(addr)
    if black != "true" and _zero(addr, v6) and not addr.startswith("PortChannel") and not interface.strip():
        return None
    return NextHop(black, addr, interface, distance, nh_vrf)


def next_hops(prefix: str, row: Mapping[str, Any]) -> frozenset[NextHop] | None:
    """IpNextHopSet of a row; None where bgpcfgd's SET fails (lists of different lengths, an address of
    the wrong family): nothing is pushed and the route is not kept."""
    v6 = _is_v6(prefix)
    lists = [_list(row, n) for n in ("blackhole", "nexthop", "ifname", "distance", "nexthop-vrf")]
    if lists[0] is None and lists[1] is None and lists[2] is None:
        return frozenset()
    sizes = {len(x) for x in lists if x is not None}
    if len(sizes) != 1:
        return None
    out = set()
    try:
        for i in range(sizes.pop()):
            hop = _next_hop(v6, *(x[i] if x is not None else None for x in lists))
            if hop is not None:
                out.add(hop)
    except BadAddress:
        return None
    return frozenset(out)


def _bfd(row: Mapping[str, Any]) -> bool:
    value = _list(row, "bfd")
    return bool(value) and value is not None and value[0].lower() == "true"


def _tag(row: Mapping[str, Any]) -> str:
    return NO_ADVERTISE if row.get("advertise") == "false" else ADVERTISE


def _line(remove: bool, prefix: str, hop: NextHop, vrf: str, tag: str) -> str:
    v6 = _is_v6(prefix)
    where = f" vrf {vrf}" if vrf != "default" else ""
    return f"{'no ' if remove else ''}{'ipv6' if v6 else 'ip'} route {prefix}{hop.words(v6)}{where} tag {tag}"


def _redistribution(asn: str, vrf: str, on: bool) -> list[str]:
    router = f"router bgp {asn}" + (f" vrf {vrf}" if vrf != "default" else "")
    lines = ["route-map STATIC_ROUTE_FILTER permit 10", f" match tag {ADVERTISE}"] if on else []
    lines.append(router)
    for family in ("ipv4", "ipv6"):
        lines += [f" address-family {family}",
                  f"  {'' if on else 'no '}redistribute static route-map STATIC_ROUTE_FILTER", " exit-address-family"]
    return [*lines, "exit", *([] if on else ["no route-map STATIC_ROUTE_FILTER"])]


Routes = dict[str, dict[str, tuple[frozenset[NextHop], str]]]   # vrf -> prefix -> (next hops, tag)


def _commands(new: frozenset[NextHop], cur: frozenset[NextHop], prefix: str, vrf: str, tag: str,
              cur_tag: str) -> list[str]:
    """static_route_commands: removals first, then additions."""
    if tag != cur_tag:
        gone, came = cur, new
    else:
        gone, came = cur - new, new - cur
    return [*(_line(True, prefix, h, vrf, cur_tag) for h in sorted(gone)),
            *(_line(False, prefix, h, vrf, tag) for h in sorted(came))]


@dataclass
class StaticRoutes:
    """What StaticRouteMgr holds (its static_routes), and what it pushes on SET and DEL."""

    asn: str | None
    routes: Routes

    def set(self, key: str, row: Mapping[str, Any]) -> list[str]:
        vrf, prefix = split_key(key)
        tag = _tag(row)
        if _bfd(row):
            self.routes.get(vrf, {}).pop(prefix, None)
            return []
        hops = next_hops(prefix, row)
        if hops is None:
            return []
        cur, cur_tag = self.routes.get(vrf, {}).get(prefix, (frozenset(), tag))
        cmds = _commands(hops, cur, prefix, vrf, tag, cur_tag)
        if not self.routes.get(vrf) and self.asn is not None:
            cmds += _redistribution(self.asn, vrf, on=True)
        self.routes.setdefault(vrf, {})[prefix] = (hops, tag)
        return cmds

    def delete(self, key: str) -> list[str]:
        vrf, prefix = split_key(key)
        cur, tag = self.routes.get(vrf, {}).get(prefix, (frozenset(), NO_ADVERTISE))
        cmds = _commands(frozenset(), cur, prefix, vrf, tag, tag)
        if set(self.routes.get(vrf, {})) == {prefix} and self.asn is not None:
            cmds += _redistribution(self.asn, vrf, on=False)
        self.routes.setdefault(vrf, {}).pop(prefix, None)
        return cmds


def rows(db: Mapping[str, Any]) -> dict[str, Any]:
    """The STATIC_ROUTE rows of the default VRF: twin's switches have one routing table, so a route of
    another VRF (whose `vrf X` staticd would hold for a VRF the switch does not have) is left out."""
    return {k: r or {} for k, r in (db.get(TABLE) or {}).items() if split_key(k)[0] == "default"}


def _replay(db: Mapping[str, Any], asn: str | None) -> tuple[StaticRoutes, list[str]]:
    mgr, cmds = StaticRoutes(asn, {}), []
    for key, row in sorted(rows(db).items()):
        cmds += mgr.set(key, row)
    return mgr, cmds


def boot_lines(db: Mapping[str, Any], asn: str | None) -> list[str]:
    """Every route SET in key order."""
    return _replay(db, asn)[1]


def change_lines(old: Mapping[str, Any], new: Mapping[str, Any], asn: str | None) -> list[str]:
    """What the manager pushes when STATIC_ROUTE goes from `old` to `new`: DELs, then SETs, in key order."""
    mgr = _replay(old, asn)[0]
    before, after = rows(old), rows(new)
    cmds: list[str] = []
    for key in sorted(set(before) - set(after)):
        cmds += mgr.delete(key)
    for key, row in sorted(after.items()):
        if before.get(key) != row:
            cmds += mgr.set(key, row)
    return cmds
