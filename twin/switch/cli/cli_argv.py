"""The Linux tools of the switch's SSH shell as fixed argv with checked arguments.

`ping`, `traceroute` and `ip` run inside the switch's network namespace, `redis-cli` against the
switch's own redis socket. Only the options listed here pass (none reads or writes a file by name,
floods, or reaches another namespace or server); each value is checked. Anything else is refused
with ArgvRefused, whose message the shell prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from twin.switch.cli.redis_guard import redis_refusal, unquote_c_string

Check = Callable[[str], bool]
HOST = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:%-]{0,252}$")
IFACE = re.compile(r"^[A-Za-z0-9_.:@-]{1,64}$")
WORD = re.compile(r"^[A-Za-z0-9_.:,/@%+=-]{1,128}$")


class ArgvRefused(ValueError):
    """Arguments the shell does not pass on (the message says why)."""


def _int(lo: int, hi: int) -> Check:
    def check(value: str) -> bool:
        return bool(re.fullmatch(r"-?\d{1,12}", value)) and lo <= int(value) <= hi
    return check


def _float(lo: float, hi: float) -> Check:
    def check(value: str) -> bool:
        return bool(re.fullmatch(r"\d{1,9}(\.\d{1,9})?", value)) and lo <= float(value) <= hi
    return check


def _choice(*values: str) -> Check:
    return lambda value: value in values


def _regex(pattern: re.Pattern[str]) -> Check:
    return lambda value: bool(pattern.match(value))


@dataclass(frozen=True)
class Options:
    """getopt-style options: single-letter flags, letters taking a value, long options."""

    flags: str = ""
    values: Mapping[str, Check] = field(default_factory=dict)
    long: Mapping[str, Check | None] = field(default_factory=dict)  # None: a flag


def split_options(tool: str, args: Sequence[str], spec: Options) -> list[str]:
    """The positional arguments of `args`; ArgvRefused when an option is not in `spec` or its value
    fails its check. Short options may be grouped (`-nq`) and take values attached (`-c3`)."""
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional += args[i + 1:]
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name not in spec.long:
                raise ArgvRefused(f"{tool}: option '{name}' is not available on this switch")
            check = spec.long[name]
            if check is None and eq:
                raise ArgvRefused(f"{tool}: option '{name}' takes no value")
            if check is not None:
                if not eq:
                    i += 1
                    if i >= len(args):
                        raise ArgvRefused(f"{tool}: option '{name}' requires an argument")
                    value = args[i]
                if not check(value):
                    raise ArgvRefused(f"{tool}: invalid value '{value}' for {name}")
        elif arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for pos, letter in enumerate(letters):
                if letter in spec.values:
                    value = letters[pos + 1:]
                    if not value:
                        i += 1
                        if i >= len(args):
                            raise ArgvRefused(f"{tool}: option requires an argument -- '{letter}'")
                        value = args[i]
                    if not spec.values[letter](value):
                        raise ArgvRefused(f"{tool}: invalid value '{value}' for -{letter}")
                    break
                if letter not in spec.flags:
                    raise ArgvRefused(f"{tool}: option '-{letter}' is not available on this switch")
        else:
            positional.append(arg)
        i += 1
    return positional


def _host(tool: str, value: str) -> None:
    if not HOST.match(value):
        raise ArgvRefused(f"{tool}: {value}: Name or service not known")


# iputils ping 20221126: no flood (-f), preload (-l) or adaptive (-A); intervals of 0.2 s and more.
PING = Options(
    flags="46abBdDLnOqrRUv",
    values={"c": _int(1, 1_000_000), "i": _float(0.2, 3600), "I": _regex(IFACE), "s": _int(0, 65507),
            "t": _int(1, 255), "W": _float(0, 3600), "w": _int(0, 86400), "M": _choice("do", "dont", "want", "probe"),
            "Q": _regex(re.compile(r"^(0x)?[0-9a-fA-F]{1,2}$")), "p": _regex(re.compile(r"^[0-9a-fA-F]{1,32}$")),
            "m": _int(0, 2**32 - 1), "T": _choice("tsonly", "tsandaddr", "tsprespec"), "F": _regex(IFACE),
            "e": _int(0, 65535), "S": _int(1, 2**24)})
# Dmitry Butskoy's traceroute 2.1 (Debian's traceroute): -f is the first TTL, not a file.
TRACEROUTE = Options(
    flags="46dFITnrAUeE",
    values={"f": _int(1, 255), "g": _regex(HOST), "i": _regex(IFACE), "m": _int(1, 255), "N": _int(1, 128),
            "p": _int(1, 65535), "t": _int(0, 255), "l": _int(0, 2**20 - 1),
            "w": _regex(re.compile(r"^\d{1,4}(\.\d+)?(,\d{1,4}(\.\d+)?){0,2}$")), "q": _int(1, 10),
            "s": _regex(HOST), "z": _float(0, 10),
            "M": _choice("default", "icmp", "tcp", "tcpconn", "udp", "udplite", "dccp", "raw")},
    long={"--mtu": None, "--back": None, "--icmp": None, "--tcp": None, "--udp": None,
          "--fwmark": _int(0, 2**32 - 1), "--sport": _int(1, 65535)})


def ping_argv(netns: str, args: Sequence[str], family: str | None = None) -> list[str]:
    """`ping [OPTIONS] HOST` inside the switch (ping6: family "-6")."""
    positional = split_options("ping", args, PING)
    if len(positional) != 1:
        raise ArgvRefused("ping: usage error: Destination address required" if not positional
                          else f"ping: {positional[1]}: Name or service not known")
    _host("ping", positional[0])
    return ["ip", "netns", "exec", netns, "ping", *([family] if family else []), *args]


def traceroute_argv(netns: str, args: Sequence[str], family: str | None = None) -> list[str]:
    """`traceroute [OPTIONS] HOST [PACKETLEN]` inside the switch (traceroute6: family "-6")."""
    positional = split_options("traceroute", args, TRACEROUTE)
    if not positional or len(positional) > 2:
        raise ArgvRefused("Usage:\n  traceroute [ -46dFITnreAUDV ] [ -f first_ttl ] [ -g gate,... ] [ -i device ] "
                          "[ -m max_ttl ] [ -N squeries ] [ -p port ] [ -t tos ] [ -l flow_label ] "
                          "[ -w MAX,HERE,NEAR ] [ -q nqueries ] [ -s src_addr ] [ -z sendwait ] "
                          "[ --fwmark=num ] host [ packetlen ]")
    _host("traceroute", positional[0])
    if len(positional) == 2 and not _int(0, 65000)(positional[1]):
        raise ArgvRefused(f"Cannot handle \"packetlen\" cmdline arg `{positional[1]}' on position 2 (argc 2)")
    return ["ip", "netns", "exec", netns, "traceroute", *([family] if family else []), *args]


# iproute2 6.1 `ip`: its objects in the order `ip` matches an abbreviation against them, and the
# ones the shell shows (read only: show/list/get, never -batch, -netns, -force or `ip netns`).
IP_OBJECTS = ("address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour", "ntable", "ntbl",
              "link", "l2tp", "fou", "ila", "macsec", "tunnel", "tuntap", "tap", "token", "tcpmetrics",
              "tcp_metrics", "monitor", "xfrm", "mroute", "mrule", "netns", "netconf", "vrf", "sr", "nexthop",
              "mptcp", "ioam", "stats", "help")
IP_SHOWN = frozenset({"address", "route", "rule", "neighbor", "neighbour", "link", "nexthop", "maddress",
                      "netconf", "vrf"})
IP_VERBS = frozenset({"show", "list", "lst"})
IP_OPTIONS = frozenset({"-4", "-6", "-0", "-br", "-brief", "-j", "-json", "-p", "-pretty", "-d", "-details",
                        "-s", "-stats", "-statistics", "-o", "-oneline", "-h", "-human", "-r", "-resolve"})


def ip_argv(netns: str, args: Sequence[str]) -> list[str]:
    """`ip [OPTIONS] OBJECT [show|list|get ...]` of the switch's kernel, read only."""
    options = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] not in IP_OPTIONS:
            raise ArgvRefused(f"ip: option '{args[i]}' is not available on this switch")
        options.append(args[i])
        i += 1
    if i == len(args):
        raise ArgvRefused("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n"
                          "where  OBJECT := { address | link | neighbor | nexthop | route | rule | vrf }")
    token = args[i]
    obj = next((o for o in IP_OBJECTS if o.startswith(token)), None)
    if obj is None or obj not in IP_SHOWN:
        raise ArgvRefused(f"ip: 'ip {token}' is not available on this switch (read-only: "
                          "address, link, neighbor, nexthop, route, rule, vrf)")
    rest = list(args[i + 1:])
    verbs = IP_VERBS | ({"get"} if obj == "route" else set())
    if rest and rest[0] not in verbs:
        raise ArgvRefused(f"ip: 'ip {token} {rest[0]}' is not available on this switch (only "
                          f"{', '.join(sorted(verbs))}: changes go through CONFIG_DB, `sudo config ...`)")
    if any(not WORD.match(a) for a in rest):
        raise ArgvRefused("ip: invalid argument")
    return ["ip", "-n", netns, *options, token, *rest]


