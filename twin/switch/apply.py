"""Program only what changed between two CONFIG_DBs: kernel `ip` lines and FRR config lines.

Changing one neighbor's description sends one `neighbor X description` line: no other session
resets and BFD does not flap. A change of the switch's own ASN or router-id has no incremental
form in FRR; `frr_lines` returns None and the caller reloads BGP whole (as SONiC does).
"""

from __future__ import annotations

from typing import Any

from twin.render.frr import frr_context
from twin.switch.configdb import ConfigDb


def _ip_keys(db: ConfigDb, table: str) -> dict[str, str]:
    """'port|prefix' keys -> device name (lo for loopbacks)."""
    return {k: ("lo" if table == "LOOPBACK_INTERFACE" else k.split("|", 1)[0])
            for k in db.get(table, {}) if "|" in k}


def kernel_lines(old: ConfigDb, new: ConfigDb, ifmap: dict[str, str] | None = None) -> list[str]:
    dev = (ifmap or {}).get
    lines = []
    for port, row in new.get("PORT", {}).items():
        before = old.get("PORT", {}).get(port, {})
        if row.get("mtu") != before.get("mtu") and "mtu" in row:
            lines.append(f"link set dev {dev(port, port)} mtu {row['mtu']}")
        if row.get("admin_status", "up") != before.get("admin_status", "up"):
            lines.append(f"link set dev {dev(port, port)} {row.get('admin_status', 'up')}")
    for table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        was, now = _ip_keys(old, table), _ip_keys(new, table)
        for key in sorted(set(was) - set(now)):
            lines.append(f"address del {key.split('|', 1)[1]} dev {dev(was[key], was[key])}")
        for key in sorted(set(now) - set(was)):
            lines.append(f"address add {key.split('|', 1)[1]} dev {dev(now[key], now[key])}")
    return lines


def _neighbor_lines(nb: dict[str, Any], bfd: dict[str, Any] | None) -> list[str]:
    ip = nb["ip"]
    lines = [f" neighbor {ip} remote-as {nb['asn']}", f" neighbor {ip} peer-group {nb['group']}",
             f" neighbor {ip} description {nb['name']}", f" neighbor {ip} timers {nb['keepalive']} {nb['holdtime']}"]
    if nb.get("connect"):
        lines.append(f" neighbor {ip} timers connect {nb['connect']}")
    if nb["bfd"] and bfd:
        lines.append(f" neighbor {ip} bfd profile {bfd['name']}")
    if nb["shutdown"]:
        lines.append(f" neighbor {ip} shutdown")
    return lines


def _changed_neighbor(a: dict[str, Any], b: dict[str, Any], bfd: dict[str, Any] | None) -> list[str]:
    ip = b["ip"]
    if a["asn"] != b["asn"] or a["group"] != b["group"]:
        return [f" no neighbor {ip}", *_neighbor_lines(b, bfd)]
    lines = []
    if a["name"] != b["name"]:
        lines.append(f" neighbor {ip} description {b['name']}")
    if (a["keepalive"], a["holdtime"]) != (b["keepalive"], b["holdtime"]):
        lines.append(f" neighbor {ip} timers {b['keepalive']} {b['holdtime']}")
    if a.get("connect") != b.get("connect"):
        lines.append(f" neighbor {ip} timers connect {b['connect']}" if b.get("connect")
                     else f" no neighbor {ip} timers connect")
    if a["bfd"] != b["bfd"]:
        lines.append(f" neighbor {ip} bfd profile {bfd['name']}" if b["bfd"] and bfd else f" no neighbor {ip} bfd")
    if a["shutdown"] != b["shutdown"]:
        lines.append(f" {'' if b['shutdown'] else 'no '}neighbor {ip} shutdown")
    return lines


def frr_lines(old: ConfigDb, new: ConfigDb) -> list[str] | None:
    """FRR config lines that turn `old` into `new`, or None when BGP must be reloaded whole."""
    a, b = frr_context(old), frr_context(new)
    if (a["asn"], a["router_id"]) != (b["asn"], b["router_id"]):
        return None
    lines: list[str] = []
    if b["bfd"] and b["bfd"] != a["bfd"]:
        lines += ["bfd", f" profile {b['bfd']['name']}", f"  detect-multiplier {b['bfd']['multiplier']}",
                  f"  receive-interval {b['bfd']['rx']}", f"  transmit-interval {b['bfd']['tx']}", " exit", "exit"]
    bgp: list[str] = []
    if (a["keepalive"], a["holdtime"]) != (b["keepalive"], b["holdtime"]):
        bgp.append(f" timers bgp {b['keepalive']} {b['holdtime']}")
    for g in sorted(set(b["groups"]) - set(a["groups"])):
        bgp += [f" neighbor {g} peer-group", " address-family ipv4 unicast", f"  neighbor {g} activate",
                f"  neighbor {g} route-map FROM_BGP_PEER_V4 in", f"  neighbor {g} route-map TO_BGP_PEER_V4 out",
                " exit-address-family"]
    olds = {nb["ip"]: nb for nb in a["neighbors"]}
    news = {nb["ip"]: nb for nb in b["neighbors"]}
    for ip in sorted(set(olds) - set(news)):
        bgp.append(f" no neighbor {ip}")
    for ip, nb in news.items():
        if ip not in olds:
            bgp += _neighbor_lines(nb, b["bfd"])
        elif olds[ip] != nb or (nb["bfd"] and a["bfd"] is None and b["bfd"] is not None):
            bgp += _changed_neighbor(olds[ip], nb, b["bfd"])
    bgp += [f" no neighbor {g} peer-group" for g in sorted(set(a["groups"]) - set(b["groups"]))]
    af = [f"  no network {n}" for n in sorted(set(a["networks"]) - set(b["networks"]))]
    af += [f"  network {n}" for n in sorted(set(b["networks"]) - set(a["networks"]))]
    if a["max_paths"] != b["max_paths"]:
        af.append(f"  maximum-paths {b['max_paths']}")
    if af:
        bgp += [" address-family ipv4 unicast", *af, " exit-address-family"]
    if bgp:
        lines += [f"router bgp {b['asn']}", *bgp, "exit"]
    if a["bfd"] and not b["bfd"]:
        lines += ["bfd", f" no profile {a['bfd']['name']}", "exit"]
    return lines
