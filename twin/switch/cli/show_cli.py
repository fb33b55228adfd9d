"""SONiC's `show` command on a twin switch (sonic-utilities show/main.py, read, not copied).

Abbreviations resolve as click's AliasedGroup resolves them (`show int status`, `show ip bgp sum`).
What SONiC answers from FRR goes to FRR the way SONiC sends it (`show ip bgp neighbors IP` is
`show ip bgp vrf default neighbor IP`); what SONiC formats itself (bgp summary, ip route, interfaces
status) is formatted here from the same data. SONiC commands the twin has no data for say so.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from twin import __version__
from twin.switch.cli import counters_cli, show_format
from twin.switch.cli.cli_output import Output, group_usage, not_emulated, resolve, subcommand, usage_error
from twin.switch.cli.switch_view import SwitchData, vtysh_json
from twin.switch.cli.system_cli import run_uptime, uptime_line
from twin.switch.cli.vtysh_guard import VtyshRefused
from twin.switch.system_files import uptime_seconds

SHOW = ("aaa", "acl", "arp", "asic-sdk-health-event", "banner", "bfd", "bmp", "boot", "buffer", "buffer_pool",
        "chassis", "clock", "copp", "dns", "dropcounters", "ecn", "environment", "event-counters", "evpn", "fabric",
        "feature", "fgnhg", "flowcnt-route", "flowcnt-trap", "headroom-pool", "icmp", "interfaces", "ip", "ipv6",
        "kdump", "kubernetes", "line", "lldp", "logging", "management_interface", "mgmt-vrf", "mirror_session",
        "mmu", "muxcable", "nat", "ndp", "ntp", "p4-table", "pfc", "pfcwd", "platform", "policer", "priority-group",
        "processes", "queue", "radius", "reboot-cause", "route-map", "runningconfiguration", "serial_console",
        "services", "sflow", "snmpagentaddress", "snmptrap", "spanning-tree", "srv6", "ssh", "startupconfiguration",
        "static-anycast-gateway", "storm-control", "subinterfaces", "suppress-fib-pending", "switch",
        "switch-fast-linkup", "system-health", "system-memory", "tacacs", "techsupport", "uptime", "users",
        "version", "vlan", "vnet", "vrf", "vrrp", "vrrp6", "vxlan", "warm_restart", "watermark", "ztp")
INTERFACES = ("alias", "autoneg", "breakout", "counters", "description", "dhcp-mitigation-rate", "fast-linkup", "fec",
              "flap", "link-training", "naming_mode", "neighbor", "phy-serdes", "phy-signal", "status", "switchport",
              "tpid", "transceiver")
IP = ("bgp", "fib", "interfaces", "prefix-list", "protocol", "route")
IPV6 = ("bgp", "fib", "interfaces", "link-local-mode", "prefix-list", "protocol", "route")
BGP = ("aggregate-address", "neighbors", "network", "summary", "vrf")
RUNNING = ("acl", "all", "bgp", "interfaces", "mclag", "mgmt-vrf", "ntp", "ports", "snmp", "syslog")
QUEUE = ("counters", "persistent-watermark", "watermark", "wredcounters")
PFC = ("asymmetric", "counters", "priority")
NEIGHBOR_INFO = ("routes", "advertised-routes", "received-routes")
NETWORK_INFO = ("bestpath", "json", "longer-prefixes", "multipath")
IGNORED_OPTIONS = ("--verbose",)
VALUED_OPTIONS = ("-n", "--namespace", "-d", "--display")


def _split(args: Sequence[str]) -> list[str]:
    """The arguments without the options single-ASIC SONiC accepts and ignores here."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in IGNORED_OPTIONS:
            continue
        elif arg in VALUED_OPTIONS:
            skip = True
        else:
            out.append(arg)
    return out


