"""What an FRR bgpd config means for routing, read from its text (test helper).

Enough of FRR's grammar for the BGP configs SONiC's templates and twin render, in FRR's order of
nodes (a line at column 0 opens a top-level node, an indented one belongs to it):
- per neighbor and address family: active or not (its own `activate`, its peer group's, or
  `bgp default ipv4-unicast`), inbound and outbound route-maps, allowas-in, soft-reconfiguration
  inbound, route-reflector-client, next-hop-self (own or inherited from the peer group); remote AS,
  description, BFD, timers, connect timer, shutdown;
- the instance: router-id, log-neighbor-changes, suppress-fib-pending, multipath-relax, graceful
  restart, `network` per family (as FRR stores them: host bits cleared), maximum-paths per family,
  whether eBGP needs a policy (`bgp ebgp-requires-policy`, FRR 8.4's default, unless turned off);
- route-map entries (action, match, set, call, on-match), prefix-lists and community-lists.
`address-family ipv4` and `address-family ipv4 unicast` are the same node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import ip_interface

V4, V6 = "ipv4 unicast", "ipv6 unicast"
_FAMILIES = {"ipv4": V4, "ipv6": V6, "ipv4 unicast": V4, "ipv6 unicast": V6, "l2vpn evpn": "l2vpn evpn"}
_AF_FLAGS = {"soft-reconfiguration inbound": "soft_in", "route-reflector-client": "rr_client",
             "next-hop-self": "nh_self"}


@dataclass
class PeerAf:
    """A neighbor's or peer group's settings in one address family (None: not set here)."""

    activate: bool | None = None
    rm_in: str | None = None
    rm_out: str | None = None
    allowas_in: str | None = None
    soft_in: bool | None = None
    rr_client: bool | None = None
    nh_self: bool | None = None


@dataclass
class Peer:
    name: str
    remote_as: str | None = None
    group: str | None = None
    description: str | None = None
    bfd: bool = False
    shutdown: bool = False
    timers: str | None = None
    connect: str | None = None
    af: dict[str, PeerAf] = field(default_factory=dict)

    def family(self, family: str) -> PeerAf:
        return self.af.setdefault(family, PeerAf())

    # the IPv4 unicast settings, as the generated-config checks read them
    @property
    def activate(self) -> bool | None:
        return self.family(V4).activate


@dataclass
class RouteMapEntry:
    action: str
    match: list[str] = field(default_factory=list)
    set: list[str] = field(default_factory=list)
    call: str | None = None
    on_match: str | None = None

    def key(self) -> tuple[str, tuple[str, ...], tuple[str, ...], str | None, str | None]:
        return (self.action, tuple(sorted(self.match)), tuple(sorted(self.set)), self.call, self.on_match)


@dataclass
class Bgp:
    asn: str = ""
    router_id: str | None = None
    default_ipv4: bool = False
    requires_policy: bool = True
    log_changes: bool = False
    suppress_fib_pending: bool = False
    mp_relax: bool = False
    graceful_restart: dict[str, str] = field(default_factory=dict)
    peers: dict[str, Peer] = field(default_factory=dict)
    family_networks: dict[str, set[str]] = field(default_factory=dict)
    family_max_paths: dict[str, int] = field(default_factory=dict)
    route_maps: dict[str, dict[int, RouteMapEntry]] = field(default_factory=dict)
    prefix_lists: dict[str, list[str]] = field(default_factory=dict)
    community_lists: dict[str, list[str]] = field(default_factory=dict)

    @property
    def networks(self) -> set[str]:
        """The IPv4 unicast networks."""
        return self.family_networks.get(V4, set())

    @property
    def max_paths(self) -> int | None:
        """IPv4 unicast maximum-paths."""
        return self.family_max_paths.get(V4)

    def peer(self, name: str) -> Peer:
        return self.peers.setdefault(name, Peer(name))

    def groups(self) -> set[str]:
        return {q.group for q in self.peers.values() if q.group}

    def _inherit(self, peer: Peer, attr: str, family: str = V4) -> object:
        """A setting of the neighbor, else of its peer group (address-family settings with `family`)."""
        def own(p: Peer) -> object:
            return getattr(p.af.get(family, PeerAf()), attr) if hasattr(PeerAf, attr) else getattr(p, attr)
        value = own(peer)
        if value is not None or peer.group is None:
            return value
        return own(self.peers.get(peer.group, Peer(peer.group)))

    def neighbors(self) -> list[Peer]:
        """The neighbors (peers with an address or interface and a remote AS), not the peer groups."""
        groups = self.groups()
        return [p for p in self.peers.values() if self._inherit(p, "remote_as") is not None and p.name not in groups]

    def active(self, peer: Peer, family: str = V4) -> bool:
        value = self._inherit(peer, "activate", family)
        return (self.default_ipv4 and family == V4) if value is None else bool(value)

    def policy(self, peer: Peer, direction: str, family: str = V4) -> str | None:
        return self._inherit(peer, f"rm_{direction}", family)  # type: ignore[return-value]

    def permits(self, route_map: str | None) -> bool:
        return route_map is not None and any(e.action == "permit" for e in self.route_maps.get(route_map, {}).values())

    def problems(self) -> list[str]:
        """Why a neighbor would carry no IPv4 routes: not activated, or eBGP without a policy."""
        out = []
        for peer in self.neighbors():
            if not self.active(peer):
                out.append(f"neighbor {peer.name} is not active for IPv4 unicast")
            elif self.requires_policy:
                for direction in ("in", "out"):
                    if not self.permits(self.policy(peer, direction)):
                        out.append(f"neighbor {peer.name} has no {direction}bound policy that permits "
                                   "(ebgp-requires-policy)")
        return out


@dataclass
class _Cursor:
    """Where the parser is: the top-level node, the route-map entry, the address family."""

    context: str = ""
    entry: RouteMapEntry | None = None
    family: str = ""


def parse(text: str) -> Bgp:
    bgp = Bgp()
    at = _Cursor()
    for raw in text.splitlines():
        line = raw.split("!")[0].rstrip()
        words = line.split()
        if not words:
            continue
        if not raw.startswith(" "):
            if words[0] in ("exit", "end") and at.context == "router" and at.family:
                at.family = ""  # an `exit` at column 0 inside an address family leaves the family only
                continue
            at = _Cursor(context=words[0])
            _top(bgp, at, words, line)
        elif at.context == "route-map" and at.entry is not None:
            _route_map_line(at.entry, words)
        elif at.context == "router":
            _router_line(bgp, at, words)
    return bgp


def _top(bgp: Bgp, at: _Cursor, words: list[str], line: str) -> None:
    if words[:2] == ["router", "bgp"]:
        bgp.asn = words[2]
    elif words[0] == "route-map" and len(words) >= 4:
        at.entry = bgp.route_maps.setdefault(words[1], {}).setdefault(int(words[3]), RouteMapEntry(words[2]))
        at.entry.action = words[2]
    elif words[:2] in (["ip", "prefix-list"], ["ipv6", "prefix-list"]):
        rest = words[3:]
        if rest[0] == "seq":
            rest = rest[2:]
        entries = bgp.prefix_lists.setdefault(f"{words[0]} {words[2]}", [])
        if " ".join(rest) not in entries:
            entries.append(" ".join(rest))
    elif words[:2] == ["bgp", "community-list"]:
        name = words[3] if words[2] in ("standard", "expanded") else words[2]
        entries = bgp.community_lists.setdefault(name, [])
        entry = " ".join(words[words.index(name) + 1:])
        if entry not in entries:
            entries.append(entry)
    elif line == "frr defaults datacenter":
        bgp.requires_policy = False


def _route_map_line(entry: RouteMapEntry, words: list[str]) -> None:
    clauses = {"match": entry.match, "set": entry.set}
    if words[0] in clauses:  # FRR keeps one of each clause: a repeated one is the same
        if " ".join(words[1:]) not in clauses[words[0]]:
            clauses[words[0]].append(" ".join(words[1:]))
    elif words[0] == "call":
        entry.call = words[1]
    elif words[0] == "on-match":
        entry.on_match = " ".join(words[1:])


def _router_line(bgp: Bgp, at: _Cursor, words: list[str]) -> None:
    if words[0] == "address-family":
        at.family = _FAMILIES.get(" ".join(words[1:3]), " ".join(words[1:3]))
    elif words == ["exit-address-family"]:
        at.family = ""
    elif at.family:
        _address_family(bgp, at.family, words)
    else:
        _global(bgp, words)


def _global(bgp: Bgp, words: list[str]) -> None:
    line = " ".join(words)
    flags = {"bgp default ipv4-unicast": ("default_ipv4", True), "no bgp default ipv4-unicast": ("default_ipv4", False),
             "no bgp ebgp-requires-policy": ("requires_policy", False),
             "bgp ebgp-requires-policy": ("requires_policy", True),
             "bgp log-neighbor-changes": ("log_changes", True),
             "bgp suppress-fib-pending": ("suppress_fib_pending", True),
             "bgp bestpath as-path multipath-relax": ("mp_relax", True)}
    if line in flags:
        setattr(bgp, *flags[line])
    elif words[:2] == ["bgp", "router-id"]:
        bgp.router_id = words[2]
    elif words[:2] == ["bgp", "graceful-restart"]:
        bgp.graceful_restart[" ".join(words[2:3]) or "enabled"] = " ".join(words[3:]) or "true"
    elif words[0] == "neighbor" and len(words) >= 3:
        _neighbor(bgp, words)
    elif words[0] == "network":  # IPv4 unicast networks may sit outside `address-family ipv4`
        _address_family(bgp, V4, words)


def _neighbor(bgp: Bgp, words: list[str]) -> None:
    peer = bgp.peer(words[1])
    rest = words[2:]
    if rest[0] == "interface":
        rest = rest[1:]
    if rest[0] == "remote-as":
        peer.remote_as = rest[1]
    elif rest[0] == "peer-group" and len(rest) > 1:
        peer.group = rest[1]
    elif rest[0] == "description":
        peer.description = " ".join(rest[1:])
    elif rest[0] == "bfd":
        peer.bfd = True
    elif rest[0] == "shutdown":
        peer.shutdown = True
    elif rest[:2] == ["timers", "connect"]:
        peer.connect = rest[2]
    elif rest[0] == "timers" and len(rest) == 3:
        peer.timers = f"{rest[1]} {rest[2]}"


def _address_family(bgp: Bgp, family: str, words: list[str]) -> None:
    negated = words[0] == "no"
    if negated:
        words = words[1:]
    if words[0] == "network":
        bgp.family_networks.setdefault(family, set()).add(str(ip_interface(words[1]).network))
    elif words[0] == "maximum-paths" and len(words) == 2:
        bgp.family_max_paths[family] = int(words[1])
    elif words[0] == "neighbor" and len(words) >= 3:
        peer = bgp.peer(words[1])
        rest = " ".join(words[2:])
        af = peer.family(family)
        if words[2] == "activate":
            af.activate = not negated
        elif words[2] == "peer-group" and len(words) == 4:
            peer.group = words[3]
        elif words[2] == "route-map" and len(words) == 5:
            setattr(af, f"rm_{words[4]}", None if negated else words[3])
        elif words[2] == "allowas-in":
            af.allowas_in = None if negated else (words[3] if len(words) > 3 else "3")
        elif rest in _AF_FLAGS:
            setattr(af, _AF_FLAGS[rest], not negated)


def _neighbor_meaning(bgp: Bgp, p: Peer) -> dict[str, object]:
    out: dict[str, object] = {
        "remote_as": bgp._inherit(p, "remote_as"), "description": p.description, "bfd": p.bfd,
        "timers": p.timers, "connect": p.connect, "shutdown": p.shutdown}
    for family in (V4, V6):
        out[family] = {"active": bgp.active(p, family), "in": bgp.policy(p, "in", family),
                       "out": bgp.policy(p, "out", family),
                       **{attr: bgp._inherit(p, attr, family) for attr in ("allowas_in", "soft_in", "rr_client",
                                                                           "nh_self")}}
    return out


def semantics(bgp: Bgp) -> dict[str, object]:
    """What two renderings must agree on."""
    return {
        "asn": bgp.asn, "router_id": bgp.router_id,
        "neighbors": {p.name: _neighbor_meaning(bgp, p) for p in bgp.neighbors()},
        "route_maps": {name: {seq: e.key() for seq, e in sorted(entries.items())}
                       for name, entries in bgp.route_maps.items() if not name.startswith("RM_SET_SRC")},
        "prefix_lists": {name: sorted(entries) for name, entries in bgp.prefix_lists.items()},
        "community_lists": {name: sorted(entries) for name, entries in bgp.community_lists.items()},
        "networks": {family: sorted(nets) for family, nets in bgp.family_networks.items()},
        "max_paths": dict(bgp.family_max_paths), "default_ipv4": bgp.default_ipv4,
        "requires_policy": bgp.requires_policy, "log_changes": bgp.log_changes,
        "suppress_fib_pending": bgp.suppress_fib_pending, "mp_relax": bgp.mp_relax,
        "graceful_restart": dict(bgp.graceful_restart),
    }
