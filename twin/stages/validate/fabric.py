"""Consistency across the switches of a fabric: sessions, addresses, ECMP width, link MTUs."""

from __future__ import annotations

from collections import Counter, defaultdict
from ipaddress import IPv4Interface, ip_interface

from twin.model.findings import Finding, SwitchConfig


def _addresses(cfg: SwitchConfig) -> list[tuple[str, str, IPv4Interface]]:
    """(table, key, interface address) of every IPv4 address the switch owns."""
    out = []
    for table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        for key in cfg.table(table):
            if "|" not in key:
                continue
            try:
                iface = ip_interface(key.split("|", 1)[1])
            except ValueError:
                continue
            if isinstance(iface, IPv4Interface):
                out.append((table, key, iface))
    return out


def _asn(cfg: SwitchConfig) -> str:
    return str(cfg.table("BGP_GLOBALS").get("default", {}).get("local_asn")
               or cfg.table("DEVICE_METADATA").get("localhost", {}).get("bgp_asn", ""))


def _neighbors(cfg: SwitchConfig) -> dict[str, tuple[str, dict[str, str]]]:
    """peer ip -> (key, row) of the default VRF's BGP neighbors."""
    out = {}
    for key, row in cfg.table("BGP_NEIGHBOR").items():
        vrf, _, ip = key.rpartition("|")
        if vrf in ("", "default"):
            out[ip] = (key, row)
    return out


def address_findings(cfgs: list[SwitchConfig]) -> list[Finding]:
    out = []
    owners: dict[str, list[tuple[SwitchConfig, str, str]]] = defaultdict(list)
    for cfg in cfgs:
        for table, key, iface in _addresses(cfg):
            owners[str(iface.ip)].append((cfg, table, key))
    for ip, where in sorted(owners.items()):
        if len(where) > 1:
            names = ", ".join(f"{c.name} ({t}|{k})" for c, t, k in where)
            for cfg, table, key in where[1:]:
                out.append(Finding("addressing", cfg.file, f"{table}|{key}", f"address {ip} is also on {names}",
                                   "give every interface and loopback its own address"))
    ids = defaultdict(list)
    for cfg in cfgs:
        rid = cfg.table("BGP_GLOBALS").get("default", {}).get("router_id")
        if rid:
            ids[str(rid)].append(cfg)
    for rid, holders in sorted(ids.items()):
        for cfg in holders[1:]:
            out.append(Finding("addressing", cfg.file, "BGP_GLOBALS|default router_id",
                               f"router id {rid} is also used by {holders[0].name}",
                               "use the switch's own loopback address as router id"))
    return out


def session_findings(cfgs: list[SwitchConfig]) -> list[Finding]:
    """Every session has a reverse session on the switch that owns the peer address, ASNs agree,
    and both addresses sit on the same link."""
    out = []
    owner: dict[str, tuple[SwitchConfig, IPv4Interface]] = {}
    for cfg in cfgs:
        for _, _, iface in _addresses(cfg):
            owner[str(iface.ip)] = (cfg, iface)
    for cfg in cfgs:
        my_asn = _asn(cfg)
        mine = {str(i.ip): i for _, _, i in _addresses(cfg)}
        for ip, (key, row) in sorted(_neighbors(cfg).items()):
            where = f"BGP_NEIGHBOR|{key}"
            if ip not in owner:
                out.append(Finding("bgp", cfg.file, where, f"no switch in this folder has address {ip}",
                                   "fix the neighbor address, or add the peer's config"))
                continue
            peer, peer_iface = owner[ip]
            peer_asn = _asn(peer)
            if str(row.get("asn")) != peer_asn:
                out.append(Finding("bgp", cfg.file, f"{where} asn",
                                   f"peer {peer.name} ({ip}) has ASN {peer_asn}, not {row.get('asn')}",
                                   f"set asn to {peer_asn}"))
            local = str(row.get("local_addr", ""))
            if local and local in mine and ip_interface(f"{ip}/{peer_iface.network.prefixlen}").network != \
                    mine[local].network:
                out.append(Finding("bgp", cfg.file, f"{where} local_addr",
                                   f"{local} and {ip} are not on the same link",
                                   "peer over the addresses of the link between the two switches"))
            back = _neighbors(peer)
            reverse = [b for b in back if b in mine]
            if not reverse:
                out.append(Finding("bgp", cfg.file, where,
                                   f"one-sided session: {peer.name} has no BGP_NEIGHBOR for any address of "
                                   f"{cfg.name}", f"add BGP_NEIGHBOR|default|{local or '<address>'} to "
                                   f"{peer.file}"))
                continue
            for b in reverse:
                b_key, b_row = back[b]
                if str(b_row.get("asn")) != my_asn:
                    out.append(Finding("bgp", peer.file, f"BGP_NEIGHBOR|{b_key} asn",
                                       f"{cfg.name} ({b}) has ASN {my_asn}, not {b_row.get('asn')}",
                                       f"set asn to {my_asn}"))
    return _dedupe(out)


