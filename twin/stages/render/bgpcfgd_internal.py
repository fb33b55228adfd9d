"""bgpcfgd's internal peer type (BGP_INTERNAL_NEIGHBOR): the templates of bgpd/templates/internal (sonic-buildimage
086b03bd), each function taking the variables BGPPeerMgrBase gives the template and returning its lines.

- policies.conf.j2: on a BackEnd ASIC, FROM_BGP_INTERNAL_PEER_V4/V6 set the originator-id (bgp_router_id,
  else Loopback4096's address); on a packet chassis the internal, fallback and anchor communities; on
  any other switch only FROM_BGP_INTERNAL_PEER_V6 permit 1 (prefer the global next hop); always the
  permit 100 entries of the four route-maps;
- peer-group.conf.j2: INTERNAL_PEER_V4/V6 (route-reflector-client on a BackEnd ASIC, Loopback4096 and
  ttl-security on a packet chassis), soft-reconfiguration, allowas-in 1, the route-maps, send-community;
- instance.conf.j2: remote-as `asn`, description, timers 3 10, the family's peer group, next-hop-self force
  on a BackEnd ASIC or a packet chassis, route-reflector-client with `rrclient`, activate.

additional_loopbacks.conf.j2 names Loopback4096: the internal manager adds a peer only once Loopback4096
exists and has an IPv4 address (or DEVICE_METADATA has bgp_router_id), besides Loopback0.
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import ip_address
from typing import Any

from twin.stages.render.bgpcfgd_peer_types import last_ipv4

EXTRA_LOOPBACKS = ("Loopback4096",)   # additional_loopbacks.conf.j2


def _device(metadata: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict((metadata or {}).get("localhost") or {})


def _version(addr: str) -> int:
    try:
        return ip_address(addr).version
    except ValueError:
        return 0


def _int(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def policies_lines(metadata: Mapping[str, Any] | None, loopbacks: Mapping[str, Any] | None,
                   constants: Mapping[str, Any]) -> list[str]:
    """internal/policies.conf.j2."""
    meta = _device(metadata)
    lo4096 = last_ipv4(loopbacks, "Loopback4096")
    originator = (meta["bgp_router_id"] if "bgp_router_id" in meta
                  else lo4096.split("/")[0] if lo4096 is not None else None)
    origin = [f" set originator-id {originator}"] if originator is not None else []
    prefer = ["route-map FROM_BGP_INTERNAL_PEER_V6 permit 1", " set ipv6 next-hop prefer-global", " on-match next"]
    if meta.get("sub_role") == "BackEnd":
        lines = ["route-map FROM_BGP_INTERNAL_PEER_V4 permit 1", *origin, *prefer,
                 "route-map FROM_BGP_INTERNAL_PEER_V6 permit 2", *origin]
    elif meta.get("switch_type") == "chassis-packet":
        lines = _chassis_packet_policies(meta, dict(constants.get("bgp") or {}), prefer)
    else:
        lines = prefer
    return [*lines, *(f"route-map {d}_BGP_INTERNAL_PEER_V{v} permit 100" for d in ("FROM", "TO") for v in "46")]


def _chassis_packet_policies(meta: Mapping[str, Any], bgp: Mapping[str, Any], prefer: list[str]) -> list[str]:
    internal, tag = bgp.get("internal_community", ""), bgp.get("internal_community_match_tag", "")
    fallback_tag = [] if meta.get("subtype") == "DownstreamLC" else [
        f"  set tag {bgp.get('route_eligible_for_fallback_to_default_tag', '')}"]
    lines = [f"bgp community-list standard DEVICE_INTERNAL_COMMUNITY permit {internal}",
             f"bgp community-list standard DEVICE_INTERNAL_FALLBACK_COMMUNITY permit "
             f"{bgp.get('internal_fallback_community', '')}",
             f"bgp community-list standard LOCAL_ANCHOR_ROUTE_COMMUNITY permit "
             f"{bgp.get('local_anchor_route_community', '')}",
             "bgp community-list standard NO_EXPORT permit no-export"]
    for v, first in (("4", 1), ("6", 2)):
        if v == "6":
            lines += prefer
        lines += [f"route-map FROM_BGP_INTERNAL_PEER_V{v} permit {first}",
                  "  match community DEVICE_INTERNAL_COMMUNITY",
                  "  set comm-list DEVICE_INTERNAL_COMMUNITY delete", f"  set tag {tag}",
                  f"route-map FROM_BGP_INTERNAL_PEER_V{v} permit {first + 1}", "  match community NO_EXPORT",
                  "  set local-preference 80", "  on-match next",
                  f"route-map FROM_BGP_INTERNAL_PEER_V{v} permit {first + 2}",
                  "  match community DEVICE_INTERNAL_FALLBACK_COMMUNITY",
                  "  set comm-list DEVICE_INTERNAL_FALLBACK_COMMUNITY delete", *fallback_tag]
    for v, ip, seq in (("4", "ip", 1), ("6", "ipv6", 2)):
        lines += [f"route-map TO_BGP_INTERNAL_PEER_V{v} permit {seq}",
                  f"  match {ip} address prefix-list PL_LoopbackV{v}", f"  set community {internal}",
                  f"route-map TO_BGP_INTERNAL_PEER_V{v} deny 15", "  match community LOCAL_ANCHOR_ROUTE_COMMUNITY"]
    return lines


def peer_group_lines(metadata: Mapping[str, Any] | None) -> list[str]:
    """internal/peer-group.conf.j2."""
    meta = _device(metadata)
    packet, backend = meta.get("switch_type") == "chassis-packet", meta.get("sub_role") == "BackEnd"
    lines = ["  neighbor INTERNAL_PEER_V4 peer-group", "  neighbor INTERNAL_PEER_V6 peer-group"]
    for v, family in (("4", "ipv4"), ("6", "ipv6")):
        g = f"INTERNAL_PEER_V{v}"
        if packet:
            lines += [f"  neighbor {g} update-source Loopback4096", f"  neighbor {g} ttl-security hops 1"]
        lines += [f"  address-family {family}", *([f"    neighbor {g} route-reflector-client"] if backend else []),
                  f"    neighbor {g} soft-reconfiguration inbound", f"    neighbor {g} allowas-in 1",
                  f"    neighbor {g} route-map FROM_BGP_INTERNAL_PEER_V{v} in",
                  f"    neighbor {g} route-map TO_BGP_INTERNAL_PEER_V{v} out", f"    neighbor {g} send-community",
                  "  exit-address-family"]
    return lines


def instance_lines(neighbor_addr: str, bgp_session: Mapping[str, Any], metadata: Mapping[str, Any] | None,
                   ) -> list[str]:
    """internal/instance.conf.j2 (a key that is no address gets no family, as the template writes it)."""
    meta = _device(metadata)
    nb = neighbor_addr
    lines = [f"  neighbor {nb} remote-as {bgp_session.get('asn', '')}",
             f"  neighbor {nb} description {bgp_session.get('name', '')}", f"  neighbor {nb} timers 3 10",
             f"  neighbor {nb} timers connect 10"]
    version = _version(nb)
    if version:
        lines += [f"  address-family ipv{version}", f"    neighbor {nb} peer-group INTERNAL_PEER_V{version}"]
        if meta.get("sub_role") == "BackEnd" or meta.get("switch_type") == "chassis-packet":
            lines.append(f"    neighbor {nb} next-hop-self force")
    if "rrclient" in bgp_session and _int(bgp_session["rrclient"]) != 0:
        lines.append(f"    neighbor {nb} route-reflector-client")
    return [*lines, f"    neighbor {nb} activate", "  exit-address-family"]
