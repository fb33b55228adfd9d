"""SONiC's `show` output, rendered from the data SONiC's CLI reads (pure functions).

Read from sonic-utilities (show/main.py, show/bgp_common.py, utilities_common/bgp_util.py,
scripts/intfutil): the same tables (python-tabulate's "simple" format), the same lines and their
known quirks (the "Neighbhor" header, peer memory in bytes shown as KiB), so scripts that parse
a SONiC switch's output parse the twin's.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

Cell = str | int | float


def natural_key(text: str) -> list[Any]:
    """natsort's order: digit runs compare as numbers (Ethernet4 < Ethernet128)."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part]


def _is_number(cell: Cell) -> bool:
    if isinstance(cell, bool):
        return False
    if isinstance(cell, int | float):
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_int(cell: Cell) -> bool:
    if isinstance(cell, bool | float):
        return False
    if isinstance(cell, int):
        return True
    try:
        int(cell)
    except ValueError:
        return False
    return True


def _afterpoint(text: str) -> int:
    """Digits after the decimal point (or the exponent's e) of a number; -1 for an integer."""
    if _is_int(text):
        return -1
    point = text.rfind(".")
    point = text.lower().rfind("e") if point < 0 else point
    return len(text) - point - 1 if point >= 0 else -1


def _column(cells: Sequence[Cell]) -> tuple[list[str], bool]:
    """(the cells as text, numeric?) as python-tabulate types a column: all integers, all numbers
    (written with format "g"), else text. Numbers are aligned on their decimal points."""
    numeric = bool(cells) and all(_is_number(x) for x in cells if x != "")
    if not numeric:
        return [str(x) for x in cells], False
    if all(_is_int(x) for x in cells if x != ""):
        return [str(x) for x in cells], True
    texts = [format(float(x), "g") if x != "" else "" for x in cells]
    points = [_afterpoint(t) for t in texts]
    return [t + " " * (max(points) - p) for t, p in zip(texts, points, strict=True)], True


def simple_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], stralign: str = "left") -> str:
    """python-tabulate's `tablefmt="simple"`: columns at least their header plus two wide, numbers
    right-aligned on their decimal points, text aligned by `stralign`, two spaces between columns,
    dashes under the header, no spaces at the end of a line."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in headers]
    lines: list[list[str]] = [[] for _ in range(len(rows) + 2)]
    for c, header in enumerate(headers):
        cells, numeric = _column(columns[c])
        width = max([len(header) + 2, *(len(x) for x in cells)])
        right = numeric or stralign == "right"
        lines[0].append(header.rjust(width) if right else header.ljust(width))
        lines[1].append("-" * width)
        for r, cell in enumerate(cells):
            lines[r + 2].append(cell.rjust(width) if right else cell.ljust(width))
    return "\n".join("  ".join(line).rstrip() for line in lines)


# -- show ip bgp summary (utilities_common/bgp_util.py) ----------------------------------------------

BGP_HEADERS = ("Neighbhor", "V", "AS", "MsgRcvd", "MsgSent", "TblVer", "InQ", "OutQ", "Up/Down", "State/PfxRcd",
               "NeighborName")


def neighbor_names(config: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Peer IP -> name, from the CONFIG_DB tables SONiC reads (keys `IP` or `VRF|IP`, default VRF)."""
    names: dict[str, str] = {}
    for table in ("BGP_NEIGHBOR", "BGP_INTERNAL_NEIGHBOR", "BGP_MONITORS", "BGP_VOQ_CHASSIS_NEIGHBOR"):
        for key, row in config.get(table, {}).items():
            vrf, _, ip = key.rpartition("|")
            if vrf in ("", "default"):
                names[ip] = str(row.get("name", "NotAvailable"))
    return names