# SONiC's tiers, lowest first (DEVICE_METADATA type): servers hang off ToRRouters (T0), which
# LeafRouters (T1) connect, which SpineRouters (T2) connect.
TIERS = ("ToRRouter", "LeafRouter", "SpineRouter")


def ecmp_findings(cfgs: list[SwitchConfig]) -> list[Finding]:
    """Every switch of the lowest tier present needs an ECMP width of at least the top tier's size."""
    present = sorted({c.role for c in cfgs if c.role in TIERS}, key=TIERS.index)
    if len(present) < 2:
        return []
    spines = [c for c in cfgs if c.role == present[-1]]
    out = []
    for cfg in cfgs:
        if cfg.role != present[0]:
            continue
        # Unset, FRR keeps its default, the multipath number it was built with (256 on Debian's 8.4,
        # SONiC's builds alike); bgpcfgd's configs have no such field (maximum-paths comes from
        # SONiC's constants.yml). Only a width set below the spine count narrows ECMP.
        af = cfg.table("BGP_GLOBALS_AF").get("default|ipv4_unicast", {})
        paths = af.get("max_ebgp_paths")
        if paths is not None and (not str(paths).isdigit() or int(paths) < len(spines)):
            out.append(Finding("ecmp", cfg.file, "BGP_GLOBALS_AF|default|ipv4_unicast max_ebgp_paths",
                               f"ECMP width {paths} is less than the {len(spines)} spines",
                               f"set max_ebgp_paths to at least {len(spines)}, or leave it unset"))
    return out


def mtu_findings(cfgs: list[SwitchConfig], roce_mtu: int | None) -> list[Finding]:
    """Both ends of every switch-to-switch link (a shared /31 or /30) agree, and carry RoCE frames."""
    out = []
    ends: dict[str, list[tuple[SwitchConfig, str]]] = defaultdict(list)
    for cfg in cfgs:
        for table, key, iface in _addresses(cfg):
            if table == "INTERFACE" and iface.network.prefixlen >= 30:
                ends[str(iface.network)].append((cfg, key.split("|", 1)[0]))

    def mtu(cfg: SwitchConfig, port: str) -> str:
        return str(cfg.table("PORT").get(port, {}).get("mtu", "9100"))

    usual = Counter(mtu(c, p) for pair in ends.values() for c, p in pair).most_common(1)
    fabric_mtu = usual[0][0] if usual else "9100"
    for net, pair in sorted(ends.items()):
        if len(pair) != 2:
            continue
        (a, pa), (b, pb) = pair
        if mtu(a, pa) != mtu(b, pb):
            if mtu(a, pa) != fabric_mtu:  # name the end that differs from the rest of the fabric
                (a, pa), (b, pb) = (b, pb), (a, pa)
            out.append(Finding("mtu", b.file, f"PORT|{pb} mtu",
                               f"MTU {mtu(b, pb)} differs from {a.name} {pa} ({mtu(a, pa)}) on link {net}",
                               f"set it to {mtu(a, pa)} like the other end"))
    if roce_mtu:
        for cfg in cfgs:
            for key, row in sorted(cfg.table("PORT").items()):
                value = str(row.get("mtu", "9100"))
                if value.isdigit() and int(value) < roce_mtu:
                    out.append(Finding("mtu", cfg.file, f"PORT|{key} mtu",
                                       f"MTU {value} is below the RoCE MTU {roce_mtu} the lab declares",
                                       f"raise it to at least {roce_mtu}"))
    return out


def _dedupe(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))
