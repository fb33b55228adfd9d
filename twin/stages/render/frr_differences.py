"""Where the FRR config twin runs differs from the one SONiC renders: the one allow-list.

SONiC's templates (and bgpcfgd's pushes) are written for SONiC's FRR 10.x in SONiC's bgp container,
fed by fpmsyncd into the ASIC. Twin runs Debian's FRR 8.4 in a network namespace whose kernel is the
forwarding plane. Every line twin renders differently from SONiC is one entry of `FRR_DIFFERENCES`:
the SONiC line it matches (a regular expression over the whole line, indentation aside), what twin
renders instead (None: twin leaves the line out) and why. Entries whose `sonic` is None are lines
twin adds that SONiC has no equivalent of.

Twin's own bgpcfgd emulation renders SONiC's lines and passes each through `adapt`; a config
rendered with a user's SONiC templates goes through the same `adapt`; the fidelity tests compare
twin's rendering with SONiC's after `adapt`, so a difference missing here fails them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Debian's FRR 8.4 takes `maximum-paths (1-256)` (vtysh refuses 257 and SONiC's 514), and 256 is also
# bgpd's default (show running-config omits it): the build's multipath number.
FRR_MAX_PATHS = 256


@dataclass(frozen=True)
class Difference:
    """One line SONiC renders that twin renders otherwise (or a line only twin renders)."""

    sonic: str | None
    twin: str | None
    reason: str
    # for a line only twin renders, the lines it stands for (a regular expression, indentation aside)
    twin_lines: str | None = None

    def matches(self, line: str) -> re.Match[str] | None:
        return None if self.sonic is None else re.fullmatch(self.sonic, line.strip())


FRR_DIFFERENCES: tuple[Difference, ...] = (
    Difference(r"maximum-paths (?:25[7-9]|2[6-9]\d|[3-9]\d\d|\d{4,})", f"maximum-paths {FRR_MAX_PATHS}",
               "FRR 8.4 as Debian builds it takes at most 256 paths (vtysh: `maximum-paths (1-256)`); SONiC's "
               "constants.yml asks for 514 (bgp.maximum_paths.ipv4/ipv6)"),
    Difference(r"bgp suppress-fib-pending", None,
               "FRR 8.4 leaves locally originated routes (`network`) FIB-pending for good once a session "
               "re-establishes (`fibPending: true`, \"Not advertised to any peer\"): after one flap the switch "
               "would stop announcing its loopback and VLAN subnets (seen on this FRR 8.4.4 with twin's classic "
               "T0/T1). Without it bgpd announces routes before the kernel holds them, a sub-millisecond gap"),
    Difference(r"agentx", None,
               "twin's FRR daemons run without the SNMP AgentX module (SONiC: constants frr.enable_snmp_agent)"),
    Difference(r"(?:enable )?password \S+", None,
               "twin's vtysh reaches the daemons over the node's own socket; no password-protected telnet vty"),
    Difference(r"log facility \S+", None,
               "twin logs to syslog and to the node's event log file (SONiC: rsyslog facility local4)"),
    Difference(r"ipv6 nht resolve-via-default|ip nht resolve-via-default", None,
               "a twin switch's only default route is its management network's; SONiC's bgp container demotes "
               "eth0's default route (distance 210) for the same reason, so no BGP next hop resolves through it"),
    Difference(r"interface \S+|(?:no )?link-detect", None,
               "zebra follows link state from the kernel; twin renders no per-interface zebra stanza"),
    Difference(r"ipv6 route \S+ Loopback0", None,
               "twin's switches have no Loopback0 device (their loopback is `lo`); twin forwards IPv4"),
    Difference(r"(?:no )?fpm use-next-hop-groups|fpm address \S+|zebra nexthop-group keep \d+", None,
               "no fpmsyncd: the kernel of the switch's namespace is its forwarding plane"),
    Difference(r"zebra nexthop kernel enable", "no zebra nexthop kernel enable",
               "routes carry their next hops inline: FRR 8.4 loses kernel nexthop-group members when a "
               "link flaps quickly (FRR PR 13413)"),
    Difference(r"neighbor \S+ description", None,
               "FRR rejects a description without text (a BGP_NEIGHBOR without `name`); SONiC's vtysh reports "
               "the error and goes on, twin leaves the line out"),
    # frrcfgd's route-map template (bgpd.conf.db.route_map.j2) at boot, where FRR refuses its line: twin
    # renders what frrcfgd sends when the field is Set (twin.stages.render.frrcfgd_policy)
    Difference(r"match  (?:address|next-hop) prefix-list \S+", None,
               "ROUTE_MAP match_prefix_set/match_next_hop_set naming a PREFIX_SET without `mode`: the template "
               "writes no `ip`/`ipv6` and FRR refuses the line (and renders no prefix-list for that set)"),
    Difference(r"set community (?!(?:internet|local-AS|no-advertise|no-export|no-peer|blackhole|graceful-shutdown|"
               r"accept-own|accept-own-nexthop|llgr-stale|no-llgr|additive|none)$)[^\s:]+", None,
               "ROUTE_MAP set_community_ref: the template names the COMMUNITY_SET, which FRR refuses; frrcfgd "
               "sends the set's members (twin's `set community <members>`)"),
    Difference(r"set extcommunity (?!none$)\S+", None,
               "ROUTE_MAP set_ext_community_ref: the template names the EXTENDED_COMMUNITY_SET, which FRR "
               "refuses; frrcfgd sends its members (twin's `set extcommunity rt|soo <members>`)"),
    Difference(r"set extcommunity soo", None,
               "ROUTE_MAP set_ext_community_inline with route-origin members only: the template's soo line "
               "holds the (empty) route-targets, FRR refuses it; twin renders frrcfgd's `set extcommunity soo`"),
    Difference(r"match source-protocol ospf3", "match source-protocol ospf6",
               "ROUTE_MAP match_protocol ospf3: FRR names it ospf6, as frrcfgd translates it"),
    Difference(None, "set local-preference <set_local_pref>",
               "ROUTE_MAP set_local_pref: the template reads `set_local_preference`, a field no YANG model "
               "has, so SONiC drops it at boot and applies it when it is Set (frrcfgd); twin renders it",
               twin_lines=r"set local-preference \d+"),
    Difference(None, "set as-path prepend <set_asn x set_repeat_asn | set_asn_list>",
               "ROUTE_MAP set_asn/set_repeat_asn/set_asn_list: the template fails on set_repeat_asn (compares "
               "the string with 0) and ignores set_asn alone and set_asn_list; frrcfgd sends the prepend "
               "when they are Set, and twin renders it", twin_lines=r"set as-path prepend \d+(?: \d+)*"),
    Difference(None, "set community <members of set_community_ref>",
               "ROUTE_MAP set_community_ref, as frrcfgd sends it (see above)",
               twin_lines=r"set community \S+:\S+(?: \S+)*"),
    Difference(None, "set extcommunity rt|soo <members>",
               "ROUTE_MAP set_ext_community_ref and route-origin-only set_ext_community_inline, as frrcfgd "
               "sends them (see above)", twin_lines=r"set extcommunity (?:rt|soo) \S+(?: \S+)*"),
    # frrcfgd's instance templates (bgpd.conf.db.j2, nbr_or_peer.j2, addr_family.j2), where FRR refuses or drops
    # SONiC's line or the template ignores a field (twin.stages.render.frrcfgd_bgp)
    Difference(r"neighbor \S+ password \S+ encrypted", None,
               "BGP_NEIGHBOR/BGP_PEER_GROUP auth_password: the template and frrcfgd write `password <value> "
               "encrypted`, a word FRR 8.4 refuses (`% Unknown command`), so FRR runs the session without TCP MD5; "
               "twin leaves the line out (the field is listed as not emulated)"),
    Difference(r"bgp dampening \d+ \d+(?: \d+)?", None,
               "BGP_GLOBALS_AF route_flap_dampen with a half-life and a reuse threshold but not all four values: "
               "the template writes what it has, FRR takes none or all of them (`% Command incomplete`)"),
    Difference(None, "timers bgp <keepalive> <holdtime>",
               "BGP_GLOBALS keepalive/holdtime: the template ignores them, frrcfgd sends `timers bgp` when they are "
               "Set; twin renders it", twin_lines=r"timers bgp \d+ \d+"),
    Difference(None, "neighbor X local-as <local_asn> no-prepend [replace-as]",
               "BGP_NEIGHBOR/BGP_PEER_GROUP local_as_no_prepend, local_as_replace_as: the template writes `local-as "
               "N` alone; frrcfgd adds them when they are Set (replace-as only after no-prepend: FRR refuses it "
               "alone), and twin renders that", twin_lines=r"neighbor \S+ local-as \d+ no-prepend(?: replace-as)?"),
    Difference(None, "neighbor X bfd check-control-plane-failure",
               "BGP_NEIGHBOR/BGP_PEER_GROUP bfd_check_ctrl_plane_failure: the template ignores it, frrcfgd sends "
               "it when it is Set; twin renders it with `bfd` true (FRR turns BFD on with it)",
               twin_lines=r"neighbor \S+ bfd check-control-plane-failure"),
    Difference(None, "neighbor X strict-capability-match",
               "BGP_NEIGHBOR/BGP_PEER_GROUP strict_capability_match: the template compares the string with a "
               "boolean and never writes it (its line would be `strict-capability-match true`, which FRR refuses); "
               "frrcfgd sends `strict-capability-match`, and twin renders it",
               twin_lines=r"neighbor \S+ strict-capability-match"),
    Difference(None, "bgp confederation identifier|peers ...",
               "BGP_GLOBALS confed_id/confed_peers: the template ignores them, frrcfgd sends them when they are "
               "Set; twin renders them", twin_lines=r"bgp confederation (?:identifier \d+|peers \d+(?: \d+)*)"),
    # Lines only twin renders (header_lines and, for frrcfgd configs, frr.py's RM_SET_SRC):
    Difference(None, "frr version 8.4", "the FRR twin runs"),
    Difference(None, "frr defaults traditional",
               "SONiC builds FRR with its default (traditional) profile; the line pins it"),
    Difference(None, "service integrated-vtysh-config", "twin keeps one frr.conf per switch"),
    Difference(None, "log timestamp precision 6", "microsecond event timestamps for drills"),
    Difference(None, "no zebra nexthop kernel enable",
               "as above, for the renderings that hold no zebra line (bgpcfgd's frr.conf has none)"),
    Difference(None, "route-map RM_SET_SRC permit 10 / set src <router-id> / ip protocol bgp route-map RM_SET_SRC",
               "frrcfgd configs: SONiC runs no ZebraSetSrc with frrcfgd; twin sets the loopback as the source "
               "of BGP routes on every switch (bgpcfgd configs get SONiC's own set src lines)"),
)
# What twin's bgpcfgd emulation (twin.stages.render.bgpcfgd) does not cover. check_scope refuses a config that
# needs the first ones (render it with SONiC's own templates, twin.stages.render.sonic_templates, instead);
# the others are left out of the rendering.
NOT_EMULATED: dict[str, str] = {
    "chassis and multi-ASIC switches": "DEVICE_METADATA switch_type voq/chassis-packet or sub_role FrontEnd/"
                                       "BackEnd: Loopback4096, HIDE_INTERNAL, internal and voq_chassis peers",
    "disaggregated T2, regional hubs, chassis front ends": "types UpperSpineRouter, LowerSpineRouter, "
                                                          "FabricSpineRouter, *RegionalHub, SpineChassisFrontendRouter "
                                                          "and SpineRouter subtype UpstreamLC: confederations, "
                                                          "anchor routes, table-maps, EVPN",
    "BMP": "FEATURE bmp/frr_bmp enabled: twin's FRR runs without the bmp module",
    "traffic shift and IDF isolation": "BGP_DEVICE_GLOBAL|STATE tsa_enabled / idf_isolation_state: twin renders "
                                       "the unisolated switch",
    "voq chassis peers": "BGP_VOQ_CHASSIS_NEIGHBOR (bgpcfgd's voq_chassis peer type) needs switch_type voq, which "
                         "check_scope refuses; every other peer type is rendered",
    "a dynamic peer group without an ASN": "BGP_PEER_RANGE without peer_asn on a switch whose deployment_id has "
                                           "no ASN in constants.yml: FRR refuses the template's `remote-as` and "
                                           "every listen range, SONiC keeps an empty passive peer group, twin "
                                           "renders none (no session can form either way)",
    "neighbors in a VRF": "BGP_NEIGHBOR `Vrf|IP` other than default: twin's switches have one routing table",
    "neighbors keyed by an interface": "the general templates take IP addresses (frrcfgd configs do BGP unnumbered)",
}
HEADER = ("frr version 8.4", "frr defaults traditional", "service integrated-vtysh-config", "log timestamp precision 6",
          "no zebra nexthop kernel enable")


def adapt(line: str) -> str | None:
    """`line` as twin renders it: SONiC's line, its FRR_DIFFERENCES replacement, or None (left out)."""
    for diff in FRR_DIFFERENCES:
        if diff.matches(line):
            if diff.twin is None:
                return None
            indent = line[:len(line) - len(line.lstrip())]
            return indent + diff.twin
    return line


def adapt_lines(lines: list[str]) -> list[str]:
    """Every line through `adapt`, the left-out ones dropped."""
    out = []
    for line in lines:
        new = adapt(line)
        if new is not None:
            out.append(new)
    return out


def twin_only(line: str) -> Difference | None:
    """The entry that allows `line` (one only twin renders) where SONiC renders nothing, or None."""
    return next((d for d in FRR_DIFFERENCES if d.twin_lines is not None
                 and re.fullmatch(d.twin_lines, line.strip())), None)


def header_lines() -> list[str]:
    """The lines twin puts at the top of every frr.conf it renders from SONiC's (see FRR_DIFFERENCES)."""
    return list(HEADER)
