"""The filters a SONiC user pipes `show` output through: `| grep`, `| head`, `| tail`, `| wc -l`, ...

Run in the shell itself on the command's output (no process, no file): grep [-i -v -c -w -x -n
-E -F] [-e] PATTERN, head/tail [-n N | -N], wc [-l -w -c], sort [-r -n -u], uniq [-c], awk [-F SEP]
'{print $N, ...}' (fields only: what sonic-mgmt's commands ask of awk), and more/less/cat (the output is
not paged). Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

FILTERS = ("grep", "egrep", "fgrep", "head", "tail", "wc", "sort", "uniq", "awk", "more", "less", "cat")
AWK_PRINT = re.compile(r"\{\s*print(?:\s+(\$\d+(?:\s*,\s*\$\d+)*))?\s*;?\s*\}")


class FilterError(ValueError):
    """A filter's arguments it does not take (the message is what the tool would say)."""


@dataclass(frozen=True)
class Filter:
    """One `| tool args` stage."""

    tool: str
    args: tuple[str, ...]

    def apply(self, text: str) -> tuple[str, int]:
        """(output, exit status) of the stage on `text`."""
        lines = text.splitlines()
        handler: dict[str, Callable[[list[str], Sequence[str]], tuple[list[str], int]]] = {
            "grep": _grep, "egrep": lambda ls, a: _grep(ls, ["-E", *a]), "fgrep": lambda ls, a: _grep(ls, ["-F", *a]),
            "head": lambda ls, a: (ls[:_count(a, "head")], 0), "tail": _tail, "wc": _wc, "sort": _sort,
            "uniq": _uniq, "awk": _awk}
        if self.tool in ("more", "less", "cat"):
            if self.args:
                raise FilterError(f"{self.tool}: reading files is not available on this switch")
            return text, 0
        out, status = handler[self.tool](lines, self.args)
        return "".join(f"{line}\n" for line in out), status


def parse_filter(words: Sequence[str]) -> Filter:
    """One `| tool args` stage, its arguments checked (on empty input) before anything runs."""
    if not words or words[0] not in FILTERS:
        raise FilterError(f"-bash: {words[0] if words else ''}: command not found")
    stage = Filter(words[0], tuple(words[1:]))
    stage.apply("")
    return stage


