"""Read the files a user gives twin, whatever they hold: one clear Problem, never a traceback or a hang.

Every topology, lab, containerlab, change and config file (config_db.json, frr.conf, daemons) is read
here. The limits, documented in README's "Limits on input files":

- a file must be a regular file (checked with stat before it is opened, and opened with O_NONBLOCK,
  so a FIFO or a device such as /dev/zero can never block or stream forever), at most
  MAX_FILE_BYTES long, UTF-8 text (a leading byte order mark is dropped) without NUL bytes;
- YAML nests at most MAX_DEPTH collections deep (counted on the parser's events, before PyYAML's
  recursive composer runs) and holds at most MAX_YAML_NODES values with its aliases expanded
  (counted once per anchor, so a "billion laughs" file is refused after reading it once); an alias
  to a collection that contains it is refused;
- JSON nests at most MAX_DEPTH deep; a config_db.json is an object of tables, each an object of keys,
  each an object of fields whose values CONFIG_DB can hold (strings, or lists of strings);
- a file named inside another file (a topology's frr_conf:, daemons: and config_db:, a containerlab
  file's binds) or found inside a folder the user gave (`twin validate DIR`) must resolve, symlinks
  followed, inside the folder of the file that names it (or the folder given): twin runs as root and
  reads no file the topology's author did not put beside it. A file named on the command line (and a
  lab file's `topology:`) is the user's own choice and is read wherever it is, through symlinks.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from twin.model.config_db import ConfigDb
from twin.model.errors import PlanError, Problem

MAX_FILE_BYTES = 8 * 1024 * 1024   # every user file: topology, lab, clab, change, config_db.json, frr.conf, daemons
MAX_DEPTH = 64                      # nested mappings and lists, in YAML and JSON
MAX_YAML_NODES = 1_000_000          # keys, scalars, lists and mappings of a YAML file, with aliases expanded


_FILE = "(file)"
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
# JSON strings (so brackets inside them are skipped) and brackets: enough to find where nesting gets too deep
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _refuse(path: Path, field: str, message: str, fix: str = "", line: int | None = None) -> PlanError:
    return PlanError([Problem(str(path), field, message, fix, line)])


def outside(path: Path, folder: Path) -> Path | None:
    """Where `path` really is (symlinks followed) when that is outside `folder`; None when it is inside,
    or when it cannot be resolved (a symlink loop: reading it then says so)."""
    try:
        real, base = path.resolve(), folder.resolve()
    except (OSError, RuntimeError):  # RuntimeError: Python 3.11's "Symlink loop"
        return None
    return None if real.is_relative_to(base) else real


def named_outside(path: Path, folder: Path) -> tuple[str, str] | None:
    """(message, fix) when `path`, named inside a topology in `folder`, resolves outside that folder."""
    real = outside(path, folder)
    if real is None:
        return None
    return (f"{path} resolves to {real}, outside the topology's folder {folder.resolve()}",
            "copy the file next to the topology (twin reads no file from outside a topology's folder)")


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, for the message; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: Path, *, within: Path | None = None, missing_fix: str = "check the path",
               limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; with `within`, the file must resolve inside
    that folder (the folder of the file that names it, or the folder the user gave)."""
    if within is not None:
        real = outside(path, within)
        if real is not None:
            raise _refuse(path, _FILE, f"resolves to {real}, outside {within.resolve()}",
                          f"copy the file into {within.resolve()} instead of linking to it")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise _refuse(path, _FILE, "file not found", missing_fix) from None
    except OSError as exc:
        raise _refuse(path, _FILE, f"cannot read: {exc.strerror}", "make the file readable") from None
    what = _kind(info.st_mode)
    if what is not None:
        raise _refuse(path, _FILE, f"is {what}, not a regular file", "give the path of a text file")
    if info.st_size > limit:
        raise _refuse(path, _FILE, f"is {info.st_size:,} bytes, more than the {_size(limit)} twin reads",
                      "give a smaller file (is it the right file?)")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _refuse(path, _FILE, f"cannot read: {exc.strerror}", "make the file readable") from None
    try:
        what = _kind(os.fstat(fd).st_mode)  # replaced between stat and open?
        if what is not None:
            raise _refuse(path, _FILE, f"is {what}, not a regular file", "give the path of a text file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _refuse(path, _FILE, f"cannot read: {exc.strerror}", "make the file readable") from None
    finally:
        os.close(fd)
    if size > limit:
        raise _refuse(path, _FILE, f"holds more than the {_size(limit)} twin reads (more than its size said)",
                      "give a smaller file (is it the right file?)")
    return b"".join(chunks)


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit:,} bytes"


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and (byte) column of `offset` in `data`."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - start + 1


