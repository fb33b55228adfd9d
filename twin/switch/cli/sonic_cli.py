"""SONiC's database and config commands inside a twin switch: `sonic-db-cli` and `config save/load/reload`.

Run as `python -m twin.switch.cli.sonic_cli --rundir DIR sonic-db-cli ...` (or `... config ...`):
`twin exec` maps the SONiC command names here (the root user's own tool: FILE is any host path).
The switch's SSH shell calls `db_cli` itself; its `config` is twin.switch.cli.config_cli, whose files
stay in the switch's directory.

- `sonic-db-cli DB COMMAND [ARGS...]` sends one redis command to database DB of the switch (names
  from database_config.json); `sonic-db-cli PING` pings the instance. Output as SONiC's C++
  sonic-db-cli prints it: HGETALL as a Python-style dict, lists one element per line, nothing for nil.
  Redis commands that reach beyond the databases (CONFIG SET, MODULE, ...) are refused
  (twin.switch.cli.redis_guard).
- `config save [-y] [FILE]`: CONFIG_DB -> FILE (default the switch's config_db.json).
- `config load [-y] [FILE]`: FILE merged into CONFIG_DB field by field (`sonic-cfggen -j FILE
  --write-to-db`); the config daemons program what changed.
- `config reload [-y] [FILE]`: CONFIG_DB becomes exactly FILE (on SONiC services restart around
  the flush; here the config daemons reprogram the difference).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis

from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.switch.cli.redis_guard import redis_refusal
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis, as_stored, database

TOOLS = ("sonic-db-cli", "config")


def format_reply(command: str, reply: Any) -> str:
    """A redis reply as sonic-db-cli prints it."""
    if reply is None:
        return ""
    if isinstance(reply, dict) or command.lower() == "hgetall":
        pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2], strict=True)
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in pairs) + "}\n"
    if isinstance(reply, list | tuple | set):
        return "".join(f"{item}\n" for item in reply)
    if isinstance(reply, bool):
        return "True\n" if reply else "False\n"
    return f"{reply}\n"


def db_cli(db: SonicRedis, args: Sequence[str]) -> tuple[int, str]:
    """(exit code, output) of one sonic-db-cli invocation."""
    if not args or args[0] in ("-h", "--help"):
        return 0, ("usage: sonic-db-cli [DB COMMAND [ARGS ...] | PING]\n"
                   "Example: sonic-db-cli CONFIG_DB hgetall 'PORT|Ethernet0'\n")
    if [a.upper() for a in args] == ["PING"]:
        return 0, format_reply("ping", db.client("CONFIG_DB").ping())
    if len(args) < 2:
        return 1, "usage: sonic-db-cli DB COMMAND [ARGS ...]\n"
    try:
        database(args[0])
    except ValueError as exc:
        return 1, f"{exc}\n"
    refused = redis_refusal(args[1:])
    if refused is not None:
        return 1, f"{refused}\n"
    try:
        reply = db.client(args[0]).execute_command(*args[1:])  # type: ignore[no-untyped-call]
    except redis.ResponseError as exc:
        return 1, f"{exc}\n"
    return 0, format_reply(args[1], reply)


def config_cmd(db: SonicRedis, rundir: Path, args: Sequence[str]) -> tuple[int, str]:
    """(exit code, output) of `config save|load|reload [-y] [FILE]`."""
    words = [a for a in args if a not in ("-y", "--yes")]
    if not words or words[0] not in ("save", "load", "reload"):
        return 2, "usage: config {save|load|reload} [-y] [FILE]\n"
    action = words[0]
    path = Path(words[1]) if len(words) > 1 else rundir / "config_db.json"
    if action == "save":
        configdb.save(path, db.get_config())
        return 0, f"Saved CONFIG_DB to {path}\n"
    try:
        new = as_stored(configdb.load(path))
    except (OSError, ValueError, AttributeError) as exc:
        return 2, f"config {action}: cannot read {path}: {exc}\n"
    current = db.get_config()
    if action == "load":
        new = merged(current, new)
    db.apply_config(current, new)
    return 0, f"{'Loaded' if action == 'load' else 'Reloaded'} {path} into CONFIG_DB\n"


def merged(current: ConfigDb, new: ConfigDb) -> ConfigDb:
    """`new` merged into `current` field by field, as `sonic-cfggen -j FILE --write-to-db` writes it."""
    out = {t: {k: dict(r) for k, r in rows.items()} for t, rows in current.items()}
    for table, rows in new.items():
        for key, row in rows.items():
            out.setdefault(table, {}).setdefault(key, {}).update(row)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="twin.switch.cli.sonic_cli")
    parser.add_argument("--rundir", type=Path, required=True)
    parser.add_argument("tool", choices=TOOLS)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    db = SonicRedis(unix_socket=socket_path(ns.rundir))
    try:
        if ns.tool == "sonic-db-cli":
            code, out = db_cli(db, ns.args)
        else:
            code, out = config_cmd(db, ns.rundir, ns.args)
    except redis.ConnectionError as exc:
        code, out = 1, f"cannot reach the switch's databases at {socket_path(ns.rundir)}: {exc}\n"
    (sys.stdout if code == 0 else sys.stderr).write(out)
    return code


def tool_argv(rundir: Path, cmd: Sequence[str]) -> list[str] | None:
    """The argv running `cmd` when it is one of SONiC's tools twin provides, else None."""
    if cmd and cmd[0] in TOOLS:
        return [sys.executable, "-m", "twin.switch.cli.sonic_cli", "--rundir", str(rundir), *cmd]
    return None


if __name__ == "__main__":
    sys.exit(main())