def run_show(data: SwitchData, args: Sequence[str]) -> Output:
    """`show ARGS` on the switch `data` describes."""
    if not args or args[0] in ("-h", "--help", "-?"):
        return Output(out=_help())
    name = resolve(args[0], SHOW, group_usage("show"))
    if isinstance(name, Output):
        return name
    rest = list(args[1:])
    handlers: dict[str, Callable[[SwitchData, list[str]], Output]] = {
        "version": _version, "interfaces": _interfaces, "ip": lambda d, a: _ip(d, a, "ip"),
        "ipv6": lambda d, a: _ip(d, a, "ipv6"), "runningconfiguration": _running, "uptime": _uptime,
        "clock": _clock, "route-map": _route_map, "queue": _queue, "pfc": _pfc}
    if name not in handlers:
        return not_emulated(f"show {name}")
    try:
        return handlers[name](data, rest)
    except VtyshRefused as exc:
        return Output(err=f"Error: {exc}\n", status=1)


def _help() -> str:
    return ("Usage: show [OPTIONS] COMMAND [ARGS]...\n\n  SONiC command line - 'show' command\n\n"
            "Options:\n  -h, -?, --help  Show this message and exit.\n\nCommands (emulated by twin):\n"
            "  clock                 Show date and time\n"
            "  interfaces            Show details of the network interfaces\n"
            "  ip                    Show IP (IPv4) commands\n"
            "  ipv6                  Show IPv6 commands\n"
            "  pfc                   Show details of the priority-flow-control (pfc)\n"
            "  queue                 Show details of the queues\n"
            "  route-map             show route-map\n"
            "  runningconfiguration  Show current running configuration information\n"
            "  uptime                Show system uptime\n"
            "  version               Show version information\n")


def _version(data: SwitchData, args: list[str]) -> Output:
    meta = data.config().get("DEVICE_METADATA", {}).get("localhost", {})
    try:
        debian = Path("/etc/debian_version").read_text().strip()
    except OSError:
        debian = "N/A"
    now = datetime.datetime.now()
    return Output(out=show_format.version({
        "build_version": f"twin-{__version__}", "debian_version": debian, "kernel": platform.release(),
        "commit": "twin", "build_date": "N/A", "built_by": "twin",
        "platform": meta.get("platform", "x86_64-kvm_x86_64-r0"),
        "hwsku": meta.get("hwsku", "N/A"), "asic_type": "vs", "serial": f"twin-{data.name}", "model": "twin",
        "uptime": uptime_line(uptime_seconds(data.rundir)), "date": now.strftime("%a %d %b %Y %X")}))


def _uptime(data: SwitchData, args: list[str]) -> Output:
    """`show uptime`: `uptime -p` of the switch (counted from its own boot, twin.switch.system_files)."""
    return run_uptime(["-p"], data.rundir)


def _clock(data: SwitchData, args: list[str]) -> Output:
    return Output(out=time.strftime("%a %b %d %I:%M:%S %p %Z %Y") + "\n")


def _route_map(data: SwitchData, args: list[str]) -> Output:
    args = _split(args)
    if len(args) > 1:
        return usage_error("show route-map [OPTIONS] [ROUTE_MAP_NAME]", f"Got unexpected extra argument ({args[1]})")
    return Output(out=data.vtysh(" ".join(["show route-map", *args])))