# redis-cli 7.0: options before the command; none naming another server, a file, or stdin.
REDIS_FLAGS = frozenset({"--raw", "--no-raw", "--csv", "-e", "--scan", "--bigkeys", "--memkeys",
                         "--no-auth-warning", "--quoted-input"})
REDIS_VALUES: dict[str, Check] = {"-n": _int(0, 15), "-r": _int(-1, 1_000_000), "-i": _float(0, 3600),
                                  "-d": _regex(re.compile(r"^.{1,8}$")), "-D": _regex(re.compile(r"^.{1,8}$")),
                                  "--pattern": _regex(re.compile(r"^.{1,256}$")), "--count": _int(1, 1_000_000)}


@dataclass(frozen=True)
class RedisCli:
    """A checked redis-cli invocation: database, output options, the command (empty: interactive)."""

    db: int
    options: tuple[str, ...]
    command: tuple[str, ...]

    def argv(self, socket: Path, tty: bool) -> list[str]:
        """redis-cli on the switch's socket; formatted as on a terminal when the session has one."""
        fmt = [] if not tty or {"--raw", "--no-raw", "--csv"} & set(self.options) else ["--no-raw"]
        return ["redis-cli", "-s", str(socket), "-n", str(self.db), *fmt, *self.options, *self.command]