def bgp_summary(summary: Mapping[str, Any], af: str, names: Mapping[str, str]) -> str:
    """`show ip bgp summary` (af "v4") / `show ipv6 bgp summary` (af "v6") from FRR's
    `show ip bgp vrf default summary json` (its ipv4Unicast / ipv6Unicast member)."""
    peers: list[list[Cell]] = []
    for ip, peer in summary.get("peers", {}).items():
        state = peer.get("state", "")
        peers.append([ip, peer.get("version", 4), peer.get("remoteAs", ""), peer.get("msgRcvd", 0),
                      peer.get("msgSent", 0), peer.get("tableVersion", 0), peer.get("inq", 0), peer.get("outq", 0),
                      peer.get("peerUptime", ""), peer.get("pfxRcd", 0) if state == "Established" else state,
                      names.get(ip, "NotAvailable")])
    peers.sort(key=lambda row: natural_key(" ".join(str(c) for c in row)))
    has_peers = bool(summary.get("peers"))
    lines = [f"\nIP{af} Unicast Summary:",
             f"BGP router identifier {summary.get('routerId', '')}, local AS number "
             f"{summary.get('as', summary.get('localAS', ''))} vrf-id {summary.get('vrfId', 0)}",
             f"BGP table version {summary.get('tableVersion', 0)}",
             f"RIB entries {summary.get('ribCount', 0) if has_peers else 0}, using "
             f"{summary.get('ribMemory', 0) if has_peers else 0} bytes of memory",
             f"Peers {summary.get('peerCount', 0) if has_peers else 0}, using "
             f"{summary.get('peerMemory', 0) if has_peers else 0} KiB of memory",
             f"Peer groups {summary.get('peerGroupCount', 0) if has_peers else 0}, using "
             f"{summary.get('peerGroupMemory', 0) if has_peers else 0} bytes of memory",
             "\n",
             simple_table(BGP_HEADERS, peers),
             f"\nTotal number of neighbors {len(peers)}"]
    return "\n".join(lines) + "\n"


# -- show ip route (show/bgp_common.py) -------------------------------------------------------------

ROUTE_HEADER = ("Codes: K - kernel route, C - connected, S - static, R - RIP,\n"
                "       O - OSPF, I - IS-IS, B - BGP, E - EIGRP, N - NHRP,\n"
                "       T - Table, v - VNC, V - VNC-Direct, A - Babel, D - SHARP,\n"
                "       F - PBR, f - OpenFabric,\n"
                "       > - selected route, * - FIB route, q - queued route, r - rejected route\n\n")
PROTO_CODE = {"system": "X", "kernel": "K", "connected": "C", "static": "S", "rip": "R", "ripng": "R", "ospf": "O",
              "ospf6": "O", "isis": "I", "bgp": "B", "pim": "P", "hsls": "H", "olsr": "o", "babel": "A"}
NH_F_IS_RECURSIVE, NH_F_IS_DUPLICATE = 2, 5


def _status_char(info: Mapping[str, Any], hop: Mapping[str, Any]) -> str:
    if "queued" in info:
        return "q"
    if "failed" in info:
        return "r"
    if "installed" in info:
        flags = int(hop.get("flags", 0))
        return " " if flags & (1 << NH_F_IS_RECURSIVE) or flags & (1 << NH_F_IS_DUPLICATE) else "*"
    return ""


def _distance_metric(info: Mapping[str, Any]) -> str:
    if info.get("protocol") != "connected" or info.get("distance", 0) > 0 or info.get("metric", 0) > 0:
        return f" [{info.get('distance', 0)}/{info.get('metric', 0)}]"
    return ""


