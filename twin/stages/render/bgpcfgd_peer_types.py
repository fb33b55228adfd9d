"""The templates of bgpcfgd's monitors, dynamic and sentinels peer types: what SONiC renders for BGP_MONITORS,
BGP_PEER_RANGE and BGP_SENTINELS (sonic-buildimage dockers/docker-fpm-frr/frr/bgpd/templates/{monitors,dynamic,
sentinels}, at 086b03bd).

Each function takes the variables bgpcfgd's BGPPeerMgrBase gives the template and returns its lines
(comments and blank lines left out, as bgpcfgd's ConfigMgr reads none). twin.stages.render.bgpcfgd
decides when bgpcfgd renders them and wraps them as apply_op and BGPPeerGroupMgr push them.

- monitors (BGP_MONITORS, keyed by the monitor's address): the route-maps FROM_BGPMON (deny all) and
  TO_BGPMON, the peer group BGPMON (update-source Loopback0's address, IPv4 activated with the route-maps,
  send-community and maximum-prefix 1), each monitor an iBGP neighbor (remote-as the switch's own ASN)
  in BGPMON, activated in IPv4 and IPv6;
- dynamic (BGP_PEER_RANGE, keyed by the peer group's name): the route-maps FROM_BGP_SPEAKER (permit)
  and TO_BGP_SPEAKER (deny all), no peer group template of its own, and the instance: a passive peer
  group with `bgp listen range` for each of `ip_range`, remote-as `peer_asn` (else constants'
  deployment_id_asn_map of DEVICE_METADATA deployment_id) and update-source `src_address` (else
  Loopback1's IPv4 address); on a change of `ip_range` update.conf.j2 adds and removes ranges;
- sentinels (BGP_SENTINELS, keyed by the peer group's name): FROM_BGP_SENTINEL passing only routes with
  constants' sentinel community (and no-export), TO_BGP_SENTINEL, and an iBGP peer group over `ip_range`
  sending all paths and taking at most 200 prefixes; a change other than admin_status is not applied
  (the type has no update template).
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import ip_interface
from typing import Any

MONITOR_GROUP = "BGPMON"


def _ip(value: Any) -> str:
    """The templates' `ip` filter: the address of a prefix or address, `None` for what is not one."""
    try:
        return str(ip_interface(str(value).strip()).ip) if value else "None"
    except ValueError:
        return "None"


