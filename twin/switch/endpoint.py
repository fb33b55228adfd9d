"""twin's own switch as its management plane sees it: the same redis front as docker-sonic-vs.

Config and state are read from the switch's own SONiC databases (twin.switch.redis_server)
exactly as `SonicEndpoint` reads a docker-sonic-vs container's. A commit is validated whole,
written ahead as `config_db.json.pending`, written to CONFIG_DB in one MULTI/EXEC, programmed
by the switch's config daemon (twin.switch.cfgmgr) and saved to `config_db.json` (sonic-gnmi
saves after a Set). When the kernel or FRR refuses the change, CONFIG_DB and the switch are put
back and the Set fails. If the agent dies half-way, `recover()` on the next start puts CONFIG_DB
back to the saved config_db.json and the config daemon programs the switch from it: the switch
runs the old config or the new one, never a mix.
"""

from __future__ import annotations

from pathlib import Path

from twin.switch import configdb
from twin.switch.cfgmgr import ConfigDaemon, ProgramError
from twin.switch.configdb import ConfigDb
from twin.switch.endpoint_protocol import SetRejected
from twin.switch.sonic_redis import SonicEndpoint

__all__ = ["Endpoint", "SetRejected"]


class Endpoint(SonicEndpoint):
    def __init__(self, name: str, rundir: Path, ports: list[str], daemon: ConfigDaemon) -> None:
        super().__init__(name=name, ports=ports, db=daemon.db)
        self.daemon, self.rundir = daemon, rundir
        self.workdir = rundir
        self.path = rundir / "config_db.json"
        self.pending = rundir / "config_db.json.pending"

    def _problems(self, new: ConfigDb) -> list[str]:
        errors = configdb.validate(new)
        return errors or self._missing_ports(new)

    def _write(self, current: ConfigDb, new: ConfigDb) -> None:
        with self.daemon.lock:
            configdb.save(self.pending, new)
            self.db.apply_config(current, new)
            self.daemon.set_cache(new)
            try:
                self.daemon.program(new)
            except ProgramError as exc:
                self.db.apply_config(new, current)
                self.daemon.set_cache(current)
                self.daemon.program(current, tolerant=True)
                self.pending.unlink()
                raise SetRejected(str(exc)) from None
            configdb.save(self.path, new)
            self.pending.unlink()

    def recover(self) -> None:
        """Undo a commit a crash interrupted: CONFIG_DB back to the saved config_db.json (the
        config daemon then programs the switch from it when it starts)."""
        if not self.pending.exists():
            return
        try:
            saved = configdb.load(self.path)
        except ValueError:
            saved = None
        if saved is not None:
            self.db.apply_config(self.db.get_config(), saved)
        self.pending.unlink()