def _nexthop(hop: Mapping[str, Any], by_ip: bool) -> str:
    text = ""
    if "ip" in hop:
        text = f"  * {hop['ip']}" if by_ip else f" via {hop['ip']},"
        if "interfaceName" in hop:
            text += f", via {hop['interfaceName']}" if by_ip else f" {hop['interfaceName']},"
    elif "directlyConnected" in hop:
        text = " is directly connected,"
        if "interfaceName" in hop:
            text += f" {hop['interfaceName']},"
    elif "unreachable" in hop:
        if "reject" in hop:
            text = " (ICMP unreachable)"
        elif "admin-prohibited" in hop:
            text = " (ICMP admin-prohibited)"
        elif "blackhole" in hop:
            text = " (blackhole)"
    if "vrf" in hop:
        text += f"(vrf {hop['vrf']}, {hop.get('interfaceName', '')},"
    if "active" not in hop:
        text += " inactive"
    if "recursive" in hop:
        text += " (recursive)"
    if "onLink" in hop:
        text += " onlink"
    if "source" in hop:
        text += f", src {hop['source']}"
    if "labels" in hop:
        text += ", label " + "/".join(str(label) for label in hop["labels"])
    return text


def ip_routes(routes: Mapping[str, Sequence[Mapping[str, Any]]], by_ip: bool) -> str:
    """FRR's `show ip route [PREFIX] json` as SONiC's `show ip route` prints it: the codes header and
    one line per next hop, or "Routing entry for" blocks when the user named an address or prefix."""
    if not routes:
        return ""
    out: list[str] = []
    for _, infos in sorted(routes.items(), key=lambda item: ipaddress.ip_interface(item[0]).ip):
        for info in infos:
            hops = info.get("nexthops", [])
            if by_ip:
                out.append(f"Routing entry for {info.get('prefix', '')}")
                line = f'  Known via "{info.get("protocol")}", distance {info.get("distance")}, ' \
                       f'metric {info.get("metric")}'
                out.append(line + (", best" if "selected" in info else ""))
                out.append(f"  Last update {info.get('uptime')} ago")
                for hop in hops:
                    if "directlyConnected" in hop:
                        out.append(f"  * directly connected, {hop.get('interfaceName')}\n")
                    else:
                        out.append(_nexthop(hop, True))
                out.append("")
                continue
            head = PROTO_CODE.get(str(info.get("protocol")), "?")
            if "instance" in info:
                head += f"[{info['instance']}]"
            head += ">" if "selected" in info else " "
            width = 0
            for j, hop in enumerate(hops):
                line = head if j == 0 else "  "
                line += _status_char(info, hop)
                if j == 0:
                    line += str(info.get("prefix", "")) + _distance_metric(info)
                    width = len(line)
                else:
                    line += " " * (width - 3)
                out.append(line + _nexthop(hop, False) + f" {info.get('uptime')}")
    return ("" if by_ip else ROUTE_HEADER) + "\n".join(out) + "\n"


def routes_json(routes: Mapping[str, Any]) -> str:
    return json.dumps(routes, sort_keys=True, indent=4) + "\n"


# -- show interfaces status (scripts/intfutil) -------------------------------------------------------

INTF_HEADERS = ("Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC")


def speed_text(speed: str) -> str:
    """intfutil's port_speed_parse: Mb/s -> "400G", "2.5G", "100M" (or "N/A")."""
    if not speed.isdigit():
        return "N/A"
    mbps = int(speed)
    if mbps < 1000:
        return f"{mbps}M"
    return f"{mbps / 1000:.1f}G" if mbps % 1000 >= 100 else f"{mbps / 1000:.0f}G"


def vlan_mode(config: Mapping[str, Mapping[str, Any]], port: str) -> str:
    """intfutil's Vlan column: PORT mode, else trunk for a VLAN member, else routed."""
    mode = config.get("PORT", {}).get(port, {}).get("mode")
    if mode:
        return str(mode)
    members = {key.split("|")[-1] for key in config.get("VLAN_MEMBER", {})}
    return "trunk" if port in members else "routed"