def _interfaces(data: SwitchData, args: list[str]) -> Output:
    sub = subcommand("show interfaces", args, INTERFACES)
    if isinstance(sub, Output):
        return sub
    if sub == "counters":
        return counters_cli.show_interfaces_counters(data, args[1:])
    rest = _split(args[1:])
    if sub == "flap":
        return _flap(data, rest)
    if sub not in ("status", "description"):
        return not_emulated(f"show interfaces {sub}")
    if len(rest) > 1:
        return usage_error(f"show interfaces {sub} [OPTIONS] [INTERFACENAME]",
                           f"Got unexpected extra argument ({rest[1]})")
    config = data.config()
    only = rest[0] if rest else None
    if only is not None and only not in config.get("PORT", {}):
        return Output(err=f"Error: Invalid interface name {only}\n", status=1) if sub == "description" else \
            Output(out=show_format.simple_table(show_format.INTF_HEADERS, [], stralign="right") + "\n")
    appl = data.appl_table("PORT_TABLE")
    if sub == "status":
        return Output(out=show_format.interfaces_status(config, appl, only))
    rows: list[list[show_format.Cell]] = []
    for port in sorted(config.get("PORT", {}), key=show_format.natural_key):
        if only is None or port == only:
            cfg, live = config["PORT"][port], appl.get(port, {})
            admin = live.get("admin_status", cfg.get("admin_status", "down"))
            rows.append([port, live.get("oper_status", "down"), admin, cfg.get("alias", port),
                         cfg.get("description", "N/A")])
    return Output(out=show_format.simple_table(("Interface", "Oper", "Admin", "Alias", "Description"), rows) + "\n")


def _flap(data: SwitchData, rest: list[str]) -> Output:
    """`show interfaces flap [INTERFACENAME]` (202505): portsorch's flap counts and times from APPL_DB."""
    usage = "show interfaces flap [OPTIONS] [INTERFACENAME]"
    if len(rest) > 1:
        return usage_error(usage, f"Got unexpected extra argument ({rest[1]})")
    ports = data.config().get("PORT", {})
    if rest and rest[0] not in ports:
        return usage_error(usage, f"Invalid interface name {rest[0]}")
    return Output(out=show_format.interfaces_flap(list(ports), data.appl_table("PORT_TABLE"),
                                                  rest[0] if rest else None) + "\n")


def _queue(data: SwitchData, args: list[str]) -> Output:
    sub = subcommand("show queue", args, QUEUE)
    if isinstance(sub, Output):
        return sub
    if sub != "counters":
        return not_emulated(f"show queue {sub}")
    return counters_cli.show_queue_counters(data, args[1:])


def _pfc(data: SwitchData, args: list[str]) -> Output:
    sub = subcommand("show pfc", args, PFC)
    if isinstance(sub, Output):
        return sub
    if sub != "counters":
        return not_emulated(f"show pfc {sub}")
    return counters_cli.show_pfc_counters(data, args[1:])


def _ip(data: SwitchData, args: list[str], ipver: str) -> Output:
    names = IP if ipver == "ip" else IPV6
    sub = subcommand(f"show {ipver}", args, names)
    if isinstance(sub, Output):
        return sub
    rest = args[1:]
    if sub == "bgp":
        return _bgp(data, rest, ipver)
    if sub == "route":
        return _route(data, _split(rest), ipver)
    if sub == "protocol":
        return Output(out=data.vtysh(f"show {ipver} protocol"))
    if sub == "prefix-list":
        rest = _split(rest)
        return Output(out=data.vtysh(" ".join([f"show {ipver} prefix-list", *rest[:1]])))
    return not_emulated(f"show {ipver} {sub}")