def _bre_to_python(pattern: str) -> str:
    """GNU grep basic regex -> Python: `\\|`, `\\+`, `\\?`, `\\(`, `\\)`, `\\{`, `\\}` are operators,
    the bare characters literals."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "|+?(){}" else c + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "|+?(){}" else c)
        i += 1
    return "".join(out)


def _grep(lines: list[str], args: Sequence[str]) -> tuple[list[str], int]:
    flags, patterns, rest = set(), [], list(args)
    while rest and rest[0].startswith("-") and len(rest[0]) > 1:
        arg = rest.pop(0)
        if arg == "--":
            break
        if arg == "-e":
            if not rest:
                raise FilterError("grep: option requires an argument -- 'e'")
            patterns.append(rest.pop(0))
            continue
        for letter in arg[1:]:
            if letter not in "ivcwxnEFo":
                raise FilterError(f"grep: invalid option -- '{letter}'")
            flags.add(letter)
    if not patterns:
        if not rest:
            raise FilterError("Usage: grep [OPTION]... PATTERNS [FILE]...")
        patterns.append(rest.pop(0))
    if rest:
        raise FilterError("grep: reading files is not available on this switch")
    regexes = []
    for pattern in patterns:
        body = re.escape(pattern) if "F" in flags else pattern if "E" in flags else _bre_to_python(pattern)
        if "w" in flags:
            body = rf"(?<!\w)(?:{body})(?!\w)"
        if "x" in flags:
            body = rf"^(?:{body})$"
        try:
            regexes.append(re.compile(body, re.IGNORECASE if "i" in flags else 0))
        except re.error as exc:
            raise FilterError(f"grep: {exc}") from None
    picked = [(n, line) for n, line in enumerate(lines, 1)
              if any(r.search(line) for r in regexes) != ("v" in flags)]
    if "c" in flags:
        return [str(len(picked))], 0 if picked else 1
    if "o" in flags and "v" not in flags:
        return [m.group(0) for _, line in picked for r in regexes for m in r.finditer(line)], 0 if picked else 1
    return [f"{n}:{line}" if "n" in flags else line for n, line in picked], 0 if picked else 1


def awk_program(args: Sequence[str]) -> tuple[str | None, list[int], list[str]]:
    """awk's field separator (None: runs of blanks), the fields its `{print ...}` program prints, and
    the arguments after the program (its files)."""
    rest, sep = list(args), None
    while rest and rest[0].startswith("-F"):
        flag = rest.pop(0)
        if flag == "-F":
            if not rest:
                raise FilterError("awk: option requires an argument -- F")
            flag = "-F" + rest.pop(0)
        sep = flag[2:]
    if not rest:
        raise FilterError("usage: awk [-F fs] 'prog' [file ...]")
    program = rest.pop(0)
    match = AWK_PRINT.fullmatch(program.strip())
    if match is None:
        raise FilterError(f"awk: only '{{print $N, ...}}' programs are available on this switch, not {program!r}")
    fields = [int(f) for f in re.findall(r"\$(\d+)", match.group(1) or "$0")]
    return sep, fields, rest


def _awk(lines: list[str], args: Sequence[str]) -> tuple[list[str], int]:
    sep, fields, files = awk_program(args)
    if files:
        raise FilterError("awk: reading files is not available on this switch")
    out = []
    for line in lines:
        cols = line.split() if sep is None else line.split(sep)
        out.append(" ".join(line if f == 0 else (cols[f - 1] if f <= len(cols) else "") for f in fields))
    return out, 0


def _count(args: Sequence[str], tool: str) -> int:
    if not args:
        return 10
    if len(args) == 1 and re.fullmatch(r"-\d+", args[0]):
        return int(args[0][1:])
    if len(args) == 2 and args[0] == "-n" and args[1].lstrip("+-").isdigit():
        return int(args[1].lstrip("+-"))
    if len(args) == 1 and re.fullmatch(r"-n\d+", args[0]):
        return int(args[0][2:])
    raise FilterError(f"{tool}: reading files is not available on this switch" if not args[0].startswith("-")
                      else f"{tool}: invalid option '{args[0]}'")


def _tail(lines: list[str], args: Sequence[str]) -> tuple[list[str], int]:
    n = _count(args, "tail")
    return (lines[-n:] if n else []), 0


def _wc(lines: list[str], args: Sequence[str]) -> tuple[list[str], int]:
    text = "".join(f"{line}\n" for line in lines)
    counts = {"l": len(lines), "w": len(text.split()), "c": len(text.encode())}
    wanted = [a[1:] for a in args]
    if any(not a.startswith("-") for a in args) or any(set(w) - set("lwc") for w in wanted):
        raise FilterError("wc: only -l, -w and -c are available on this switch")
    letters = "".join(wanted) or "lwc"
    values = [counts[k] for k in "lwc" if k in letters]
    return [" ".join(str(v) for v in values) if len(values) == 1 else " ".join(f"{v:7d}" for v in values)], 0


def _sort(lines: list[str], args: Sequence[str]) -> tuple[list[str], int]:
    flags = set("".join(a[1:] for a in args))
    if any(not a.startswith("-") for a in args) or flags - set("rnu"):
        raise FilterError("sort: only -r, -n and -u are available on this switch")

    def numeric(line: str) -> tuple[float, str]:
        match = re.match(r"\s*(-?\d+(\.\d+)?)", line)
        return (float(match.group(1)) if match else 0.0, line)

    out = sorted(lines, key=numeric if "n" in flags else None, reverse="r" in flags)
    if "u" in flags:
        out = list(dict.fromkeys(out))
    return out, 0


def _uniq(lines: list[str], args: Sequence[str]) -> tuple[list[str], int]:
    if args not in ([], ["-c"]):
        raise FilterError("uniq: only -c is available on this switch")
    out: list[tuple[int, str]] = []
    for line in lines:
        if out and out[-1][1] == line:
            out[-1] = (out[-1][0] + 1, line)
        else:
            out.append((1, line))
    return [f"{n:7d} {line}" if args else line for n, line in out], 0