def decode(path: Path, data: bytes) -> str:
    """`data` as text: UTF-8 without NUL bytes; a leading byte order mark is dropped."""
    nul = data.find(b"\0")
    text = ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if nul < 0 or exc.start < nul:  # whichever comes first in the file
            line, col = _line_col(data, exc.start)
            raise _refuse(path, "(encoding)", f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, "
                          f"column {col} cannot be decoded", "save the file as UTF-8 text", line) from None
    if nul >= 0:
        line, col = _line_col(data, nul)
        raise _refuse(path, "(encoding)", f"holds a NUL byte at line {line}, column {col}: a binary file, "
                      "or text saved as UTF-16?", "give a text file saved as UTF-8", line)
    return text.removeprefix("\ufeff")


def read_text(path: Path, *, within: Path | None = None, missing_fix: str = "check the path",
              limit: int = MAX_FILE_BYTES) -> str:
    """A user's text file (see the module's rules); anything else raises one PlanError."""
    return decode(path, read_bytes(path, within=within, missing_fix=missing_fix, limit=limit))


# -- YAML -------------------------------------------------------------------------------------------


def _yaml_error(path: Path, exc: yaml.YAMLError, text: str) -> PlanError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or exc.context or "malformed YAML"
        if exc.context and what.startswith("but "):  # "expected a single document in the stream but found another"
            what = f"{exc.context} {what}"
        return _refuse(path, "(yaml)", f"malformed YAML: {what}", "fix the syntax at that line", line)
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        return _refuse(path, "(yaml)", f"malformed YAML: character #x{exc.character:04x} is not allowed in YAML",
                       "remove it or quote it with an escape (\"\\x..\")", line)
    return _refuse(path, "(yaml)", f"malformed YAML: {exc}", "fix the syntax")


def check_yaml_bounds(path: Path, text: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH or holding more than MAX_YAML_NODES values with its
    aliases expanded, and aliases to a collection that holds them. Reads the parser's events (PyYAML's
    parser keeps its own stack, it does not recurse) and counts each anchor's size once."""
    sizes: dict[str, int] = {}
    opened: list[tuple[int, str | None]] = []   # (count before the collection, its anchor)
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for _, anchor in opened):
                raise _refuse(path, "(yaml)", f"alias *{event.anchor} refers to a collection that contains it "
                              "(a structure without end)", "write the values out instead of the alias", line)
            total += sizes.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            opened.append((total, event.anchor))
            total += 1
            if len(opened) > MAX_DEPTH:
                raise _refuse(path, "(yaml)", f"nested more than {MAX_DEPTH} levels deep",
                              "flatten the structure: no twin file needs that depth", line)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            before, anchor = opened.pop()
            if anchor:
                sizes[anchor] = total - before
        if total > MAX_YAML_NODES:
            raise _refuse(path, "(yaml)", f"holds more than {MAX_YAML_NODES:,} values with its aliases expanded "
                          "(an alias bomb?)", "write a smaller file, with fewer aliases of large anchors", line)


def parse_yaml(path: Path, text: str) -> tuple[Any, yaml.Node | None]:
    """The data of one YAML document and its node tree (for line numbers), within the bounds above."""
    try:
        check_yaml_bounds(path, text)
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _yaml_error(path, exc, text) from None
    except RecursionError:  # the bounds above should make this impossible; never a traceback
        raise _refuse(path, "(yaml)", "nested too deeply to read", "flatten the structure") from None
    return data, root


