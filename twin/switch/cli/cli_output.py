"""What one command of the switch's CLI printed, and the error shapes SONiC's click commands print."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Output:
    """Standard output, standard error and exit status of one command."""

    out: str = ""
    err: str = ""
    status: int = 0


def usage_error(usage: str, message: str) -> Output:
    """click's UsageError (exit 2): `usage` is the command path with its usage, e.g.
    "config interface shutdown [OPTIONS] <interface_name>"."""
    path = usage.split(" [")[0].split(" <")[0]
    return Output(err=f"Usage: {usage}\nTry '{path} -h' for help.\n\nError: {message}\n", status=2)


def group_usage(path: str) -> str:
    return f"{path} [OPTIONS] COMMAND [ARGS]..."


def not_emulated(command: str) -> Output:
    """A SONiC command the twin does not answer (SONiC has it; twin says so instead of pretending)."""
    return Output(err=f"{command}: not available on this twin switch (SONiC has it; twin emulates "
                      "show version, show interfaces status|description|counters, show queue counters, "
                      "show pfc counters, show ip|ipv6 bgp summary|neighbors|network, show ip|ipv6 route, "
                      "show runningconfiguration all|bgp|interfaces|ports and the common 'config' changes)\n",
                  status=1)


def resolve(word: str, names: tuple[str, ...], usage: str, shortest_wins: bool = False) -> str | Output:
    """click AliasedGroup's lookup (`show`): the exact name, else the one name `word` abbreviates; an
    Output with click's error when none or several do. AbbreviationGroup (`config`, shortest_wins):
    several matches that all extend the shortest one pick that one."""
    if word in names:
        return word
    matches = [n for n in names if n.lower().startswith(word.lower())]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        return usage_error(usage, f"No such command '{word}'.")
    shortest = min(matches, key=len)
    if shortest_wins and all(m.startswith(shortest) for m in matches):
        return shortest
    return usage_error(usage, f"Too many matches: {', '.join(sorted(matches))}")


def subcommand(path: str, args: list[str], names: tuple[str, ...], shortest_wins: bool = False) -> str | Output:
    """The command of group `path` (e.g. "show interfaces") that `args[0]` names, as click looks it
    up (`resolve`); click's "Missing command." when `args` is empty."""
    usage = group_usage(path)
    if not args:
        return usage_error(usage, "Missing command.")
    return resolve(args[0], names, usage, shortest_wins)