def interfaces_status(config: Mapping[str, Mapping[str, Any]], appl: Mapping[str, Mapping[str, Any]],
                      only: str | None = None) -> str:
    """One row per PORT: lanes, speed, MTU, FEC, alias from CONFIG_DB; oper, admin, MTU from APPL_DB
    PORT_TABLE (what portsyncd/portmgrd published), as intfutil reads them."""
    ports = config.get("PORT", {})
    rows: list[list[Cell]] = []
    for port in sorted(ports, key=natural_key):
        if only is not None and port != only:
            continue
        cfg, live = ports[port], appl.get(port, {})
        rows.append([port, str(cfg.get("lanes", "N/A")), speed_text(str(live.get("speed", cfg.get("speed", "")))),
                     str(live.get("mtu", cfg.get("mtu", "N/A"))), str(live.get("fec", cfg.get("fec", "N/A"))),
                     str(cfg.get("alias", "N/A")), vlan_mode(config, port),
                     str(live.get("oper_status", "down")),
                     str(live.get("admin_status", cfg.get("admin_status", "down"))),
                     "N/A", "N/A"])
    return simple_table(INTF_HEADERS, rows, stralign="right") + "\n"


FLAP_HEADERS = ("Interface", "Flap Count", "Admin", "Oper", "Link Down TimeStamp(UTC)", "Link Up TimeStamp(UTC)")


def interfaces_flap(ports: Sequence[str], appl: Mapping[str, Mapping[str, Any]], only: str | None = None) -> str:
    """`show interfaces flap` (show/interfaces/__init__.py, 202505): per port of CONFIG_DB, APPL_DB
    PORT_TABLE's flap_count and times ('Never' when portsorch wrote none) and its admin and oper status."""
    rows: list[list[Cell]] = []
    for port in sorted(ports if only is None else [only], key=natural_key):
        live = appl.get(port, {})
        rows.append([port, str(live.get("flap_count", "Never")), str(live.get("admin_status", "Unknown")).capitalize(),
                     str(live.get("oper_status", "Unknown")).capitalize(), str(live.get("last_down_time", "Never")),
                     str(live.get("last_up_time", "Never"))])
    return simple_table(FLAP_HEADERS, rows)


# -- show runningconfiguration all (show/main.py via sonic-cfggen -d --print-data) ------------------

def natsorted_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """sonic-cfggen's --print-data order: tables and keys in natural order, fields too."""
    def sort(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: sort(value[k]) for k in sorted(value, key=natural_key)}
        return value
    sorted_config: dict[str, Any] = sort(config)
    return sorted_config


def running_configuration(config: Mapping[str, Any], bgpraw: str) -> str:
    """CONFIG_DB as `sonic-cfggen -d --print-data` prints it, plus FRR's running config as `bgpraw`."""
    doc = natsorted_config(config)
    doc["bgpraw"] = bgpraw
    return json.dumps(doc, indent=4) + "\n"


# -- show version (show/main.py) ---------------------------------------------------------------------

def version(info: Mapping[str, str]) -> str:
    """`show version`: `info` holds build_version, debian_version, kernel, commit, build_date, built_by,
    platform, hwsku, asic_type, serial, model, uptime, date."""
    return (f"\nSONiC Software Version: SONiC.{info['build_version']}\n"
            f"SONiC OS Version: {info.get('sonic_os_version', '12')}\n"
            f"Distribution: Debian {info['debian_version']}\n"
            f"Kernel: {info['kernel']}\n"
            f"Build commit: {info['commit']}\n"
            f"Build date: {info['build_date']}\n"
            f"Built by: {info['built_by']}\n"
            f"\nPlatform: {info['platform']}\n"
            f"HwSKU: {info['hwsku']}\n"
            f"ASIC: {info['asic_type']}\n"
            f"ASIC Count: 1\n"
            f"Serial Number: {info['serial']}\n"
            f"Model Number: {info['model']}\n"
            f"Hardware Revision: N/A\n"
            f"Uptime: {info['uptime']}\n"
            f"Date: {info['date']}\n"
            f"\nDocker images:\n"
            f"REPOSITORY   TAG   IMAGE ID   SIZE\n\n")
