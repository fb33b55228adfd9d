"""The switch's SSH shell: one command line -> what to do. A closed set of SONiC's commands.

`translate` is pure: it turns a line into an action (a checked argv, a `show`/`config` request,
text, a change of mode), so the whole command set is unit-testable without a switch.

The set, with or without `sudo` (admin's sudo asks no password, as on SONiC):
  show ...                  twin.switch.cli.show_cli (SONiC's show, FRR's data)
  portstat, queuestat, pfcstat ...   SONiC's counter scripts (twin.switch.cli.counters_cli), COUNTERS_DB's data
  config ...                twin.switch.cli.config_cli, needs root (`sudo config`, or after `sudo -s`)
  vtysh [-c LINE]...        twin.switch.cli.vtysh_guard: -c lines checked, no -f/-b/-w/-H...; alone: interactive
  sonic-db-cli DB CMD...    the switch's redis (twin.switch.cli.sonic_cli), refused commands in redis_guard
  redis-cli [-n DB] [CMD]   the switch's redis socket only; alone: interactive
  ping, ping6, traceroute, traceroute6, ip (read only)   in the switch's namespace, checked options
  sonic-cli                 the KLISH CLI (twin.switch.cli.klish)
  sudo -s | sudo -i | sudo su [-]   a root prompt of the same shell; exit leaves it
  hostname, whoami, exit, logout
  date [-u] [+FORMAT], uptime [-p | -s]   the host's clock, the switch's own boot time (twin.switch.cli.system_cli)
  cat FILE, awk '{print $N, ...}' FILE    the switch's system files: /proc/uptime, /etc/hostname, config_db.json
                            (the last two lines: in a container, its own system answers them)
  CMD | grep/head/tail/wc/sort/uniq/more   filters run by the shell (twin.switch.cli.cli_filters)

Anything else is bash's `-bash: WORD: command not found` (127). A switch in a container (docker
and clab runtimes) runs anything else inside its container instead (`bash -c LINE` there); a
SONiC-VS container runs every line with its own SONiC CLI. Nothing runs as a shell on the host.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from twin.model.agent import AgentSwitch
from twin.switch.cli.cli_argv import ArgvRefused, RedisCli, ip_argv, parse_redis_cli, ping_argv, traceroute_argv
from twin.switch.cli.cli_filters import Filter, FilterError, awk_program, parse_filter
from twin.switch.cli.cli_output import Output
from twin.switch.cli.cli_words import Op, SyntaxErr, pipeline, tokenize
from twin.switch.cli.config_cli import ConfigRequest, parse_config
from twin.switch.cli.redis_guard import redis_refusal
from twin.switch.cli.system_cli import FILES
from twin.switch.cli.vtysh_guard import VtyshRefused, parse_vtysh
from twin.switch.redis.redis_server import socket_path


@dataclass(frozen=True)
class Switch:
    """The switch a session is on: where its FRR and redis are, and its container if it has one."""

    name: str
    netns: str
    rundir: Path
    container: str | None = None   # docker/clab runtimes: lines outside the set run in it
    sonic: bool = False            # a SONiC-VS container: its own CLI answers every line

    @classmethod
    def from_settings(cls, sw: AgentSwitch) -> Switch:
        """From one agent.json switch entry."""
        return cls(name=sw.name, netns=sw.netns or "", rundir=Path(sw.rundir or ""),
                   container=sw.container, sonic=sw.sonic)


# -- actions ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Text:
    output: Output


@dataclass(frozen=True)
class Run:
    """A process: `argv` fixed and checked. `vtysh`: an interactive vtysh (typed lines pass the vtysh
    guard, its echo of them is dropped)."""

    argv: tuple[str, ...]
    vtysh: bool = False


@dataclass(frozen=True)
class InContainer:
    """A line for the switch's container: `bash -c LINE` there."""

    container: str
    line: str


@dataclass(frozen=True)
class Show:
    args: tuple[str, ...]


@dataclass(frozen=True)
class CounterTool:
    """`portstat`, `queuestat` or `pfcstat` with its arguments (twin.switch.cli.counters_cli.run_tool)."""

    tool: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Config:
    request: ConfigRequest


@dataclass(frozen=True)
class DbCli:
    args: tuple[str, ...]


@dataclass(frozen=True)
class Enter:
    """A new mode: `root` (prompt root@NAME:DIR#), `sonic-cli`, `redis-cli` (database `db`)."""

    mode: str
    home: bool = False   # root's prompt shows ~ (sudo -i, sudo su -) instead of /home/admin
    db: int = 0


@dataclass(frozen=True)
class Exit:
    pass


@dataclass(frozen=True)
class Hostname:
    """`hostname`: the switch's, DEVICE_METADATA's (twin.switch.cli.switch_view.SwitchView.hostname)."""


