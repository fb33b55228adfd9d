"""Which vtysh invocations and FRR command lines the switch's SSH shell lets through.

vtysh runs on the host (the switch's FRR sockets are in its run directory), so an FRR command that
makes vtysh or a daemon open a file by name would reach the host's file system: `log file PATH`,
`dump bgp ... PATH`, `copy FILE running-config`, `output file PATH`, `banner motd file PATH`,
`netns PATH`, `start-shell`, a pager (`terminal paginate`). Commands that would open FRR to logins
other than vtysh's are refused too: `password` and `enable password` (a vty client that knows the
password gets a daemon's full CLI, `log file` included, with no guard in between) and `line vty`
(where `no login` drops the password), as are those that make a daemon connect outside the switch
(`agentx`, `bmp`, `fpm`). Each is matched the way FRR's parser matches: every word may be any
prefix of its keyword (`lo fi /tmp/x` is `log file /tmp/x`), after any `do` or `no`. vtysh itself
may only be given `-c` lines (and `-d`, `-E`); it runs with the switch's run directory as its config
directory, so `write memory` writes the switch's own frr.conf. The daemons' TCP vty listens on the
switch's 127.0.0.1 only (twin.switch.frr.frr_daemons.daemon_command), as SONiC's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FILE = "it would make FRR read or write a file outside the switch"
LOGIN = ("it would let vty clients log in to FRR's daemons past this shell (the switch's FRR CLI is "
         "vtysh, which needs no password)")
CONNECT = "it would make FRR connect to something outside the switch"

# FRR 8.4 commands that name a file, or run a program: refused in every node.
FILE_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("log", "file"),                          # log file FILENAME [LEVEL]
    ("log", "filtered-file"),                 # log filtered-file FILENAME
    ("log", "syslog"),                        # the host's syslog
    ("log", "extended"),                      # log extended NAME -> destination file ...
    ("destination",),                         # (log extended) destination file|fd|syslog
    ("dump",),                                # dump bgp <all|updates|...> PATH
    ("copy",),                                # copy FILENAME running-config
    ("write", "file"),                        # the brief's list: `write memory` is the way to save
    ("output",),                              # output file FILE (vtysh)
    ("banner", "motd", "file"),               # banner motd file FILE (daemons read it)
    ("start-shell",),                         # a shell, where vtysh is built with it
    ("terminal", "paginate"),                 # a pager (less: `!command`)
    ("service", "integrated-vtysh-config"),   # `no service ...` makes daemons write /etc/frr/*.conf
    ("netns",),                               # netns NAME: a file in /var/run/netns or any path
    ("rpki",),                                # rpki cache ... ssh KEY_PATH KNOWN_HOSTS_PATH
)
# FRR 8.4 commands that open the daemons' vty to logins, or connect outside the switch.
LOGIN_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("password",),                            # password PASSWORD: vty logins over TCP
    ("enable", "password"),                   # enable password PASSWORD: the vty's enable node
    ("line", "vty"),                          # line vty -> no login: vty logins without a password
)
CONNECT_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("agentx",),                              # SNMP AgentX to the host's snmpd socket
    ("bmp",),                                 # bmp targets ... bmp connect HOST port N
    ("fpm",),                                 # fpm address A.B.C.D: zebra's FPM client
)
REFUSED_COMMANDS: tuple[tuple[tuple[str, ...], str], ...] = (
    *((c, FILE) for c in FILE_COMMANDS), *((c, LOGIN) for c in LOGIN_COMMANDS),
    *((c, CONNECT) for c in CONNECT_COMMANDS))
OPTIONAL_PREFIXES = ("do", "no")
VTYSH_OPTIONS_WITH_ARG = {"-c": "--command", "-d": "--daemon"}
VTYSH_FLAGS = {"-E": "--echo"}
DAEMON = re.compile(r"^[a-z0-9]{1,16}$")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Vtysh:
    """A checked vtysh invocation: its `-c` lines (none: an interactive session) and options."""

    lines: tuple[str, ...]
    options: tuple[str, ...] = ()

    def argv(self, rundir: Path) -> list[str]:
        """vtysh against this switch's daemons, its config and history files in the switch's run dir."""
        cmds = [arg for line in self.lines for arg in ("-c", line)]
        return ["vtysh", "--vty_socket", str(rundir), "--config_dir", str(rundir),
                "-H", str(rundir / HISTORY), *self.options, *cmds]


HISTORY = ".vtysh_history"
VTYSH_CONF = "vtysh.conf"


def vtysh_conf(hostname: str) -> str:
    """The switch's vtysh.conf: integrated config (write memory writes frr.conf next to it) and the
    switch's name in vtysh's prompt (vtysh would otherwise take the host's)."""
    return f"service integrated-vtysh-config\nhostname {hostname}\n"


def _matches(word: str, keyword: str) -> bool:
    return bool(word) and keyword.startswith(word.lower())


def refusal(line: str) -> str | None:
    """Why FRR command `line` is refused (None: it may run). `line` may hold several lines."""
    if CONTROL.search(line):
        return "control characters are not accepted in FRR commands"
    for one in line.split("\n"):
        words = one.split()
        if not words or words[0].startswith(("!", "#")):
            continue
        starts = [0]
        while starts[-1] < len(words) and any(_matches(words[starts[-1]], p) for p in OPTIONAL_PREFIXES):
            starts.append(starts[-1] + 1)
        for start in starts:
            for command, why in REFUSED_COMMANDS:
                rest = words[start:start + len(command)]
                if len(rest) == len(command) and all(_matches(w, k) for w, k in zip(rest, command, strict=True)):
                    return f"'{' '.join(command)}' is not available on this switch: {why}"
    return None


class VtyshRefused(ValueError):
    """A vtysh command line the shell does not run (the message says why)."""


def parse_vtysh(args: Sequence[str]) -> Vtysh:
    """vtysh's arguments (after `vtysh`) checked: only -c/--command, -d/--daemon and -E/--echo;
    every -c line checked by `refusal`. VtyshRefused otherwise."""
    lines: list[str] = []
    options: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, value = _split_option(arg)
        if name in VTYSH_FLAGS or name in VTYSH_FLAGS.values():
            if value is not None:
                raise VtyshRefused(f"option '{name}' takes no value")
            options.append("-E")
        elif name in VTYSH_OPTIONS_WITH_ARG or name in VTYSH_OPTIONS_WITH_ARG.values():
            if value is None:
                i += 1
                if i >= len(args):
                    raise VtyshRefused(f"option '{name}' requires an argument")
                value = args[i]
            if name in ("-c", "--command"):
                why = refusal(value)
                if why is not None:
                    raise VtyshRefused(why)
                lines.append(value)
            else:
                if not DAEMON.match(value):
                    raise VtyshRefused(f"'{value}' is not a daemon name")
                options += ["-d", value]
        else:
            raise VtyshRefused(f"option '{arg}' is not available on this switch (only -c, -d and -E)")
        i += 1
    return Vtysh(lines=tuple(lines), options=tuple(options))


def _split_option(arg: str) -> tuple[str, str | None]:
    """('-c', 'show x') for '-cshow x', ('--command', 'x') for '--command=x', else (arg, None)."""
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        return name, value if eq else None
    if arg.startswith("-") and len(arg) > 2:
        return arg[:2], arg[2:]
    return arg, None