def _bgp(data: SwitchData, args: list[str], ipver: str) -> Output:
    sub = subcommand(f"show {ipver} bgp", args, BGP)
    if isinstance(sub, Output):
        return sub
    rest = _split(args[1:])
    if sub == "summary":
        if rest:
            return usage_error(f"show {ipver} bgp summary [OPTIONS]", f"Got unexpected extra argument ({rest[0]})")
        v4 = ipver == "ip"
        doc = vtysh_json(data, "show ip bgp vrf default summary json" if v4
                         else "show bgp vrf default ipv6 summary json")
        key = "ipv4Unicast" if v4 else "ipv6Unicast"
        summary = doc.get(key) if isinstance(doc.get(key), dict) else None
        if summary is None:
            summary = vtysh_json(data, "show ip bgp vrf default json" if v4 else "show bgp vrf default ipv6 json")
            summary = {"routerId": summary.get("routerId", ""), "vrfId": summary.get("vrfId", 0),
                       "localAS": summary.get("localAS", ""), "tableVersion": summary.get("tableVersion", 0)}
        names = show_format.neighbor_names(data.config())
        return Output(out=show_format.bgp_summary(summary, "v4" if v4 else "v6", names))
    base = "show ip bgp vrf default" if ipver == "ip" else "show bgp vrf default ipv6"
    if sub == "neighbors":
        line = f"{base} neighbor"
        if rest:
            if not _is_address(rest[0], ipver):
                return usage_error(f"show {ipver} bgp neighbors [OPTIONS] [IPADDRESS] "
                                   "[[routes|advertised-routes|received-routes]]",
                                   f"{rest[0]} is not valid {'ipv4' if ipver == 'ip' else 'ipv6'} address\n")
            line += f" {rest[0]}"
            if len(rest) > 1:
                if rest[1] not in NEIGHBOR_INFO:
                    return usage_error(f"show {ipver} bgp neighbors [OPTIONS] [IPADDRESS] [INFO_TYPE]",
                                       f"Invalid value for '[INFO_TYPE]': '{rest[1]}' is not one of "
                                       f"{', '.join(repr(i) for i in NEIGHBOR_INFO)}.")
                line += f" {rest[1]}"
        return Output(out=data.vtysh(line).rstrip("\n") + "\n")
    if sub == "network":
        line = base
        if rest:
            line += f" {rest[0]}"
            if len(rest) > 1:
                if rest[1] not in NETWORK_INFO:
                    return usage_error(f"show {ipver} bgp network [OPTIONS] [<ipv4-address>|<ipv4-prefix>] "
                                       "[bestpath|json|longer-prefixes|multipath]",
                                       f"Invalid value for '[bestpath|json|longer-prefixes|multipath]': "
                                       f"'{rest[1]}' is not one of {', '.join(repr(i) for i in NETWORK_INFO)}.")
                line += f" {rest[1]}"
        return Output(out=data.vtysh(line).rstrip("\n") + "\n")
    return not_emulated(f"show {ipver} bgp {sub}")


def _is_address(text: str, ipver: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.version == (4 if ipver == "ip" else 6)


def _route(data: SwitchData, args: list[str], ipver: str) -> Output:
    """show/bgp_common.py show_routes, single ASIC."""
    found_json = "json" in args
    by_ip = False
    other = False
    for arg in args:
        if arg == "json":
            continue
        try:
            ipaddress.ip_network(arg)
            by_ip = True
        except ValueError:
            other = True
    words = [a for a in args if a != "json"]
    line = " ".join([f"show {ipver} route", *words, "json" if found_json or not other else ""]).strip()
    output = data.vtysh(line)
    if output == "":
        return Output()
    if output.startswith("%"):
        return Output(out=output.removesuffix("json\n") if output.endswith("json\n") else output)
    if other and not found_json:
        return Output(out=f":\n{output}\n")
    try:
        routes = json.loads(output)
    except json.JSONDecodeError:
        return Output(out=output)
    if found_json:
        return Output(out=show_format.routes_json(routes))
    return Output(out=show_format.ip_routes(routes, by_ip))


def _running(data: SwitchData, args: list[str]) -> Output:
    sub = subcommand("show runningconfiguration", args, RUNNING)
    if isinstance(sub, Output):
        return sub
    rest = _split(args[1:])
    if sub == "all":
        return Output(out=show_format.running_configuration(data.config(), data.vtysh("show running-config")))
    if sub == "bgp":
        return Output(out=data.vtysh("show running-config bgp") + "\n")
    if sub in ("ports", "interfaces"):
        table = "PORT" if sub == "ports" else "INTERFACE"
        rows = show_format.natsorted_config(data.config().get(table, {}))
        if rest:
            if rest[0] not in rows:
                return Output(err=f"Error: key {rest[0]} not found in {table}\n", status=1)
            return Output(out=json.dumps(rows[rest[0]], indent=4) + "\n")
        return Output(out=json.dumps(rows, indent=4) + "\n")
    return not_emulated(f"show runningconfiguration {sub}")