@dataclass(frozen=True)
class Clock:
    """`date` or `uptime` with its arguments (twin.switch.cli.system_cli: run_date, run_uptime)."""

    tool: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ReadFile:
    """`cat FILE`: one of the switch's system files (twin.switch.cli.system_cli.read_file)."""

    path: str


Action = Text | Run | InContainer | Show | CounterTool | Config | DbCli | Enter | Exit | Hostname | Clock | ReadFile


@dataclass(frozen=True)
class Piped:
    """An action whose output goes through the shell's filters."""

    action: Action
    filters: tuple[Filter, ...] = ()


NOT_FOUND = 127
SHELL_WORDS = frozenset({"exit", "logout", "sudo", "su"})
COUNTER_TOOLS = frozenset({"portstat", "queuestat", "pfcstat"})
SET = frozenset({"show", "config", "vtysh", "sonic-db-cli", "redis-cli", "ping", "ping6", "traceroute",
                 "traceroute6", "ip", "sonic-cli", "hostname", "whoami"}) | COUNTER_TOOLS | SHELL_WORDS
SYSTEM_WORDS = frozenset({"date", "uptime", "cat", "awk"})   # a container's own system answers them there
ROOT_SHELLS = {("-s",): False, ("-i",): True, ("su",): False, ("su", "-"): True, ("su", "root"): False,
               ("su", "-", "root"): True, ("-s", "-u", "root"): False, ("-i", "-u", "root"): True}
SUDO_USAGE = ("usage: sudo -h | -K | -k | -V\nusage: sudo -v [-ABkNnS] [-g group] [-h host] [-p prompt] [-u user]\n"
              "usage: sudo -l [-ABkNnS] [-g group] [-h host] [-p prompt] [-U user] [-u user] [command [arg ...]]\n"
              "usage: sudo [-ABbEHkNnPS] [-C num] [-D directory] [-g group] [-h host] [-p prompt] [-R directory] "
              "[-T timeout] [-u user] [VAR=value] [-i | -s] [command [arg ...]]\n")


def not_found(word: str) -> Text:
    return Text(Output(err=f"-bash: {word}: command not found\n", status=NOT_FOUND))


def refused(message: str, status: int = 1) -> Text:
    return Text(Output(err=message.rstrip("\n") + "\n", status=status))


def translate(line: str, switch: Switch, root: bool = False, tty: bool = False) -> Action | Piped:
    """What one line typed at the switch's shell does; `root`: after `sudo -s`."""
    line = line.strip()
    if not line or line.startswith("#"):
        return Text(Output())
    try:
        tokens = tokenize(line)
    except SyntaxErr as exc:
        return Text(Output(err=f"-bash: {exc}\n-bash: syntax error: unexpected end of file\n", status=2))
    words = [t for t in tokens if isinstance(t, str)]
    session = _session(words) if len(words) == len(tokens) else None
    if switch.sonic:   # SONiC's own CLI in the container answers everything but the session's words
        return session or InContainer(switch.container or "", line)
    command = words[1] if words[:1] == ["sudo"] and len(words) > 1 and not words[1].startswith("-") else \
        (words[0] if words else "")
    if switch.container and (command not in SET or command in SYSTEM_WORDS):
        return InContainer(switch.container, line.removeprefix("sudo ").lstrip() if command != "sudo" else line)
    first = command
    stages = pipeline(tokens)
    if isinstance(stages, Op):
        if first not in SET | SYSTEM_WORDS:
            return not_found(first)
        return refused(f"-bash: '{stages.text}': only '|' into grep, head, tail, wc, sort, uniq or more is "
                       "available on this switch's shell")
    try:
        filters = tuple(parse_filter(stage) for stage in stages[1:])
    except FilterError as exc:
        return refused(str(exc), NOT_FOUND if "command not found" in str(exc) else 2)
    if stages[0][:1] == ["awk"] or stages[0][:2] == ["sudo", "awk"]:   # awk PROGRAM FILE: the file, then awk
        try:
            read = _awk_file(stages[0][1:] if stages[0][0] == "awk" else stages[0][2:])
        except FilterError as exc:
            return refused(str(exc), 2)
        return Piped(read[0], (read[1], *filters))
    action = _command(stages[0], switch, root, tty)
    return Piped(action, filters) if filters else action


def _awk_file(args: list[str]) -> tuple[Action, Filter]:
    """`awk [-F SEP] PROGRAM FILE`: the file read, then its program as a filter; on its input alone it
    reads what is piped in, which a first stage has not."""
    _, _, files = awk_program(args)
    if len(files) != 1 or files[0] not in FILES:
        raise FilterError(f"awk: {' '.join(files) or 'reading standard input'}: not available on this switch "
                          f"(it reads {', '.join(FILES)}, or what is piped into it)")
    program = args[: len(args) - 1]
    return ReadFile(files[0]), Filter("awk", tuple(program))


