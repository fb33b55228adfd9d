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


# Where a switch's config says its own ASN: frrcfgd's `router bgp` comes from the first, bgpcfgd's
# from the second.
ASN_FIELDS = (("BGP_GLOBALS", "default", "local_asn"), ("DEVICE_METADATA", "localhost", "bgp_asn"))


def _asn_fields(cfg: SwitchConfig) -> list[tuple[str, str]]:
    """(`TABLE|key field`, ASN) of each field of `cfg` that says the switch's own ASN, in ASN_FIELDS'
    order: the first is taken as the switch's ASN when the places that say it have no majority."""
    return [(f"{table}|{key} {field}", str(value)) for table, key, field in ASN_FIELDS
            if (value := cfg.table(table).get(key, {}).get(field)) not in (None, "")]


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
    """Every session has a reverse session on the switch that owns the peer address, both addresses
    sit on the same link, and ASNs agree (asn_findings)."""
    out = []
    owner: dict[str, tuple[SwitchConfig, IPv4Interface]] = {}
    for cfg in cfgs:
        for _, _, iface in _addresses(cfg):
            owner[str(iface.ip)] = (cfg, iface)
    here = {cfg.name for cfg in cfgs} | {str(h) for cfg in cfgs
                                          if (h := cfg.table("DEVICE_METADATA").get("localhost", {}).get("hostname"))}
    for cfg in cfgs:
        mine = {str(i.ip): i for _, _, i in _addresses(cfg)}
        for ip, (key, row) in sorted(_neighbors(cfg).items()):
            where = f"BGP_NEIGHBOR|{key}"
            if ip not in owner:
                name = row.get("name")
                if name and str(name) not in here:
                    continue   # a device outside the folder (a T2, a server): nothing here to check it against
                out.append(Finding("bgp", cfg.file, where, f"no switch in this folder has address {ip}",
                                   "fix the neighbor address, or add the peer's config"))
                continue
            peer, peer_iface = owner[ip]
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
    return _dedupe(out + asn_findings(cfgs, owner))


def asn_findings(cfgs: list[SwitchConfig],
                 owner: dict[str, tuple[SwitchConfig, IPv4Interface]]) -> list[Finding]:
    """A switch's ASN agrees wherever it is written: its own file's ASN fields (BGP_GLOBALS
    local_asn, DEVICE_METADATA bgp_asn) and its peers' BGP_NEIGHBOR rows for its addresses.

    Each peer row is one vote, and so is each ASN the switch's own file says (a file is one vote
    however many of its fields say it). When one ASN has more votes than any other, every place that
    says something else is named, once: a leaf whose own file says 65199 while both spines say
    65101 for it gets one finding on its file (not one per spine file suggesting 65199 there). With
    no clear majority the ASN the switch runs (the first field) is taken as right."""
    out = []
    for cfg in cfgs:
        fields = _asn_fields(cfg)
        if not fields:  # no ASN of its own: the schema check reports the missing bgp_asn
            continue
        claims = [(peer, key, ip, str(row.get("asn"))) for peer in cfgs if peer is not cfg
                  for ip, (key, row) in sorted(_neighbors(peer).items())
                  if ip in owner and owner[ip][0] is cfg]
        ranked = Counter(sorted({asn for _, asn in fields}) + [asn for *_, asn in claims]).most_common()
        clear = len(ranked) == 1 or ranked[0][1] > ranked[1][1]
        consensus = ranked[0][0] if clear else fields[0][1]
        agree = [where for where, asn in fields if asn == consensus]
        peers = sorted({p.name for p, *_, asn in claims if asn == consensus})
        backers = ([f"{' and '.join(agree)} {'says' if len(agree) == 1 else 'say'} {consensus}"] if agree else []) \
            + ([f"{_names(peers)} expect {consensus} for {cfg.name} (their BGP_NEIGHBOR asn)"] if peers else [])
        for odd in sorted({asn for _, asn in fields} - {consensus}):
            wrong = [where for where, asn in fields if asn == odd]
            out.append(Finding("bgp", cfg.file, wrong[0], f"ASN {odd}, but {' and '.join(backers)}",
                               f"set {' and '.join(wrong)} to {consensus}"))
        for peer, key, ip, asn in claims:
            if asn != consensus:
                said = f"peer {cfg.name} ({ip}) has ASN {consensus}" if consensus == fields[0][1] else \
                    f"peer {cfg.name} ({ip}) is expected to have ASN {consensus} by its other peers"
                out.append(Finding("bgp", peer.file, f"BGP_NEIGHBOR|{key} asn", f"{said}, not {asn}",
                                   f"set asn to {consensus}"))
    return out


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


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
