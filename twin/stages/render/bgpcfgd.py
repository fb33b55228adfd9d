"""Twin's emulation of SONiC's bgpcfgd: the FRR config a classic (non-frrcfgd) SONiC switch runs.

What SONiC does (sonic-buildimage src/sonic-bgpcfgd, dockers/docker-fpm-frr/frr, at 086b03bd):
- the bgp container's start script renders the global part once with sonic-cfggen, from
  bgpd/bgpd.main.conf.j2: prefix-lists of the loopback and VLAN subnets, `router bgp` with
  DEVICE_METADATA bgp_asn, the constants.yml features (multipath-relax, graceful restart on a ToR,
  maximum-paths), router-id, and `network` for Loopback0 and every VLAN_INTERFACE subnet;
- bgpcfgd (managers_bgp.py BGPPeerMgrBase, peer type "general", table BGP_NEIGHBOR) then adds each
  neighbor when it appears: it pushes the policies (policies.conf.j2), then
  `router bgp ASN` + the peer groups (peer-group.conf.j2) + `exit`, then `router bgp ASN`,
  ` bgp suppress-fib-pending`, the neighbor (instance.conf.j2), `exit` (apply_op);
- a SET of a neighbor already in FRR applies `admin_status` only (update_peer: "Update support only
  admin_status for now"): `[no] neighbor X shutdown`; every other change is logged and ignored;
- a DEL sends `no neighbor X`; the peer groups and policies stay;
- ZebraSetSrc pushes `route-map RM_SET_SRC permit 10 / set src <Loopback0>` and
  `ip protocol bgp route-map RM_SET_SRC` the first time Loopback0's address is up (RM_SET_SRC6 for
  IPv6); BBRMgr turns `allowas-in 1` on the peer groups on and off with BGP_BBR|all status.

Twin renders the lines SONiC's templates would (`main_lines`, `policies_lines`, `peer_group_lines`,
`instance_lines` take the variables bgpcfgd and sonic-cfggen give the templates) and passes them
through twin.stages.render.frr_differences (the one allow-list of where twin's FRR differs).

Besides the general peers, bgpcfgd's internal (BGP_INTERNAL_NEIGHBOR: INTERNAL_PEER_V4/V6, once
Loopback4096 has an address), monitors (BGP_MONITORS: the BGPMON peer group) and dynamic
(BGP_PEER_RANGE: listen ranges) peer managers are emulated the same way, their templates in
twin.stages.render.bgpcfgd_internal and bgpcfgd_peer_types: added when their dependencies are met,
removed on a DEL, updated on a SET as update_peer does (admin_status; a dynamic peer's ip_range).

Scope: a single-ASIC, non-chassis switch of type ToRRouter, LeafRouter or SpineRouter (and others
without a branch of their own in the templates), IPv4 and IPv6 neighbors of the default VRF; the rest
is listed in twin.stages.render.frr_differences.NOT_EMULATED. `check_scope` refuses chassis, multi-ASIC,
disaggregated-T2 and regional-hub types, BMP and TSA/IDF isolation with the fix: render with SONiC's
own templates (twin.stages.render.sonic_templates).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv6Interface, ip_address, ip_interface, ip_network
from typing import Any

from twin.model.config_db import ConfigDb
from twin.model.errors import TwinError
from twin.stages.render import bgpcfgd_aggregate as aggregate
from twin.stages.render import bgpcfgd_allow_list as allow_list
from twin.stages.render import bgpcfgd_internal as internal
from twin.stages.render import bgpcfgd_peer_types as types
from twin.stages.render import bgpcfgd_prefix_list as prefix_list
from twin.stages.render import bgpcfgd_static as static
from twin.stages.render.bgpcfgd_fields import as_received
from twin.stages.render.frr_differences import adapt_lines, header_lines

# The constants.yml values bgpcfgd and bgpd.main.conf.j2 read (sonic-buildimage
# files/build_templates/constants.yml.j2, installed as /etc/sonic/constants.yml; at 086b03bd).
SONIC_CONSTANTS: dict[str, Any] = {
    "deployment_id_asn_map": {"1": 65432, "2": 65433},
    "bgp": {
        "multipath_relax": {"enabled": True},
        "graceful_restart": {"enabled": True, "restart_time": 240},
        "maximum_paths": {"enabled": True, "ipv4": 514, "ipv6": 514},
        "allow_list": {"enabled": True, "default_action": "permit", "drop_community": "5060:12345",
                       "default_pl_rules": {"v4": ["deny 0.0.0.0/0 le 17", "permit 127.0.0.1/32"],
                                            "v6": ["deny 0::/0 le 59", "deny 0::/0 ge 65"]}},
        "bbr": {"enabled": True, "default_state": "disabled"},
        "use_neighbors_meta": False, "use_deployment_id": False,
        "sentinel_community": "12345:12346",
        "peers": {"general": {"bbr": {"PEER_V4": ["ipv4"], "PEER_V6": ["ipv6"]}}},
    },
}
# The interface tables bgpcfgd's InterfaceMgr reads: a neighbor's local_addr must be on one of them.
INTERFACE_TABLES = ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE", "PORTCHANNEL_INTERFACE",
                    "VOQ_INBAND_INTERFACE", "VLAN_SUB_INTERFACE")
# Device types whose own branches in bgpd.main / the general templates twin does not emulate.
UNSUPPORTED_TYPES = frozenset({
    "SpineChassisFrontendRouter", "UpperSpineRouter", "LowerSpineRouter", "FabricSpineRouter",
    "UpperRegionalHub", "LowerRegionalHub", "FabricRegionalHub",
})


def _get(mapping: Any, *path: str) -> Any:
    """mapping[path...], or None where a step is missing (the templates' `is defined` checks)."""
    node = mapping
    for step in path:
        if not isinstance(node, Mapping) or step not in node:
            return None
        node = node[step]
    return node


def _metadata(db: ConfigDb) -> dict[str, Any]:
    return dict(db.get("DEVICE_METADATA", {}).get("localhost", {}))


def _prefixes(table: Mapping[str, Any] | None) -> list[tuple[str, IPv4Interface | IPv6Interface]]:
    """pfx_filter: the `name|prefix` keys of an interface table, a bare address taken as /32 or /128."""
    out = []
    for key in table or {}:
        if "|" not in key:
            continue
        name, prefix = key.split("|", 1)
        try:
            out.append((name, ip_interface(prefix)))
        except ValueError:
            continue
    return out


def loopback(db: ConfigDb, name: str, version: int) -> IPv4Interface | IPv6Interface | None:
    """get_ipv4/ipv6_loopback_address: the last `name` prefix of that IP version in LOOPBACK_INTERFACE."""
    found = None
    for intf, prefix in _prefixes(db.get("LOOPBACK_INTERFACE")):
        if intf == name and prefix.version == version:
            found = prefix
    return found


# -- bgpd/bgpd.main.conf.j2 ------------------------------------------------------------------


def _vlan_prefixes(db: ConfigDb) -> list[tuple[int, IPv4Interface | IPv6Interface]]:
    """VLAN_INTERFACE prefixes with their 1-based position, those of VNET interfaces left out.

    get_vnet_interfaces renders the list of VNET keys as text and the template tests `name not in`
    that text: a substring test, which twin keeps.
    """
    table = db.get("VLAN_INTERFACE")
    vnets = str([key for key, row in (table or {}).items() if "vnet_name" in (row or {})])
    return [(index, prefix) for index, (name, prefix) in enumerate(_prefixes(table), 1) if name not in vnets]


def _prefix_lists(db: ConfigDb, meta: Mapping[str, Any]) -> list[str]:
    """PL_LoopbackV4/V6 and LOCAL_VLAN_IPV4/IPV6_PREFIX."""
    lines = []
    lo4, lo6 = loopback(db, "Loopback0", 4), loopback(db, "Loopback0", 6)
    if lo4 is not None:
        lines.append(f"ip prefix-list PL_LoopbackV4 permit {lo4.ip}/32")
    if lo6 is not None:
        if meta.get("bgp_adv_lo_prefix_as_128") == "true":
            lines.append(f"ipv6 prefix-list PL_LoopbackV6 permit {lo6.network.network_address}/128")
        else:  # `| replace('/128', '/64') | ip_network`, then /64
            as64 = ip_interface(str(lo6).replace("/128", "/64"))
            lines.append(f"ipv6 prefix-list PL_LoopbackV6 permit {as64.network.network_address}/64")
    vlans = _vlan_prefixes(db)
    for version, ip in ((4, "ip"), (6, "ipv6")):
        lines += [f"{ip} prefix-list LOCAL_VLAN_IPV{version}_PREFIX seq {i * 5} permit {p.network}"
                  for i, p in vlans if p.version == version]
    return lines


def _bgp_init(db: ConfigDb, meta: Mapping[str, Any], constants: Mapping[str, Any]) -> list[str]:
    """The bgp_init block: fixed globals, the constants.yml features, router-id, the loopback networks."""
    lines = ["  bgp log-neighbor-changes", "  bgp suppress-fib-pending", "  no bgp default ipv4-unicast",
             "  no bgp ebgp-requires-policy"]
    if str(meta.get("subtype", "")).lower() == "dualtor":
        lines.append("  coalesce-time 10000")
    if _get(constants, "bgp", "multipath_relax", "enabled"):
        lines.append("  bgp bestpath as-path multipath-relax")
    gr = _get(constants, "bgp", "graceful_restart") or {}
    if gr.get("enabled") and meta.get("type") == "ToRRouter":
        lines += [f"  bgp graceful-restart restart-time {gr.get('restart_time', 240)}", "  bgp graceful-restart",
                  "  bgp graceful-restart preserve-fw-state",
                  f"  bgp graceful-restart select-defer-time {gr.get('select_defer_time', 45)}"]
    lo4, lo6 = loopback(db, "Loopback0", 4), loopback(db, "Loopback0", 6)
    if "bgp_router_id" in meta:
        lines.append(f"  bgp router-id {meta['bgp_router_id']}")
    elif lo4 is not None:
        lines.append(f"  bgp router-id {lo4.ip}")
    if lo4 is not None:
        lines.append(f"  network {lo4.ip}/32")
    if lo6 is not None:
        length = 128 if meta.get("bgp_adv_lo_prefix_as_128") == "true" else 64
        lines += ["  address-family ipv6", f"    network {lo6.ip}/{length}", "  exit-address-family"]
    return lines


def _vlan_networks(db: ConfigDb) -> list[str]:
    """The vlan_advertisement block: `network` for each VLAN_INTERFACE prefix, as written there."""
    lines = []
    for _, prefix in _vlan_prefixes(db):
        if prefix.version == 4:
            lines.append(f"  network {prefix}")
        else:
            lines += ["  address-family ipv6", f"   network {prefix}", "  exit-address-family"]
    return lines


def _maximum_paths(constants: Mapping[str, Any]) -> list[str]:
    paths = _get(constants, "bgp", "maximum_paths") or {}
    if not paths.get("enabled"):
        return []
    return ["  address-family ipv4", f"    maximum-paths {paths.get('ipv4', 64)}", "  exit-address-family",
            "  address-family ipv6", f"    maximum-paths {paths.get('ipv6', 64)}", "  exit-address-family"]


def bgp_asn(db: ConfigDb) -> str | None:
    """DEVICE_METADATA bgp_asn, unless absent or `none`/`null` (bgpd.main then renders no `router bgp`)."""
    asn = _metadata(db).get("bgp_asn")
    return None if asn is None or str(asn).lower() in ("none", "null") else str(asn)


def main_lines(db: ConfigDb, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> list[str]:
    """bgpd/bgpd.main.conf.j2 as sonic-cfggen renders it at start, for a single-ASIC, non-chassis switch."""
    meta = _metadata(db)
    lines = _prefix_lists(db, meta)
    asn = bgp_asn(db)
    if asn is None:
        return lines
    return [*lines, f"router bgp {asn}", *_bgp_init(db, meta, constants), *_vlan_networks(db),
            *_maximum_paths(constants)]


# -- bgpd/templates/general/*.conf.j2 ---------------------------------------------------------


def _allow_list(constants: Mapping[str, Any], default_action: str | None) -> list[str]:
    """The allow-list part of policies.conf.j2: default 65535 entries and the FROM_BGP_PEER 10/11 entries."""
    allow = _get(constants, "bgp", "allow_list") or {}
    if not (allow.get("enabled") and "drop_community" in allow):
        return []
    mark = "no-export" if default_action == "deny" else allow["drop_community"]
    lines = []
    for v in (4, 6):
        lines += [f"route-map ALLOW_LIST_DEPLOYMENT_ID_0_V{v} permit 65535", f"  set community {mark} additive"]
    lines += ["bgp community-list standard allow_list_default_community permit no-export",
              f"bgp community-list standard allow_list_default_community permit {allow['drop_community']}"]
    for v in (4, 6):
        lines += [f"route-map FROM_BGP_PEER_V{v} permit 10", f"  call ALLOW_LIST_DEPLOYMENT_ID_0_V{v}",
                  "  on-match next", f"route-map FROM_BGP_PEER_V{v} permit 11",
                  "  match community allow_list_default_community"]
    return lines


def policies_lines(constants: Mapping[str, Any] = SONIC_CONSTANTS, allow_list_default_action: str | None = None,
                   ) -> list[str]:
    """general/policies.conf.j2: the FROM/TO_BGP_PEER_V4/V6 route-maps, TO_ calling CHECK_IDF_ISOLATION.

    bgpcfgd passes no `allow_list_default_action`, so on a switch the allow-list's default entries
    mark routes with the drop community (the template's `permit` branch).
    """
    return ["ip prefix-list DEFAULT_IPV4 permit 0.0.0.0/0", "ipv6 prefix-list DEFAULT_IPV6 permit ::/0",
            *_allow_list(constants, allow_list_default_action),
            "route-map FROM_BGP_PEER_V4 permit 100",
            "route-map TO_BGP_PEER_V4 permit 100", "  call CHECK_IDF_ISOLATION",
            "route-map FROM_BGP_PEER_V6 permit 1", " on-match next", " set ipv6 next-hop prefer-global",
            "route-map FROM_BGP_PEER_V6 permit 100",
            "route-map TO_BGP_PEER_V6 permit 100", "  call CHECK_IDF_ISOLATION",
            "route-map CHECK_IDF_ISOLATION permit 10"]


def peer_group_lines(metadata: Mapping[str, Any] | None, bbr: Mapping[str, Any] | None) -> list[str]:
    """general/peer-group.conf.j2: PEER_V4/PEER_V6, `allowas-in 1` on a ToR (on a LeafRouter with BBR
    enabled), soft-reconfiguration inbound and the FROM/TO_BGP_PEER route-maps."""
    kind = _get(metadata, "localhost", "type")
    allowas = kind == "ToRRouter" or (kind == "LeafRouter" and _get(bbr, "status") == "enabled")
    lines = ["  neighbor PEER_V4 peer-group", "  neighbor PEER_V6 peer-group"]
    for family, v in (("ipv4", 4), ("ipv6", 6)):
        lines.append(f"  address-family {family}")
        if allowas:
            lines.append(f"    neighbor PEER_V{v} allowas-in 1")
        lines += [f"    neighbor PEER_V{v} soft-reconfiguration inbound",
                  f"    neighbor PEER_V{v} route-map FROM_BGP_PEER_V{v} in",
                  f"    neighbor PEER_V{v} route-map TO_BGP_PEER_V{v} out", "  exit-address-family"]
    return lines


def _int(value: Any) -> int:
    """Jinja's `int` filter: 0 for what is not a number."""
    try:
        return int(str(value))
    except ValueError:
        return 0


def _shutdown(session: Mapping[str, Any], metadata: Mapping[str, Any] | None) -> bool:
    """admin_status down, or no admin_status and DEVICE_METADATA default_bgp_status down."""
    if "admin_status" in session:
        return bool(session["admin_status"] == "down")
    return bool(_get(metadata, "localhost", "default_bgp_status") == "down")


def instance_lines(neighbor_addr: str, bgp_session: Mapping[str, Any], metadata: Mapping[str, Any] | None = None,
                   ) -> list[str]:
    """general/instance.conf.j2: remote-as, description, timers only where not 60/180, connect 10,
    shutdown, the peer group of the address's family, route-reflector-client/next-hop-self, activate."""
    nb, s = neighbor_addr, bgp_session
    lines = [f"  neighbor {nb} remote-as {s.get('asn', '')}", f"  neighbor {nb} description {s.get('name', '')}"]
    if ("keepalive" in s and _int(s["keepalive"]) != 60) or ("holdtime" in s and _int(s["holdtime"]) != 180):
        lines.append(f"  neighbor {nb} timers {s.get('keepalive', '60')} {s.get('holdtime', '180')}")
    lines.append(f"  neighbor {nb} timers connect 10")
    if _shutdown(s, metadata):
        lines.append(f"  neighbor {nb} shutdown")
    version = _version(nb)
    if version:
        lines += [f"  address-family ipv{version}", f"    neighbor {nb} peer-group PEER_V{version}"]
    if _int(s.get("rrclient", 0)):
        lines.append(f"    neighbor {nb} route-reflector-client")
    if _int(s.get("nhopself", 0)):
        lines.append(f"    neighbor {nb} next-hop-self")
    return [*lines, f"    neighbor {nb} activate", "  exit-address-family"]


def _version(addr: str) -> int:
    """4 or 6 for an IP address (the templates' ipv4/ipv6 filters), 0 for anything else."""
    try:
        return ip_address(addr).version
    except ValueError:
        return 0


# -- what bgpcfgd holds and pushes ------------------------------------------------------------


# bgpcfgd's peer managers twin emulates: peer type -> the CONFIG_DB table it reads (main.py).
PEER_TABLES = {"general": "BGP_NEIGHBOR", "internal": "BGP_INTERNAL_NEIGHBOR", "monitors": "BGP_MONITORS",
               "dynamic": "BGP_PEER_RANGE", "sentinels": "BGP_SENTINELS"}
# Peer types keyed by a peer group's name, over listen ranges: their template fails without `ip_range`.
RANGE_TYPES = ("dynamic", "sentinels")


@dataclass(frozen=True)
class Peer:
    """An entry of a peer table as bgpcfgd's peer manager of that type holds it (`addr` is the peer
    group's name for the dynamic type)."""

    vrf: str
    addr: str
    session: dict[str, Any]
    kind: str = "general"


def _split_key(key: str) -> tuple[str, str]:
    """BGPPeerMgrBase.split_key: `IP` is (default, IP), `VRF|IP` is (VRF, IP)."""
    vrf, sep, addr = key.partition("|")
    return (vrf, addr) if sep else ("default", key)


def _local_interface(db: ConfigDb, local_addr: str) -> bool:
    """get_local_interface: the address is on an interface whose base key (`Ethernet8`) exists and
    binds it to no VRF or VNET (a default-VRF neighbor)."""
    bases = {name: row or {} for t in INTERFACE_TABLES for name, row in db.get(t, {}).items() if "|" not in name}
    for table in INTERFACE_TABLES:
        for name, prefix in _prefixes(db.get(table)):
            base = bases.get(name)
            if str(prefix.ip) == local_addr and base is not None and not (base.get("vrf_name")
                                                                          or base.get("vnet_name")):
                return True
    return False


def _added(db: ConfigDb, peer: Peer) -> bool:
    """Whether add_peer puts the neighbor into FRR now, rather than waiting for its dependencies:
    bgp_asn and type in DEVICE_METADATA, the Loopback0 interface (and Loopback4096 for an internal
    peer) with an IPv4 address (or a bgp_router_id), an interface address at all, and the neighbor's
    local_addr on an interface."""
    meta = _metadata(db)
    if bgp_asn(db) is None or "type" not in meta or "Loopback0" not in db.get("LOOPBACK_INTERFACE", {}):
        return False
    names = ("Loopback0", *internal.EXTRA_LOOPBACKS) if peer.kind == "internal" else ("Loopback0",)
    if any(n not in db.get("LOOPBACK_INTERFACE", {}) for n in names):
        return False
    if "bgp_router_id" not in meta and any(loopback(db, n, 4) is None for n in names):
        return False
    if not any(_prefixes(db.get(t)) for t in INTERFACE_TABLES):
        return False
    local = peer.session.get("local_addr")
    return local is None or _local_interface(db, str(local))


def _peer(key: str, row: Mapping[str, Any], kind: str = "general") -> Peer:
    vrf, addr = _split_key(key)
    session = as_received(row)
    if "local_addr" in session:  # add_peer keeps the address of a prefix
        with suppress(ValueError):
            session["local_addr"] = str(ip_interface(str(session["local_addr"])).ip)
    return Peer(vrf, addr, session, kind)


def _order(peer: Peer) -> tuple[int, int, str]:
    try:
        ip = ip_address(peer.addr)
        return (ip.version, int(ip), peer.addr)
    except ValueError:
        return (9, 0, peer.addr)


def _renderable(db: ConfigDb, peer: Peer) -> bool:
    """Whether FRR can take the peer as its type's template renders it.

    Twin leaves out what bgpcfgd would render but FRR cannot take: a general neighbor or monitor whose
    key is not an IP address (the general templates put no peer group on it), a general neighbor
    without `asn` and a dynamic peer group whose remote-as resolves to nothing (`remote-as` fails and
    with it every line of that neighbor or every listen range of that group, on SONiC as on twin), a
    dynamic peer without `ip_range` (the template fails to render; bgpcfgd logs it).
    """
    if peer.kind == "dynamic":
        meta = {"localhost": _metadata(db)}
        return "ip_range" in peer.session and bool(types.dynamic_remote_as(peer.session, meta, SONIC_CONSTANTS))
    if peer.kind == "sentinels":
        return "ip_range" in peer.session
    if not _version(peer.addr):
        return False
    return peer.kind not in ("general", "internal") or bool(peer.session.get("asn"))


def _rows(db: ConfigDb, kind: str) -> list[Peer]:
    return [_peer(key, row or {}, kind) for key, row in db.get(PEER_TABLES[kind], {}).items()]


def attempts(db: ConfigDb, kind: str = "general") -> list[Peer]:
    """The entries add_peer goes through, in address order: their dependencies met, in the default VRF
    (twin's switches have one routing table). add_peer pushes their type's policies and peer groups
    before it renders the peer's template; a dynamic peer whose template fails (no `ip_range`, which a
    list written as YANG's leaf-list never has: twin.stages.render.bgpcfgd_fields) gets no further."""
    return sorted((p for p in _rows(db, kind) if p.vrf == "default" and _added(db, p)
                   and (kind in RANGE_TYPES or _renderable(db, p))), key=_order)


def peers(db: ConfigDb, kind: str = "general") -> list[Peer]:
    """The entries of a peer table (BGP_NEIGHBOR for general) bgpcfgd adds to FRR, in address order."""
    return [p for p in attempts(db, kind) if _renderable(db, p)]


def bbr_status(db: ConfigDb, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> str:
    """BBRMgr's status: BGP_BBR|all status from CONFIG_DB, else constants bbr.default_state when BBR is
    enabled with peer groups in constants, else disabled."""
    row = db.get("BGP_BBR", {}).get("all")
    if row is not None and "status" in row:
        return "enabled" if row["status"] == "enabled" else "disabled"
    bbr = _get(constants, "bgp", "bbr") or {}
    on = bbr.get("enabled") and _bbr_groups(constants) and bbr.get("default_state") == "enabled"
    return "enabled" if on else "disabled"


def template_vars(db: ConfigDb, peer: Peer, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> dict[str, Any]:
    """The variables add_peer gives the general templates."""
    out: dict[str, Any] = {
        "CONFIG_DB__DEVICE_METADATA": {"localhost": _metadata(db)},
        "CONFIG_DB__BGP_BBR": {"status": bbr_status(db, constants)},
        "constants": constants, "bgp_asn": bgp_asn(db), "vrf": peer.vrf, "neighbor_addr": peer.addr,
        "bgp_session": dict(peer.session),
        "CONFIG_DB__LOOPBACK_INTERFACE": {tuple(k.split("|")): {} for k in db.get("LOOPBACK_INTERFACE", {})
                                          if "|" in k},
    }
    lo4 = loopback(db, "Loopback0", 4)
    if lo4 is not None:
        out["loopback0_ipv4"] = str(lo4.ip)
    return out


def _router(asn: str, lines: list[str]) -> list[str]:
    return [f"router bgp {asn}", *lines, "exit"]


def _apply_op(asn: str, lines: list[str]) -> list[str]:
    """BGPPeerMgrBase.apply_op: a neighbor command inside `router bgp` with `bgp suppress-fib-pending`."""
    return _router(asn, [" bgp suppress-fib-pending", *lines])


def first_loopback_ipv4(db: ConfigDb, name: str = "Loopback0") -> str | None:
    """BGPPeerMgrBase.get_lo_ipv4: the address of the first `name|` key holding an IPv4 prefix."""
    for intf, prefix in _prefixes(db.get("LOOPBACK_INTERFACE")):
        if intf == name and prefix.version == 4:
            return str(prefix.ip)
    return None


def _type_groups(db: ConfigDb, kind: str, constants: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The policies and the peer group lines of a peer type's templates."""
    meta = {"localhost": _metadata(db)}
    if kind == "monitors":
        return types.monitor_policies_lines(), types.monitor_peer_group_lines(meta, first_loopback_ipv4(db))
    if kind == "dynamic":
        return types.dynamic_policies_lines(), types.dynamic_peer_group_lines()
    if kind == "internal":
        return (internal.policies_lines(meta, db.get("LOOPBACK_INTERFACE"), constants),
                internal.peer_group_lines(meta))
    if kind == "sentinels":
        return types.sentinel_policies_lines(constants), types.sentinel_peer_group_lines()
    return policies_lines(constants), peer_group_lines(meta, {"status": bbr_status(db, constants)})


def group_lines(db: ConfigDb, constants: Mapping[str, Any] = SONIC_CONSTANTS, kind: str = "general") -> list[str]:
    """BGPPeerGroupMgr.update: the type's policies, then its peer groups inside `router bgp`."""
    asn = bgp_asn(db)
    assert asn is not None
    policies, groups = _type_groups(db, kind, constants)
    return [*policies, *_router(asn, groups)]


def neighbor_lines(db: ConfigDb, peer: Peer, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> list[str]:
    """The peer's instance template, as apply_op pushes it."""
    asn = bgp_asn(db)
    assert asn is not None
    meta = {"localhost": _metadata(db)}
    if peer.kind == "monitors":
        return _apply_op(asn, types.monitor_instance_lines(peer.addr, peer.session, asn))
    if peer.kind == "internal":
        return _apply_op(asn, internal.instance_lines(peer.addr, peer.session, meta))
    if peer.kind == "sentinels":
        return _apply_op(asn, types.sentinel_instance_lines(peer.session, asn))
    if peer.kind == "dynamic":
        return _apply_op(asn, types.dynamic_instance_lines(peer.session, meta, db.get("LOOPBACK_INTERFACE"),
                                                           constants))
    return _apply_op(asn, instance_lines(peer.addr, peer.session, meta))


def add_lines(db: ConfigDb, peer: Peer, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> list[str]:
    """add_peer: the type's policies and peer groups (again, for every peer), then the peer."""
    return [*group_lines(db, constants, peer.kind), *neighbor_lines(db, peer, constants)]


def set_src_lines(db: ConfigDb) -> list[str]:
    """ZebraSetSrc: zebra/zebra.set_src.conf.j2 for Loopback0's first IPv4 and first IPv6 address."""
    lines = []
    for name, version, proto in (("RM_SET_SRC", 4, ""), ("RM_SET_SRC6", 6, "v6")):
        first = next((p for n, p in _prefixes(db.get("LOOPBACK_INTERFACE")) if n == "Loopback0"
                      and p.version == version), None)
        if first is not None:
            lines += [f"route-map {name} permit 10", f"    set src {first.ip}",
                      f"ip{proto} protocol bgp route-map {name}"]
    return lines


# -- scope, full config, changes --------------------------------------------------------------


def check_scope(db: ConfigDb) -> None:
    """Refuse a config whose bgpcfgd rendering depends on what twin does not emulate."""
    meta = _metadata(db)
    reasons = []
    if meta.get("switch_type") in ("voq", "chassis-packet") or meta.get("sub_role") in ("FrontEnd", "BackEnd"):
        reasons.append(f"switch_type {meta.get('switch_type')!r} / sub_role {meta.get('sub_role')!r} "
                       "(chassis or multi-ASIC)")
    if meta.get("type") in UNSUPPORTED_TYPES or (meta.get("type") == "SpineRouter"
                                                 and meta.get("subtype") == "UpstreamLC"):
        reasons.append(f"type {meta.get('type')!r} (subtype {meta.get('subtype')!r})")
    feature = db.get("FEATURE", {})
    if any(_get(feature, name, "state") == "enabled" for name in ("bmp", "frr_bmp")):
        reasons.append("FEATURE bmp enabled")
    glob = db.get("BGP_DEVICE_GLOBAL", {}).get("STATE", {})
    if glob.get("tsa_enabled") == "true" or glob.get("idf_isolation_state", "unisolated") != "unisolated":
        reasons.append("BGP_DEVICE_GLOBAL|STATE traffic shift or IDF isolation")
    if reasons:
        raise TwinError(f"DEVICE_METADATA|localhost: twin's bgpcfgd emulation covers single-ASIC, non-chassis "
                        f"ToRRouter/LeafRouter/SpineRouter switches, not {'; '.join(reasons)}; render this "
                        "config with SONiC's own templates (twin.stages.render.sonic_templates: the --sonic-templates "
                        "folder or TWIN_SONIC_TEMPLATES)")


def config_lines(db: ConfigDb, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> list[str]:
    """What FRR holds once bgpcfgd has added every neighbor: bgpd.main, set src, the policies and
    peer groups (once: bgpcfgd's repeats change nothing), each neighbor. SONiC's lines, unadapted."""
    check_scope(db)
    lines = main_lines(db, constants)
    if bgp_asn(db) is not None:
        lines.append("exit")
    lines += set_src_lines(db)
    for kind in PEER_TABLES:
        if attempts(db, kind):
            lines += group_lines(db, constants, kind)
        for peer in peers(db, kind):
            lines += neighbor_lines(db, peer, constants)
    lines += allow_list.boot_lines(db, bool(peers(db)), constants)
    lines += prefix_list.boot_lines(db, constants)
    lines += aggregate.boot_lines(db, bgp_asn(db), bbr_status(db, constants))
    lines += static.boot_lines(db, bgp_asn(db))
    return lines


def render_bgpcfgd(db: ConfigDb) -> str:
    """frr.conf of a classic SONiC switch as twin runs it: twin's header, then SONiC's lines adapted."""
    hostname = _metadata(db).get("hostname")
    head = [*header_lines(), *([f"hostname {hostname}"] if hostname else []), "log syslog informational"]
    return "\n".join(["! Rendered by twin from config_db.json (as SONiC's bgpcfgd would). Do not edit.", *head,
                      "!", *adapt_lines(config_lines(db)), "!", "end"]) + "\n"


def _admin_lines(asn: str, peer: Peer) -> list[str]:
    """update_peer: only admin_status is applied (up: no shutdown, down: shutdown, else nothing)."""
    status = peer.session.get("admin_status")
    if status == "up":
        return _apply_op(asn, [f"no neighbor {peer.addr} shutdown"])
    if status == "down":
        return _apply_op(asn, [f"neighbor {peer.addr} shutdown"])
    return []


def _frr_range(text: str) -> str:
    """A listen range as FRR shows it (`show bgp peer-group X json`): the network of the prefix."""
    try:
        return str(ip_network(text, strict=False))
    except ValueError:
        return text


def _update_lines(asn: str, was: Peer, peer: Peer) -> list[str]:
    """update_peer: admin_status when the row has one; else, for a dynamic peer, change_ip_range
    (the ranges FRR holds that the new `ip_range` lacks removed, the new ones added); else nothing."""
    if "admin_status" in peer.session:
        return _admin_lines(asn, peer)
    if peer.kind != "dynamic" or not peer.session.get("ip_range"):
        return []
    new = types.ip_ranges(peer.session)
    existing = [_frr_range(r) for r in types.ip_ranges(was.session)]
    gone = [r for r in existing if r not in new]
    added = [r for r in new if r not in existing]
    return _apply_op(asn, types.dynamic_update_lines(peer.session, gone, added)) if gone or added else []


def _delete_lines(asn: str, peer: Peer) -> list[str]:
    """del_handler: a dynamic or sentinel group's listen ranges first (one apply_op each), then `no neighbor`."""
    if peer.kind not in RANGE_TYPES:
        return _apply_op(asn, [f"no neighbor {peer.addr}"])
    lines: list[str] = []
    for ip_range in types.ip_ranges(peer.session):
        lines += _apply_op(asn, [f"no bgp listen range {ip_range} peer-group {peer.addr}"])
    return [*lines, *_apply_op(asn, [f"no neighbor {peer.addr}"])]


def _bbr_groups(constants: Mapping[str, Any]) -> dict[str, list[str]]:
    """The peer groups (and their families) constants.yml gives BBR, the groups BBRMgr toggles."""
    groups: dict[str, list[str]] = {}
    for peer_type in (_get(constants, "bgp", "peers") or {}).values():
        groups.update(_get(peer_type, "bbr") or {})
    return groups


def _bbr_lines(asn: str, old: ConfigDb, new: ConfigDb, constants: Mapping[str, Any]) -> list[str]:
    """BBRMgr on a SET of BGP_BBR|all (status enabled or disabled; a DEL changes nothing in FRR):
    `[no] neighbor PEER_Vx allowas-in 1` per family, on a ToR too. BBRMgr then runs `clear bgp
    peer-group X soft in`, an exec command; the allowas-in change already makes FRR re-read the
    routes the group's peers sent (soft-reconfiguration inbound)."""
    row = new.get("BGP_BBR", {}).get("all")
    groups = _bbr_groups(constants)
    enabled = bool(groups) and (bool(_get(constants, "bgp", "bbr", "enabled")) or "all" in old.get("BGP_BBR", {}))
    if not enabled or row is None or row == old.get("BGP_BBR", {}).get("all") \
            or row.get("status") not in ("enabled", "disabled"):
        return []
    prefix = "" if row["status"] == "enabled" else "no "
    lines = [f"router bgp {asn}"]
    for family in ("ipv4", "ipv6"):
        lines.append(f" address-family {family}")
        lines += [f"  {prefix}neighbor {g} allowas-in 1" for g in sorted(groups) if family in groups[g]]
        lines.append(" exit-address-family")
    return [*lines, "exit"]


def changes(old: ConfigDb, new: ConfigDb, constants: Mapping[str, Any] = SONIC_CONSTANTS) -> list[str] | None:
    """What bgpcfgd sends FRR when CONFIG_DB goes from `old` to `new` (adapted), or None when BGP must be
    restarted whole (bgp_asn changed: bgpd.main is rendered only at start)."""
    check_scope(new)
    asn = bgp_asn(new)
    if asn != bgp_asn(old):
        return None
    if asn is None:
        return []
    lines: list[str] = []
    if not set_src_lines(old) and set_src_lines(new):
        lines += set_src_lines(new)
    if peers(old):  # the peer groups exist once bgpcfgd has added a neighbor
        lines += _bbr_lines(asn, old, new, constants)
    for kind in PEER_TABLES:
        lines += _peer_changes(asn, old, new, kind, constants)
    lines += allow_list.change_lines(old, new, bool(peers(old)), constants)
    lines += prefix_list.change_lines(old, new, constants)
    lines += aggregate.change_lines(old, new, asn, bbr_status(old, constants))
    lines += static.change_lines(old, new, asn)
    return adapt_lines(lines)


def _peer_changes(asn: str, old: ConfigDb, new: ConfigDb, kind: str, constants: Mapping[str, Any]) -> list[str]:
    """What a peer manager sends: deleted peers removed, changed ones updated, those now ready added."""
    lines: list[str] = []
    had = {(p.vrf, p.addr): p for p in peers(old, kind)}
    rows = {(p.vrf, p.addr): p for p in _rows(new, kind)}
    wanted = {(p.vrf, p.addr): p for p in peers(new, kind)}
    tried = {(p.vrf, p.addr): p for p in attempts(old, kind)}
    failing = {(p.vrf, p.addr) for p in attempts(new, kind)} - set(wanted)
    for key in sorted(set(had) - set(rows), key=lambda k: _order(had[k])):
        lines += _delete_lines(asn, had[key])
    for key, peer in sorted(rows.items(), key=lambda kv: _order(kv[1])):
        if key in had:
            if peer.session != had[key].session:
                lines += _update_lines(asn, had[key], peer)
        elif key in wanted:
            lines += add_lines(new, peer, constants)
        elif key in failing and (key not in tried or tried[key].session != peer.session):
            lines += group_lines(new, constants, kind)  # add_peer's pushes before its template fails
    return lines
