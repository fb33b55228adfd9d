"""What the switch's CLI reads and writes: FRR through vtysh, the switch's redis databases.

`SwitchData` is what `show` and `config` need; `SwitchView` is it for a twin switch (vtysh on the
switch's run directory, redis on its socket). Every vtysh line passes the vtysh guard, also the
ones built from a user's arguments (`show ip route ARGS`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from redis.typing import EncodableT, FieldT

from twin.stages.configdb import ConfigDb
from twin.switch.cli.vtysh_guard import VTYSH_CONF, Vtysh, VtyshRefused, refusal, vtysh_conf
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis
from twin.switch.system_files import DEFAULT_HOSTNAME

CLEAN_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "VTYSH_PAGER": "cat"}


class SwitchData(Protocol):
    name: str
    rundir: Path

    def vtysh(self, line: str) -> str: ...

    def config(self) -> ConfigDb: ...

    def appl_table(self, table: str) -> dict[str, dict[str, str]]: ...

    def hgetall(self, db: str, key: str) -> dict[str, str]: ...

    def mod_entry(self, table: str, key: str, fields: dict[str, str]) -> None: ...

    def replace_config(self, old: ConfigDb, new: ConfigDb) -> None: ...

    def reload_config(self, new: ConfigDb) -> None: ...

    def hostname(self) -> str: ...


def vtysh_json(data: SwitchData, line: str) -> Any:
    """FRR's JSON answer to `line` ({} when it gives none)."""
    text = data.vtysh(line)
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}


Services = Callable[[ConfigDb], None]  # CONFIG_DB := config, the switch's services restarted around it


class SwitchView:
    """A twin switch: FRR's vty sockets and redis.sock in `rundir`; `services` restarts its services
    around a new CONFIG_DB (twin.switch.restart.config_reload, given by the agent that runs them)."""

    def __init__(self, name: str, rundir: Path, db: SonicRedis | None = None,
                 services: Services | None = None) -> None:
        self.name, self.rundir = name, rundir
        self.db = db or SonicRedis(unix_socket=socket_path(rundir))
        self.services = services

    def vtysh(self, line: str) -> str:
        why = refusal(line)
        if why is not None:
            raise VtyshRefused(why)
        self.vtysh_hostname()
        env = {**CLEAN_ENV, "HOME": str(self.rundir)}
        proc = subprocess.run(Vtysh(lines=(line,)).argv(self.rundir), capture_output=True, text=True,
                              timeout=60, env=env)
        return proc.stdout + proc.stderr

    def config(self) -> ConfigDb:
        return self.db.get_config()

    def appl_table(self, table: str) -> dict[str, dict[str, str]]:
        rows = self.db.table("APPL_DB", table)
        return {k: v for k, v in rows.items() if isinstance(v, dict)}

    def hgetall(self, db: str, key: str) -> dict[str, str]:
        """Every field of hash `key` in database `db` ({} when there is none): what SONiC's counter
        commands read (twin.switch.cli.counters_db)."""
        return {str(k): str(v) for k, v in self.db.client(db).hgetall(key).items()}

    def mod_entry(self, table: str, key: str, fields: dict[str, str]) -> None:
        """ConfigDBConnector.mod_entry: HSET of the fields on TABLE|key."""
        mapping: dict[FieldT, EncodableT] = dict(fields.items())
        self.db.client("CONFIG_DB").hset(f"{table}|{key}", mapping=mapping)

    def replace_config(self, old: ConfigDb, new: ConfigDb) -> None:
        self.db.apply_config(old, new)

    def hostname(self) -> str:
        """The switch's hostname: DEVICE_METADATA|localhost hostname, which SONiC's hostname-config
        service makes the system's (hostname-config.sh: 'sonic' when there is none)."""
        name = self.db.client("CONFIG_DB").hget("DEVICE_METADATA|localhost", "hostname")
        return str(name) if name else DEFAULT_HOSTNAME

    def vtysh_hostname(self) -> None:
        """vtysh takes its hostname (its prompt, the `hostname` line of its running config) from the
        system's when it starts, on SONiC DEVICE_METADATA's; here the switch's vtysh.conf says it
        (the namespace shares the host's), rewritten when the hostname has changed."""
        conf, wanted = self.rundir / VTYSH_CONF, vtysh_conf(self.hostname())
        try:
            if conf.read_text() == wanted:
                return
        except OSError:
            pass
        tmp = conf.with_suffix(".tmp")
        tmp.write_text(wanted)
        tmp.replace(conf)

    def reload_config(self, new: ConfigDb) -> None:
        """`config reload`: services stopped, CONFIG_DB := new, services started again."""
        if self.services is None:
            raise RuntimeError(f"{self.name}: its services run in the lab's agent, which did not give this "
                               "shell a way to restart them")
        self.services(new)
