"""twin's own switch as its management plane sees it: the same redis front as docker-sonic-vs.

Config and state are read from the switch's own SONiC databases (twin.switch.redis.redis_server)
exactly as `SonicEndpoint` reads a docker-sonic-vs container's. A commit is validated whole,
written ahead as `config_db.json.pending`, written to CONFIG_DB in one MULTI/EXEC, programmed
by the switch's config daemon (twin.switch.config.cfgmgr) and saved to `config_db.json` (sonic-gnmi
saves after a Set). When the kernel or FRR refuses the change, CONFIG_DB and the switch are put
back and the Set fails. If the agent dies half-way, `recover()` on the next start puts CONFIG_DB
back to the saved config_db.json and the config daemon programs the switch from it: the switch
runs the old config or the new one, never a mix.
"""

from __future__ import annotations

from pathlib import Path

from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.switch.config.cfgmgr import ConfigDaemon, ProgramError
from twin.switch.endpoint_protocol import SetRejected
from twin.switch.redis.redis_budget import ConnectionBudget
from twin.switch.sonic_endpoint import SonicEndpoint

__all__ = ["SetRejected", "TwinSwitchEndpoint"]


class TwinSwitchEndpoint(SonicEndpoint):
    """Clients (Get, Subscribe) read over a bounded budget of connections of their own
    (twin.switch.redis.redis_budget), apart from the config daemon's; a Set reads and writes CONFIG_DB
    over the config daemon's connections, one Set at a time."""

    def __init__(self, name: str, rundir: Path, ports: list[str], daemon: ConfigDaemon) -> None:
        super().__init__(name=name, ports=ports, db=daemon.db.apart(ConnectionBudget()), own=daemon.db)
        self.daemon, self.rundir = daemon, rundir
        self.workdir = rundir
        self.path = rundir / "config_db.json"
        self.pending = rundir / "config_db.json.pending"

    def _problems(self, new: ConfigDb) -> list[str]:
        errors = configdb.validate(new)
        return errors or self._missing_ports(new)

    def _write(self, current: ConfigDb, new: ConfigDb) -> None:
        with self.daemon.lock:
            try:
                configdb.save(self.pending, new)
                self.own.apply_config(current, new)
                self.daemon.set_cache(new)
                self.daemon.program(new)
                configdb.save(self.path, new)
            except Exception as exc:  # refused by FRR or the kernel, or failed on the way: undo all
                self._undo(current)
                reason = str(exc) if isinstance(exc, ProgramError) else f"{type(exc).__name__}: {exc}"
                raise SetRejected(reason) from None
            finally:
                self.pending.unlink(missing_ok=True)

    def _undo(self, current: ConfigDb) -> None:
        """CONFIG_DB, the config daemon and the switch back to `current` (what was saved)."""
        self.own.apply_config(self.own.get_config(), current)
        self.daemon.set_cache(current)
        self.daemon.program(current, tolerant=True)

    def recover(self) -> None:
        """Undo a commit a crash interrupted: CONFIG_DB back to the saved config_db.json (the
        config daemon then programs the switch from it when it starts)."""
        if not self.pending.exists():
            return
        try:
            saved = configdb.load(self.path)
        except (OSError, ValueError):
            saved = None
        if saved is not None:
            self.own.apply_config(self.own.get_config(), saved)
        self.pending.unlink(missing_ok=True)
