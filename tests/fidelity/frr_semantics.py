"""What an FRR bgpd config means for routing, read from its text (test helper).

Enough of FRR's grammar for the BGP configs SONiC's templates and twin render: per neighbor, whether it
is active for IPv4 unicast (its own `activate`, its peer group's, or `bgp default ipv4-unicast`),
its inbound and outbound route-maps (own or inherited), whether each names a route-map that permits
something, BFD, timers, shutdown; the announced networks and maximum-paths; and whether eBGP needs
a policy (FRR's traditional defaults: `bgp ebgp-requires-policy` unless turned off).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Peer:
    name: str
    remote_as: str | None = None
    group: str | None = None
    bfd: bool = False
    shutdown: bool = False
    timers: str | None = None
    activate: bool | None = None
    rm_in: str | None = None
    rm_out: str | None = None


@dataclass
class Bgp:
    asn: str = ""
    default_ipv4: bool = False
    requires_policy: bool = True
    peers: dict[str, Peer] = field(default_factory=dict)
    networks: set[str] = field(default_factory=set)
    max_paths: int | None = None
    route_maps: dict[str, list[str]] = field(default_factory=dict)  # name -> actions of its entries

    def peer(self, name: str) -> Peer:
        return self.peers.setdefault(name, Peer(name))

    def _inherit(self, peer: Peer, attr: str) -> object:
        own = getattr(peer, attr)
        if own is not None or peer.group is None:
            return own
        return getattr(self.peers.get(peer.group, Peer(peer.group)), attr)

    def neighbors(self) -> list[Peer]:
        """The neighbors (peers with an address or interface and a remote AS), not the peer groups."""
        return [p for p in self.peers.values() if self._inherit(p, "remote_as") is not None
                and p.name not in {q.group for q in self.peers.values()}]

    def active(self, peer: Peer) -> bool:
        value = self._inherit(peer, "activate")
        return self.default_ipv4 if value is None else bool(value)

    def policy(self, peer: Peer, direction: str) -> str | None:
        return self._inherit(peer, f"rm_{direction}")  # type: ignore[return-value]

    def permits(self, route_map: str | None) -> bool:
        return route_map is not None and "permit" in self.route_maps.get(route_map, [])

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


def parse(text: str) -> Bgp:
    bgp = Bgp()
    context = ""   # the top-level block a line is in: router, route-map, ...
    family = ""    # the address family inside `router bgp`
    for raw in text.splitlines():
        line = raw.split("!")[0].rstrip()
        words = line.split()
        if not words:
            continue
        if not raw.startswith(" "):
            context, family = words[0], ""
            if words[:2] == ["router", "bgp"]:
                bgp.asn = words[2]
            elif words[0] == "route-map" and len(words) >= 3:
                bgp.route_maps.setdefault(words[1], []).append(words[2])
            elif line == "frr defaults datacenter":
                bgp.requires_policy = False
            continue
        if context != "router":
            continue
        if words[0] == "address-family":
            family = " ".join(words[1:3])
        elif words == ["exit-address-family"]:
            family = ""
        elif family == "ipv4 unicast":
            _address_family(bgp, words)
        elif not family:
            _global(bgp, words)
    return bgp


def _global(bgp: Bgp, words: list[str]) -> None:
    line = " ".join(words)
    if line == "bgp default ipv4-unicast":
        bgp.default_ipv4 = True
    elif line == "no bgp default ipv4-unicast":
        bgp.default_ipv4 = False
    elif line == "no bgp ebgp-requires-policy":
        bgp.requires_policy = False
    elif words[0] == "neighbor" and len(words) >= 3:
        peer = bgp.peer(words[1])
        rest = words[2:]
        if rest[0] == "interface":
            rest = rest[1:]
        if rest[0] == "remote-as":
            peer.remote_as = rest[1]
        elif rest[0] == "peer-group" and len(rest) > 1:
            peer.group = rest[1]
        elif rest[0] == "bfd":
            peer.bfd = True
        elif rest[0] == "shutdown":
            peer.shutdown = True
        elif rest[0] == "timers" and len(rest) == 3:
            peer.timers = f"{rest[1]} {rest[2]}"


def _address_family(bgp: Bgp, words: list[str]) -> None:
    negated = words[0] == "no"
    if negated:
        words = words[1:]
    if words[0] == "network":
        bgp.networks.add(words[1])
    elif words[0] == "maximum-paths" and len(words) == 2:
        bgp.max_paths = int(words[1])
    elif words[0] == "neighbor" and len(words) >= 3:
        peer = bgp.peer(words[1])
        if words[2] == "activate":
            peer.activate = not negated
        elif words[2] == "route-map" and len(words) == 5:
            setattr(peer, f"rm_{words[4]}", None if negated else words[3])


def semantics(bgp: Bgp) -> dict[str, object]:
    """What two renderings must agree on."""
    return {
        "neighbors": {p.name: {"remote_as": bgp._inherit(p, "remote_as"), "active": bgp.active(p),
                               "in": bgp.policy(p, "in"), "out": bgp.policy(p, "out"), "bfd": p.bfd,
                               "timers": p.timers, "shutdown": p.shutdown} for p in bgp.neighbors()},
        "route_maps": {name: sorted(actions) for name, actions in bgp.route_maps.items() if name != "RM_SET_SRC"},
        "networks": sorted(bgp.networks), "max_paths": bgp.max_paths, "default_ipv4": bgp.default_ipv4,
        "requires_policy": bgp.requires_policy,
    }