def parse_redis_cli(args: Sequence[str]) -> RedisCli:
    """redis-cli's arguments checked: ArgvRefused for -h/-p/-s/-u/--rdb/--pipe/-x/--eval... and for
    refused redis commands."""
    db, options = 0, []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in REDIS_FLAGS:
            options.append(arg)
        elif arg in REDIS_VALUES:
            if i + 1 >= len(args) or not REDIS_VALUES[arg](args[i + 1]):
                raise ArgvRefused(f"Unrecognized option or bad number of args for: '{arg}'")
            if arg == "-n":
                db = int(args[i + 1])
            else:
                options += [arg, args[i + 1]]
            i += 1
        elif arg in ("-h", "-p", "-s", "-u", "-a", "--user", "--pass", "--askpass", "-c", "--tls"):
            raise ArgvRefused(f"redis-cli: '{arg}' is not available on this switch: redis-cli talks to the "
                              "switch's own redis only")
        else:
            raise ArgvRefused(f"redis-cli: option '{arg}' is not available on this switch")
        i += 1
    command = tuple(args[i:])
    sent: list[str] = list(command)
    if "--quoted-input" in options:   # redis-cli decodes each argument: judge what it will send
        decoded = [unquote_c_string(w) for w in command]
        if any(w is None for w in decoded):
            raise ArgvRefused("Invalid quoted string")
        sent = [w for w in decoded if w is not None]
    why = redis_refusal(sent)
    if why is not None:
        raise ArgvRefused(why)
    return RedisCli(db=db, options=tuple(options), command=command)