def read_yaml(path: Path, *, within: Path | None = None, missing_fix: str = "check the path",
              ) -> tuple[Any, yaml.Node | None]:
    """read_text, then parse_yaml."""
    return parse_yaml(path, read_text(path, within=within, missing_fix=missing_fix))


# -- JSON -------------------------------------------------------------------------------------------


def _too_deep(value: Any) -> bool:
    """Whether `value` nests more than MAX_DEPTH lists and objects (iterative: any depth is safe here)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _deep_line(text: str) -> int | None:
    """The line where JSON text first nests more than MAX_DEPTH deep."""
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, m.start()) + 1
        elif token in "]}":
            depth -= 1
    return None


def parse_json(path: Path, text: str) -> Any:
    """JSON text, nested at most MAX_DEPTH deep; a syntax error names its line and column."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _refuse(path, "(json)", f"not valid JSON: {exc.msg}",
                      f"fix the syntax at that line (column {exc.colno})", exc.lineno) from None
    except RecursionError:
        value = None
    else:
        if not _too_deep(value):
            return value
    raise _refuse(path, "(json)", f"nested more than {MAX_DEPTH} levels deep",
                  "flatten the structure: no twin file needs that depth", _deep_line(text))


def read_json(path: Path, *, within: Path | None = None, missing_fix: str = "check the path") -> Any:
    """read_text, then parse_json."""
    return parse_json(path, read_text(path, within=within, missing_fix=missing_fix))


def config_db_problems(path: Path, db: Any) -> list[Problem]:
    """What keeps `db` from being a config_db.json at all: an object of tables, of entries, of fields whose
    values CONFIG_DB can hold (a string, or a list of strings for a leaf-list; numbers and true/false are
    taken as their text). Whether a value fits its field is for the config checks to judge."""
    if not isinstance(db, dict):
        return [Problem(str(path), "(document)", "a config_db.json is a JSON object of tables",
                        'write it as {"TABLE": {"key": {"field": "value"}}}', 1)]
    out = []
    for table, rows in db.items():
        if not isinstance(rows, dict):
            out.append(Problem(str(path), table, f"a table is an object of keys, not {type_name(rows)}",
                               f'write it as "{table}": {{"key": {{"field": "value"}}}}'))
            continue
        for key, row in rows.items():
            if not isinstance(row, dict):
                out.append(Problem(str(path), f"{table}|{key}", "an entry is an object of fields, not "
                                   f"{type_name(row)}",
                                   f'write it as "{key}": {{"field": "value"}} (an entry without fields is {{}})'))
                continue
            out += [Problem(str(path), f"{table}|{key} {field}", f"a value is a string or a list of strings, not "
                            f"{type_name(value)}", f'write it as "{field}": "value"')
                    for field, value in row.items() if not config_value(value)]
    return out


def config_value(value: Any) -> bool:
    """Whether CONFIG_DB can hold `value` in a field: a string, a number, true/false or a list of them."""
    scalar = (str, int, float, bool)
    return isinstance(value, scalar) or (isinstance(value, list) and all(isinstance(v, scalar) for v in value))


def type_name(value: Any) -> str:
    """A value's type in a message's words: null, a list, a string, ..."""
    names = {list: "a list", dict: "an object", str: "a string", bool: "true/false", int: "a number",
             float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def read_config_db(path: Path, *, within: Path | None = None,
                   missing_fix: str = "create it or fix the path") -> ConfigDb:
    """A config_db.json: read_json, then config_db_problems; every problem in one PlanError. A null
    value is the text "None", as SONiC's configdb load stores it (ConfigDBConnector's typed_to_raw
    takes str() of every value; `sonic-cfggen --print-data` prints DEVICE_METADATA's region as null)."""
    db = read_json(path, within=within, missing_fix=missing_fix)
    if isinstance(db, dict):
        db = {table: {key: {f: "None" if v is None else v for f, v in row.items()} if isinstance(row, dict) else row
                      for key, row in rows.items()} if isinstance(rows, dict) else rows
              for table, rows in db.items()}
    problems = config_db_problems(path, db)
    if problems:
        raise PlanError(problems)
    out: ConfigDb = db
    return out