def _session(words: list[str]) -> Action | None:
    """exit/logout and the root shells (`sudo -s`, `sudo -i`, `sudo su -`): the session's own words."""
    if words[:1] in (["exit"], ["logout"]):
        return Exit()
    if words[:1] == ["sudo"] and tuple(words[1:]) in ROOT_SHELLS:
        return Enter("root", home=ROOT_SHELLS[tuple(words[1:])])
    return None


def _command(words: list[str], switch: Switch, root: bool, tty: bool) -> Action:
    if not words:
        return refused("-bash: syntax error near unexpected token `|'", 2)
    sudo = words[0] == "sudo"
    if sudo:
        options = tuple(words[1:])
        if not options:
            return refused(SUDO_USAGE)
        if options in ROOT_SHELLS:
            return Enter("root", home=ROOT_SHELLS[options])
        if options[0].startswith("-"):
            return refused(f"sudo: option '{options[0]}' is not available on this switch (sudo -s, sudo -i, "
                           "sudo COMMAND)")
        words = words[1:]
    cmd, args = words[0], words[1:]
    if cmd in ("exit", "logout"):
        return Exit()
    if cmd == "su":
        return refused("su: Authentication failure")
    if cmd == "show":
        return Show(tuple(args))
    if cmd in COUNTER_TOOLS:
        return CounterTool(cmd, tuple(args))
    if cmd == "config":
        if not (root or sudo):
            return refused("Root privileges are required for this operation")
        parsed = parse_config(args)
        return Config(parsed) if isinstance(parsed, ConfigRequest) else Text(parsed)
    if cmd == "vtysh":
        try:
            vtysh = parse_vtysh(args)
        except VtyshRefused as exc:
            return refused(f"% {exc}")
        return Run(tuple(vtysh.argv(switch.rundir)), vtysh=not vtysh.lines)
    if cmd == "sonic-db-cli":
        why = redis_refusal(args[1:]) if len(args) > 1 else None
        return refused(why) if why else DbCli(tuple(args))
    if cmd == "redis-cli":
        try:
            cli = parse_redis_cli(args)
        except ArgvRefused as exc:
            return refused(str(exc))
        if not cli.command:
            return Enter("redis-cli", db=cli.db)
        return Run(tuple(cli.argv(socket_path(switch.rundir), tty)))
    try:
        if cmd in ("ping", "ping6"):
            return Run(tuple(ping_argv(switch.netns, args, "-6" if cmd == "ping6" else None)))
        if cmd in ("traceroute", "traceroute6"):
            return Run(tuple(traceroute_argv(switch.netns, args, "-6" if cmd == "traceroute6" else None)))
        if cmd == "ip":
            return Run(tuple(ip_argv(switch.netns, args)))
    except ArgvRefused as exc:
        return refused(str(exc), 2)
    if cmd == "sonic-cli":
        return Enter("sonic-cli")
    if cmd == "hostname":
        return Hostname()
    if cmd in ("date", "uptime"):
        return Clock(cmd, tuple(args))
    if cmd == "cat":
        if len(args) != 1 or args[0] not in FILES:
            return refused(f"cat: {' '.join(args) or 'reading standard input'}: not available on this switch "
                           f"(it reads {', '.join(FILES)})")
        return ReadFile(args[0])
    if cmd == "whoami":
        return Text(Output(out="root\n" if root or sudo else "admin\n"))
    return refused(f"sudo: {cmd}: command not found") if sudo else not_found(cmd)


def translate_redis(line: str, switch: Switch, db: int, tty: bool) -> Action:
    """One line at the interactive redis-cli prompt: a command for the switch's redis, `select N`,
    or `exit`/`quit`."""
    try:
        words = shlex.split(line)   # redis-cli's own splitting: quotes, no shell operators
    except ValueError:
        return refused("Invalid argument(s)")
    if not words:
        return Text(Output())
    if words[0].lower() in ("exit", "quit"):
        return Exit()
    if words[0].lower() == "select":
        if len(words) != 2 or not words[1].isdigit() or not 0 <= int(words[1]) <= 15:
            return refused("(error) ERR DB index is out of range")
        return Enter("redis-cli", db=int(words[1]))
    if words[0].startswith("-"):
        return refused(f"(error) ERR unknown command '{words[0]}'")
    why = redis_refusal(words)
    if why is not None:
        return refused(why)
    return Run(tuple(RedisCli(db=db, options=(), command=tuple(words)).argv(socket_path(switch.rundir), tty)))
