"""One SONiC click command's options and arguments, parsed as click parses them, with click's errors.

A `Command` names its path (`show queue counters`), its usage after the path, its options (flags, texts,
integers, choices) and how many arguments it takes. `parse` gives the values, or the Output click prints:
its usage error (exit 2) or the help (-h, -?, --help: SONiC's show and its scripts' click commands take all
three where their context settings say so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from twin.switch.cli.cli_output import Output, usage_error

HELP = ("-h", "-?", "--help")


@dataclass(frozen=True)
class Opt:
    names: tuple[str, ...]              # as declared: ("--display", "-d"), ("-i", "--interface")
    key: str
    kind: str = "flag"                  # flag, text, int or choice
    choices: tuple[str, ...] = ()
    help: str = ""
    metavar: str = "TEXT"

    def quoted(self) -> str:
        return " / ".join(f"'{n}'" for n in self.names)


@dataclass(frozen=True)
class Command:
    path: str                           # "show queue counters"
    usage: str                          # after the path: "[OPTIONS] [INTERFACE_NAME]"
    summary: str
    options: tuple[Opt, ...] = ()
    arguments: tuple[str, ...] = ()     # the arguments' metavars, in order
    required: int = 0                   # how many of them must be given
    group: bool = False                 # a group: options stop at the first argument (its subcommand)
    help_names: tuple[str, ...] = HELP

    def error(self, message: str) -> Output:
        return usage_error(f"{self.path} {self.usage}", message)

    def help(self) -> Output:
        """click's help page: usage, the summary, then each option."""
        rows = []
        for opt in self.options:
            names = ", ".join(opt.names)
            if opt.kind == "choice":
                names += f" [{'|'.join(opt.choices)}]"
            elif opt.kind != "flag":
                names += f" {opt.metavar}"
            rows.append((names, opt.help))
        rows.append((", ".join(self.help_names), "Show this message and exit."))
        width = max(len(n) for n, _ in rows) + 2
        lines = [f"Usage: {self.path} {self.usage}", "", f"  {self.summary}", "", "Options:"]
        lines += [f"  {n.ljust(width)}{h}".rstrip() for n, h in rows]
        return Output(out="\n".join(lines) + "\n")


@dataclass
class Parsed:
    values: dict[str, Any] = field(default_factory=dict)
    arguments: list[str] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)   # a group's: its subcommand and what follows


def _value(command: Command, opt: Opt, text: str) -> Any:
    if opt.kind == "int":
        try:
            return int(text)
        except ValueError:
            raise _Refused(command.error(f"Invalid value for {opt.quoted()}: '{text}' is not a valid integer.")) \
                from None
    if opt.kind == "choice" and text not in opt.choices:
        choices = ", ".join(f"'{c}'" for c in opt.choices)
        raise _Refused(command.error(f"Invalid value for {opt.quoted()}: '{text}' is not one of {choices}."))
    return text


class _Refused(Exception):
    def __init__(self, output: Output) -> None:
        super().__init__(output.err)
        self.output = output


def parse(command: Command, args: Sequence[str]) -> Parsed | Output:
    """`args` as click takes them: options anywhere (a group's only before its subcommand), `--` ending
    them, `--name=value`, `-iVALUE`, short flags run together (`-aj`)."""
    by_name = {name: opt for opt in command.options for name in opt.names}
    parsed = Parsed(values={opt.key: False if opt.kind == "flag" else None for opt in command.options})
    words = list(args)
    try:
        while words:
            word = words.pop(0)
            if word == "--":
                parsed.arguments += words
                break
            if word in command.help_names:
                return command.help()
            if not word.startswith("-") or word == "-":
                if command.group:
                    parsed.rest = [word, *words]
                    break
                parsed.arguments.append(word)
                continue
            _option(command, by_name, word, words, parsed)
    except _Refused as refused:
        return refused.output
    if len(parsed.arguments) > len(command.arguments):
        extra = parsed.arguments[len(command.arguments):]
        return command.error(f"Got unexpected extra argument{'s' if len(extra) > 1 else ''} ({' '.join(extra)})")
    if len(parsed.arguments) < command.required:
        return command.error(f"Missing argument '{command.arguments[len(parsed.arguments)]}'.")
    return parsed


def _option(command: Command, by_name: dict[str, Opt], word: str, words: list[str], parsed: Parsed) -> None:
    name, _, attached = word.partition("=") if word.startswith("--") else (word, "", "")
    if name in by_name:
        opt = by_name[name]
        if opt.kind == "flag":
            if attached:
                raise _Refused(command.error(f"Option '{name}' does not take a value."))
            parsed.values[opt.key] = True
            return
        if not attached and "=" not in word:
            if not words:
                raise _Refused(command.error(f"Option '{name}' requires an argument."))
            attached = words.pop(0)
        parsed.values[opt.key] = _value(command, opt, attached)
        return
    if word.startswith("--") or word[:2] not in by_name:
        raise _Refused(command.error(f"No such option: {name}"))
    # short options run together: flags, then at most one that takes the rest as its value
    for i in range(1, len(word)):
        short = by_name.get(f"-{word[i]}")
        if short is None:
            raise _Refused(command.error(f"No such option: -{word[i]}"))
        if short.kind != "flag":
            value = word[i + 1:]
            if not value:
                if not words:
                    raise _Refused(command.error(f"Option '-{word[i]}' requires an argument."))
                value = words.pop(0)
            parsed.values[short.key] = _value(command, short, value)
            return
        parsed.values[short.key] = True
