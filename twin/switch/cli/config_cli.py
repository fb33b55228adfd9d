"""SONiC's `config` command on a twin switch (sonic-utilities config/main.py, read, not copied).

Every change goes into CONFIG_DB, the way SONiC's config writes it, and the switch's config daemons
program FRR and the kernel from there:

- `config interface startup|shutdown PORT[,PORT|range]`: PORT|<port> admin_status up|down
- `config interface mtu PORT MTU`: PORT|<port> mtu (portconfig -m)
- `config bgp startup|shutdown all|neighbor <ip|name>`: BGP_NEIGHBOR|<ip> admin_status up|down (twin's
  keys are `default|<ip>`, frrcfgd's; an address finds either)
- `config save|load|reload [-y] [FILE]`: CONFIG_DB to/from FILE, a file of the switch's own directory
  (twin.switch.cli.cli_paths), asking as SONiC asks unless -y. `reload` restarts the switch's services
  around it as SONiC's does (twin.switch.restart.config_reload: ports down and up, FRR rendered afresh
  from the new CONFIG_DB), unless -n (--no_service_restart): then the config daemons program the difference.
- `config load_minigraph`: not emulated (a twin switch has no minigraph); it fails, saying how to load
  one's CONFIG_DB instead.

`parse_config` is pure: it checks the words and says what to do and what to ask first;
`execute` does it against the switch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from twin.stages.configdb import ConfigDb
from twin.switch.cli import cli_paths
from twin.switch.cli.cli_output import Output, group_usage, not_emulated, resolve, subcommand, usage_error
from twin.switch.cli.cli_paths import PathRefused, SwitchFile
from twin.switch.cli.sonic_cli import merged
from twin.switch.cli.switch_view import SwitchData
from twin.switch.redis.sonic_redis import as_stored

CONFIG = ("aaa", "acl", "apply-patch", "asic_sdk_health_event", "banner", "bgp", "bmc", "bmp", "buffer", "cbf",
          "chassis", "checkpoint", "clock", "console", "delete-checkpoint", "dns", "dropcounters", "ecn", "evpn_mh",
          "fabric", "feature", "flowcnt-route", "hft", "hostname", "interface", "interface_naming_mode", "kdump",
          "kubernetes", "list-checkpoints", "liquid_cool", "llr", "load", "load_mgmt_config", "load_minigraph",
          "loopback", "mclag", "mclag_member", "mclag_unique_ip", "mirror_session", "muxcable", "nat", "ntp",
          "override-config-table", "pfcwd", "platform", "portchannel", "qos", "radius", "rate", "reload", "replace",
          "rollback", "route", "save", "sed", "serial_console", "sflow", "snmp", "snmpagentaddress", "snmptrap",
          "spanning_tree", "ssh", "static-anycast-gateway", "suppress-fib-pending", "switch-fast-linkup",
          "switchport", "synchronous_mode", "syslog", "tacacs", "vlan", "vnet", "vrf", "vxlan", "warm_restart",
          "watermark", "yang_config_validation", "ztp")
INTERFACE = ("advertised-speeds", "advertised-types", "autoneg", "breakout", "buffer", "description",
             "dhcp-mitigation-rate", "fast-linkup", "fec", "ip", "ipv6", "link-training", "mpls", "mtu", "pfc",
             "shutdown", "speed", "startup", "storm-control", "sys-mac", "tpid", "transceiver", "type", "vrf", "vrrp")
BGP = ("aggregate-address", "device-global", "remove", "shutdown", "startup")
BGP_TARGETS = ("all", "neighbor")
FILE_ACTIONS = ("save", "load", "reload")
RANGE = re.compile(r"^([A-Za-z]+)(\d+)-(\d+)$")
CFGGEN = "/usr/local/bin/sonic-cfggen"
MINIGRAPH = ("config load_minigraph: not emulated: a twin switch has no minigraph (/etc/sonic/minigraph.xml) "
             "and no sonic-cfggen to turn one into CONFIG_DB; nothing was changed. Convert it where "
             "sonic-config-engine is installed (sonic-cfggen -H -m minigraph.xml --print-data > config_db.json) "
             "and load that: copy it into this switch's /etc/sonic (on the host /run/twin/LAB/nodes/SWITCH) and "
             "run 'sudo config reload /etc/sonic/config_db.json'\n")
LOCKED, RELEASED = "Acquired lock on /etc/sonic/reload.lock\n", "Released lock on /etc/sonic/reload.lock\n"


@dataclass(frozen=True)
class ConfigRequest:
    """One checked `config` command: what to change, and the question SONiC asks first (None: -y)."""

    action: str                       # interface-admin, interface-mtu, bgp-admin, save, load, reload
    target: str | None = None         # ports, neighbor, mtu value, or file name as given
    value: str = ""                   # admin status up/down, mtu
    question: str | None = None
    restart: bool = True              # reload: services restarted around it (not -n/--no_service_restart)


def parse_config(args: Sequence[str]) -> ConfigRequest | Output:
    """`config ARGS` checked (an Output: click's error, or the help)."""
    if not args or args[0] in ("-h", "--help", "-?"):
        return Output(out=_help())
    name = resolve(args[0], CONFIG, group_usage("config"), shortest_wins=True)
    if isinstance(name, Output):
        return name
    rest = list(args[1:])
    if name == "interface":
        return _interface(rest)
    if name == "bgp":
        return _bgp(rest)
    if name in FILE_ACTIONS:
        return _file_action(name, rest)
    if name == "load_minigraph":
        return Output(err=MINIGRAPH, status=1)
    return not_emulated(f"config {name}")


def _help() -> str:
    return ("Usage: config [OPTIONS] COMMAND [ARGS]...\n\n  SONiC command line - 'config' command\n\n"
            "Options:\n  -h, -?, --help  Show this message and exit.\n\nCommands (emulated by twin):\n"
            "  bgp        BGP-related configuration tasks (startup|shutdown all|neighbor)\n"
            "  interface  Interface-related configuration tasks (startup|shutdown|mtu)\n"
            "  load       Import a previous saved config DB dump file.\n"
            "  reload     Clear current configuration and import a previous saved config DB dump file.\n"
            "  save       Export current config DB to a file on disk.\n")


def _interface(args: list[str]) -> ConfigRequest | Output:
    sub = subcommand("config interface", args, INTERFACE, shortest_wins=True)
    if isinstance(sub, Output):
        return sub
    rest = [a for a in args[1:] if a not in ("-v", "--verbose")]
    if sub in ("startup", "shutdown"):
        cmd_usage = f"config interface {sub} [OPTIONS] <interface_name>"
        if not rest:
            return usage_error(cmd_usage, "Missing argument '<interface_name>'.")
        if len(rest) > 1:
            return usage_error(cmd_usage, f"Got unexpected extra argument ({rest[1]})")
        return ConfigRequest("interface-admin", rest[0], "up" if sub == "startup" else "down")
    if sub == "mtu":
        cmd_usage = "config interface mtu [OPTIONS] <interface_name> <interface_mtu>"
        if len(rest) < 2:
            return usage_error(cmd_usage, "Missing argument '<interface_mtu>'." if rest
                               else "Missing argument '<interface_name>'.")
        try:  # click.INT: int() of the word, stored as that number's ASCII digits
            mtu = int(rest[1])
        except ValueError:
            return usage_error(cmd_usage, f"Invalid value for '<interface_mtu>': '{rest[1]}' is not a valid integer.")
        return ConfigRequest("interface-mtu", rest[0], str(mtu))
    return not_emulated(f"config interface {sub}")


def _bgp(args: list[str]) -> ConfigRequest | Output:
    sub = subcommand("config bgp", args, BGP, shortest_wins=True)
    if isinstance(sub, Output):
        return sub
    if sub not in ("startup", "shutdown"):
        return not_emulated(f"config bgp {sub}")
    rest = [a for a in args[1:] if a not in ("-v", "--verbose")]
    target = subcommand(f"config bgp {sub}", rest, BGP_TARGETS, shortest_wins=True)
    if isinstance(target, Output):
        return target
    status = "up" if sub == "startup" else "down"
    if target == "all":
        if len(rest) > 1:
            return usage_error(f"config bgp {sub} all [OPTIONS]", f"Got unexpected extra argument ({rest[1]})")
        return ConfigRequest("bgp-admin", None, status)
    cmd_usage = f"config bgp {sub} neighbor [OPTIONS] <ipaddr_or_hostname>"
    if len(rest) < 2:
        return usage_error(cmd_usage, "Missing argument '<ipaddr_or_hostname>'.")
    if len(rest) > 2:
        return usage_error(cmd_usage, f"Got unexpected extra argument ({rest[2]})")
    return ConfigRequest("bgp-admin", rest[1], status)


def _file_action(name: str, args: list[str]) -> ConfigRequest | Output:
    yes = False
    restart = True
    files: list[str] = []
    flags = {"-y", "--yes"} | ({"-f", "--force", "-n", "--no_service_restart", "-l", "--load-sysinfo", "-b",
                                "--bypass-lock"} if name == "reload" else set())
    for arg in args:
        if arg in ("-y", "--yes"):
            yes = True
        elif name == "reload" and arg in ("-n", "--no_service_restart"):
            restart = False
        elif arg in flags:
            continue
        elif arg.startswith("-"):
            return usage_error(f"config {name} [OPTIONS] [FILENAME]", f"No such option: {arg}")
        else:
            files.append(arg)
    if len(files) > 1:
        return usage_error(f"config {name} [OPTIONS] [FILENAME]", f"Got unexpected extra argument ({files[1]})")
    given = files[0] if files else None
    if given is not None and len([f for f in given.split(",") if f.strip()]) != 1:
        return Output(out="Input 1 config file(s) separated by comma for multiple files \n")
    question = None
    if not yes:
        question = {"save": "Existing files will be overwritten, continue?",
                    "load": "Load config from the default config file(s) ?" if given is None
                    else f"Load config from the file(s) {given} ?",
                    "reload": "Clear current config and reload config in config_db format from the default config "
                              "file(s) ?" if given is None else
                              f"Clear current config and reload config in config_db from the file(s) {given} ?"}[name]
    return ConfigRequest(name, given, question=question, restart=restart)


# -- doing it -------------------------------------------------------------------------------------

def execute(data: SwitchData, request: ConfigRequest, user: str = "admin") -> Output:
    """Carry out a checked request on the switch."""
    if request.action == "interface-admin":
        return _set_admin(data, request.target or "", request.value)
    if request.action == "interface-mtu":
        return _set_mtu(data, request.target or "", request.value)
    if request.action == "bgp-admin":
        return _bgp_admin(data, request.target, request.value)
    try:
        file = cli_paths.switch_file(data.rundir, request.target, user)
    except PathRefused as exc:
        return Output(err=f"Error: {exc}\n", status=1)
    if request.action == "save":
        return _save(data, file)
    return _load(data, file, request.action, request.restart)


def interface_names(spec: str) -> list[str]:
    """utilities_common.cli.parse_interface_in_filter: `Ethernet0,Ethernet4` and `Ethernet0-8`."""
    names: list[str] = []
    for part in spec.split(","):
        match = RANGE.match(part)
        if match:
            prefix, lo, hi = match.group(1), int(match.group(2)), int(match.group(3))
            names += [f"{prefix}{n}" for n in range(lo, hi + 1)]
        elif part:
            names.append(part)
    return names


def _set_admin(data: SwitchData, spec: str, status: str) -> Output:
    config = data.config()
    names = interface_names(spec)
    verb = "startup" if status == "up" else "shutdown"
    tables = ("PORT", "PORTCHANNEL", "VLAN_SUB_INTERFACE", "LOOPBACK_INTERFACE")
    if len(names) == 1 and not any(names[0] in config.get(t, {}) for t in tables):
        return usage_error(f"config interface {verb} [OPTIONS] <interface_name>",
                           "Interface name is invalid. Please enter a valid interface name!!")
    for table in tables:
        for name in config.get(table, {}):
            if name in names:
                data.mod_entry(table, name, {"admin_status": status})
    return Output()


def _set_mtu(data: SwitchData, port: str, mtu: str) -> Output:
    config = data.config()
    usage = "config interface mtu [OPTIONS] <interface_name> <interface_mtu>"
    if port not in config.get("PORT", {}):
        return usage_error(usage, "Interface name is invalid. Please enter a valid interface name!!")
    if not 68 <= int(mtu) <= 9216:
        return Output(out=f"Invalid MTU {mtu}: must be between 68 and 9216\n", status=1)
    data.mod_entry("PORT", port, {"mtu": mtu})
    return Output()


def neighbor_keys(config: ConfigDb, target: str) -> list[str]:
    """BGP_NEIGHBOR keys of `target`: the address (as `IP` or `default|IP`), else the neighbor name."""
    rows = config.get("BGP_NEIGHBOR", {})
    address = target.lower()
    by_ip = [k for k in rows if k == address or k == f"default|{address}"]
    return by_ip or [k for k, row in rows.items() if row.get("name") == target]


def _bgp_admin(data: SwitchData, target: str | None, status: str) -> Output:
    config = data.config()
    keys = list(config.get("BGP_NEIGHBOR", {})) if target is None else neighbor_keys(config, target)
    verb = "startup" if status == "up" else "shutdown"
    if target is not None and not keys:
        return usage_error(f"config bgp {verb} neighbor [OPTIONS] <ipaddr_or_hostname>",
                           f"Could not locate neighbor '{target}'")
    out = []
    for key in keys:
        out.append(f"{'Starting' if status == 'up' else 'Shutting'} {status} BGP session with neighbor "
                   f"{key.rpartition('|')[2]}...\n")
        data.mod_entry("BGP_NEIGHBOR", key, {"admin_status": status})
    return Output(out="".join(out))


def _save(data: SwitchData, file: SwitchFile) -> Output:
    shown = f"Running command: {CFGGEN} -d --print-data > {file.shown}\n"
    try:
        cli_paths.write_config(file, data.config())
    except OSError as exc:
        return Output(out=shown, err=f"Error: cannot write {file.shown}: {exc.strerror}\n", status=1)
    return Output(out=shown)


def _load(data: SwitchData, file: SwitchFile, action: str, restart: bool = True) -> Output:
    if not cli_paths.exists(file):
        if action == "load":
            return Output(out=f"The config_db file {file.shown} doesn't exist\n")
        return Output(out=f"The config file {file.shown} doesn't exist\nAborted!\n", status=1)
    try:
        new = as_stored(cli_paths.read_config(file))
    except (OSError, ValueError, AttributeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Output(err=f"Error: cannot read {file.shown}: {why}\n", status=1)
    current = data.config()
    written = f"Running command: {CFGGEN} -j {file.shown} --write-to-db\n"
    if action == "load":
        data.replace_config(current, merged(current, new))
        return Output(out=written)
    if not restart:
        data.replace_config(current, new)
        return Output(out=f"{LOCKED}{written}{RELEASED}")
    data.reload_config(new)   # sonic.target stopped, CONFIG_DB flushed and written, sonic.target restarted
    return Output(out=f"{LOCKED}Stopping SONiC target ...\n{written}Restarting SONiC target ...\n{RELEASED}")
