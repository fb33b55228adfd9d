"""What a CONFIG_DB key or value may hold before it reaches FRR, the kernel or a config file.

The config daemons turn CONFIG_DB into vtysh lines (`neighbor 10.0.0.64 description NAME`), `ip -b`
lines (`address add PREFIX dev PORT`) and frr.conf. None of them has quoting: a newline in a
value starts a new FRR command, whitespace in an interface key adds words to an `ip` command. So,
whoever wrote CONFIG_DB (gNMI Set, `config load`, redis-cli):

- no key, field or value holds a control character (C0, DEL, C1: newlines, NUL, escapes),
- no key is longer than MAX_KEY characters and no value longer than MAX_VALUE (SONiC's YANG
  models bound their free-text leaves at 255; nothing in CONFIG_DB needs more),
- the keys of the tables the kernel is programmed from, and the fields it takes, are one word.

SONiC itself has no such rule (bgpcfgd renders a description with a newline into its vtysh
input); twin refuses these values, which is listed among the twin's differences in the README.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

MAX_KEY = 512
MAX_VALUE = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# twin.switch.config.kernel builds `ip -b` lines from these keys and fields
KERNEL_TABLES = frozenset({"PORT", "INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE", "VLAN", "VLAN_MEMBER"})
KERNEL_FIELDS = frozenset({"admin_status", "mtu", "tagging_mode"})


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif value is not None and not isinstance(value, bool | int | float):
        yield str(value)


def _text_problem(what: str, text: str, limit: int) -> str | None:
    bad = _CONTROL.search(text)
    if bad is not None:
        return (f"{what} holds the control character U+{ord(bad.group()):04X} at position {bad.start()}: "
                f"FRR and the kernel take each value as one line of one command; remove it")
    if len(text) > limit:
        return f"{what} is {len(text)} characters long, more than the {limit} a CONFIG_DB {what.split()[-1]} may hold"
    return None


def entry_problems(table: str, key: str, row: Any) -> list[str]:
    """Why one CONFIG_DB entry may not be programmed (empty when it may)."""
    where = f"{table}|{key}"
    problems = [p for p in (_text_problem(f"{table} key", table, MAX_KEY),
                            _text_problem(f"{where} key", key, MAX_KEY)) if p]
    if table in KERNEL_TABLES and any(c.isspace() for c in key):
        problems.append(f"{where}: a key of {table} is one word (the kernel is programmed from it); remove the spaces")
    if not isinstance(row, dict):
        return problems
    for field, value in row.items():
        problem = _text_problem(f"{where} field", str(field), MAX_KEY)
        if problem:
            problems.append(problem)
        for text in _strings(value):
            problem = _text_problem(f"{where} {field} value", text, MAX_VALUE)
            if problem:
                problems.append(problem)
            elif table in KERNEL_TABLES and field in KERNEL_FIELDS and any(c.isspace() for c in text):
                problems.append(f"{where} {field}: {text!r} is not one word (the kernel takes it as one argument)")
    return problems


def config_problems(config: Any) -> list[str]:
    """Why a whole CONFIG_DB may not be programmed, entry by entry."""
    if not isinstance(config, dict):
        return []
    out: list[str] = []
    for table, rows in config.items():
        if not isinstance(rows, dict):
            continue
        for key, row in rows.items():
            out += entry_problems(str(table), str(key), row)
    return out


def changed_entry_problems(current: Any, target: Any) -> list[str]:
    """Why the entries `target` adds or changes relative to `current` may not be programmed (an
    entry already in CONFIG_DB is not judged again: the config daemons leave it out already)."""
    if not isinstance(target, dict):
        return []
    out: list[str] = []
    for table, rows in target.items():
        if not isinstance(rows, dict):
            continue
        before = current.get(table) if isinstance(current, dict) else None
        for key, row in rows.items():
            if not isinstance(before, dict) or before.get(key) != row:
                out += entry_problems(str(table), str(key), row)
    return out


def without_unsafe(new: dict[str, dict[str, Any]], old: dict[str, dict[str, Any]]
                   ) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(`new` with each entry that may not be programmed kept as it was in `old`, or left out when
    `old` has no safe version of it; why each was refused). A refused change never takes down
    what was programmed before it."""
    kept: dict[str, dict[str, Any]] = {}
    refused: list[str] = []
    for table, rows in new.items():
        for key, row in rows.items():
            problems = entry_problems(table, key, row)
            if not problems:
                kept.setdefault(table, {})[key] = row
                continue
            refused += problems
            before = old.get(table, {}).get(key)
            if before is not None and not entry_problems(table, key, before):
                kept.setdefault(table, {})[key] = before
    return kept, refused