def _device(metadata: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict((metadata or {}).get("localhost") or {})


# -- monitors ----------------------------------------------------------------------------------


def monitor_policies_lines() -> list[str]:
    """monitors/policies.conf.j2."""
    return ["route-map FROM_BGPMON deny 10", "route-map TO_BGPMON permit 10"]


def _monitor_family(family: str) -> list[str]:
    g = MONITOR_GROUP
    return [f"  address-family {family}", f"    neighbor {g} activate", f"    neighbor {g} route-map FROM_BGPMON in",
            f"    neighbor {g} route-map TO_BGPMON out", f"    neighbor {g} send-community",
            f"    neighbor {g} maximum-prefix 1", "  exit-address-family"]


def monitor_peer_group_lines(metadata: Mapping[str, Any] | None, loopback0_ipv4: str | None,
                             chassisdb_conf: bool = False) -> list[str]:
    """monitors/peer-group.conf.j2: BGPMON from Loopback4096 on a chassis (a voq switch with a chassis
    database, or a packet chassis), from Loopback0's IPv4 address otherwise, and IPv6 on a chassis only.
    `chassisdb_conf` is whether the platform holds chassisdb.conf (the template's file_exists)."""
    meta = _device(metadata)
    switch_type = meta.get("switch_type")
    voq = switch_type == "voq" and ("chassisdb_conf_present" in meta or chassisdb_conf)
    lines = [f"  neighbor {MONITOR_GROUP} peer-group"]
    if voq or switch_type == "chassis-packet":
        lines.append(f"  neighbor {MONITOR_GROUP} update-source Loopback4096")
    elif loopback0_ipv4:
        lines.append(f"  neighbor {MONITOR_GROUP} update-source {_ip(loopback0_ipv4)}")
    lines += _monitor_family("ipv4")
    if switch_type in ("voq", "chassis-packet"):
        lines += _monitor_family("ipv6")
    return lines


def monitor_instance_lines(neighbor_addr: str, bgp_session: Mapping[str, Any], bgp_asn: str) -> list[str]:
    """monitors/instance.conf.j2: an iBGP neighbor in BGPMON, activated in IPv4 (the group's) and IPv6."""
    nb = neighbor_addr
    return [f"  neighbor {nb} remote-as {bgp_asn}", f"  neighbor {nb} peer-group {MONITOR_GROUP}",
            f"  neighbor {nb} description {bgp_session.get('name', '')}", f"  neighbor {nb} activate",
            "  address-family ipv6", f"    neighbor {nb} activate", "  exit-address-family"]


# -- dynamic -----------------------------------------------------------------------------------


def dynamic_policies_lines() -> list[str]:
    """dynamic/policies.conf.j2."""
    return ["route-map FROM_BGP_SPEAKER permit 10", "route-map TO_BGP_SPEAKER deny 1"]


def dynamic_peer_group_lines() -> list[str]:
    """dynamic/peer-group.conf.j2 holds nothing but comments."""
    return []


def dynamic_remote_as(bgp_session: Mapping[str, Any], metadata: Mapping[str, Any] | None,
                      constants: Mapping[str, Any]) -> str:
    """peer_asn, else constants deployment_id_asn_map[DEVICE_METADATA deployment_id]; "" where the
    template finds neither (Jinja renders the undefined value as nothing)."""
    if "peer_asn" in bgp_session:
        return str(bgp_session["peer_asn"])
    asn_map = constants.get("deployment_id_asn_map") or {}
    deployment = _device(metadata).get("deployment_id")
    return str(asn_map[deployment]) if deployment is not None and deployment in asn_map else ""


def ip_ranges(bgp_session: Mapping[str, Any]) -> list[str]:
    """`ip_range` split at commas, as the template does (no other cleaning)."""
    return str(bgp_session.get("ip_range", "")).split(",")


def last_ipv4(loopbacks: Mapping[str, Any] | None, name: str) -> str | None:
    """common/functions.conf.j2 get_ipv4_loopback_address: the last IPv4 prefix of `name` among the
    `name|prefix` keys (a bare address taken as /32)."""
    found = None
    for key in loopbacks or {}:
        intf, _, prefix = key.partition("|")
        if intf != name or not prefix:
            continue
        try:
            addr = ip_interface(prefix if "/" in prefix else f"{prefix}/{32 if ':' not in prefix else 128}")
        except ValueError:
            continue
        if addr.version == 4:
            found = str(addr)
    return found


def dynamic_instance_lines(bgp_session: Mapping[str, Any], metadata: Mapping[str, Any] | None,
                           loopbacks: Mapping[str, Any] | None, constants: Mapping[str, Any]) -> list[str]:
    """dynamic/instance.conf.j2: the passive peer group named `name`, its listen ranges and source."""
    g = bgp_session.get("name", "")
    lines = [f"  neighbor {g} peer-group", f"  neighbor {g} passive", f"  neighbor {g} ebgp-multihop 255",
             f"  neighbor {g} soft-reconfiguration inbound", f"  neighbor {g} route-map FROM_BGP_SPEAKER in",
             f"  neighbor {g} route-map TO_BGP_SPEAKER out",
             f"  neighbor {g} remote-as {dynamic_remote_as(bgp_session, metadata, constants)}"]
    lines += [f"  bgp listen range {r} peer-group {g}" for r in ip_ranges(bgp_session)]
    source = bgp_session["src_address"] if "src_address" in bgp_session else last_ipv4(loopbacks, "Loopback1")
    lines.append(f"  neighbor {g} update-source {_ip(source)}")
    return [*lines, "  address-family ipv4", f"    neighbor {g} activate", "  exit-address-family",
            "  address-family ipv6", f"    neighbor {g} activate", "  exit-address-family"]


def dynamic_update_lines(bgp_session: Mapping[str, Any], delete_ranges: list[str], add_ranges: list[str]) -> list[str]:
    """dynamic/update.conf.j2: the ranges gone, then the ranges new."""
    g = bgp_session.get("name", "")
    return [*(f"  no bgp listen range {r} peer-group {g}" for r in delete_ranges),
            *(f"  bgp listen range {r} peer-group {g}" for r in add_ranges)]


# -- sentinels ---------------------------------------------------------------------------------


def sentinel_policies_lines(constants: Mapping[str, Any]) -> list[str]:
    """sentinels/policies.conf.j2: routes from a sentinel pass only with constants' sentinel community."""
    community = (constants.get("bgp") or {}).get("sentinel_community")
    lines = ([f"bgp community-list standard sentinel_community permit {community} no-export",
              "route-map FROM_BGP_SENTINEL permit 100", " match community sentinel_community"]
             if community is not None else [])
    return [*lines, "route-map FROM_BGP_SENTINEL deny 200", "route-map TO_BGP_SENTINEL permit 100"]


def sentinel_peer_group_lines() -> list[str]:
    """sentinels/peer-group.conf.j2 holds nothing but comments."""
    return []


def sentinel_instance_lines(bgp_session: Mapping[str, Any], bgp_asn: str) -> list[str]:
    """sentinels/instance.conf.j2: an iBGP peer group named `name` over `ip_range`, all paths sent,
    at most 200 prefixes taken, in IPv4 and IPv6."""
    g = bgp_session.get("name", "")
    lines = [f"  neighbor {g} peer-group", f"  neighbor {g} remote-as {bgp_asn}"]
    if "src_address" in bgp_session:
        lines.append(f"  neighbor {g} update-source {_ip(bgp_session['src_address'])}")
    lines += [f"  bgp listen range {r} peer-group {g}" for r in ip_ranges(bgp_session)]
    for family in ("ipv4", "ipv6"):
        lines += [f"  address-family {family}", f"    neighbor {g} activate", f"    neighbor {g} addpath-tx-all-paths",
                  f"    neighbor {g} soft-reconfiguration inbound", f"    neighbor {g} route-map FROM_BGP_SENTINEL in",
                  f"    neighbor {g} route-map TO_BGP_SENTINEL out", f"    neighbor {g} maximum-prefix 200",
                  "  exit-address-family"]
    return lines
