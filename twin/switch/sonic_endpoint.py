"""A docker-sonic-vs switch as the gNMI agent sees it: its SONiC redis databases, written as one
transaction, judged by twin's checks of the tables twin renders (SONiC's own daemons judge the rest)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from twin.model.agent import AgentSwitch
from twin.stages import configdb
from twin.stages.configdb import GENERATED_TABLES, ConfigDb
from twin.switch.endpoint_protocol import SetRejected
from twin.switch.redis.redis_budget import ConnectionBudget
from twin.switch.redis.sonic_redis import SonicRedis


class SonicEndpoint:
    """A docker-sonic-vs switch as the gNMI agent sees it, over the container's redis.

    Satisfies `twin.switch.endpoint_protocol.SwitchEndpoint`, like twin's own switch
    (twin.switch.twin_endpoint.TwinSwitchEndpoint): the same CONFIG_DB paths, the same validation,
    the same databases."""

    def __init__(self, name: str, ports: Iterable[str], db: SonicRedis, own: SonicRedis | None = None) -> None:
        self.name = name
        self.ports = set(ports)
        self.db = db                  # what clients read through (Get, Subscribe)
        self.own = own or db          # what a Set reads and writes CONFIG_DB through, one Set at a time
        self.lock = threading.RLock()
        self.workdir: Path | None = None  # the gNMI work files stay out of a SONiC container

    @classmethod
    def from_settings(cls, sw: AgentSwitch) -> SonicEndpoint:
        """From one agent.json switch entry: `redis_socket`, or `redis_host`/`redis_port`. Clients
        read over a bounded budget of connections (twin.switch.redis.redis_budget); Sets over their own."""
        own = SonicRedis(unix_socket=Path(sw.redis_socket) if sw.redis_socket else None,
                         host=sw.redis_host, port=sw.redis_port)
        return cls(name=sw.name, ports=sw.ports, db=own.apart(ConnectionBudget()), own=own)

    def config(self) -> ConfigDb:
        """The switch's CONFIG_DB, read from redis now."""
        return self.own.get_config()

    def commit(self, new: ConfigDb, current: ConfigDb | None = None) -> None:
        """Make CONFIG_DB exactly `new`: judged, then its difference written in one transaction.

        SetRejected (nothing written) when it is invalid. The switch's daemons apply the change."""
        with self.lock:
            errors = self._problems(new)
            if errors:
                raise SetRejected("; ".join(errors))
            self._write(self.config() if current is None else current, new)

    def _write(self, current: ConfigDb, new: ConfigDb) -> None:
        """Write the change to CONFIG_DB; SONiC's daemons program the switch from there."""
        self.own.apply_config(current, new)

    def recover(self) -> None:
        """Nothing to recover: a commit is one MULTI/EXEC, which redis applies whole or not at
        all, so a crash of the agent cannot leave CONFIG_DB half-written."""

    def _problems(self, new: ConfigDb) -> list[str]:
        """twin's checks of the tables it renders (SONiC's own daemons judge the rest)."""
        if not isinstance(new, dict):
            return configdb.validate(new)
        errors = configdb.validate({t: rows for t, rows in new.items() if t in GENERATED_TABLES})
        return errors or self._missing_ports(new)

    def _missing_ports(self, new: ConfigDb) -> list[str]:
        """The PORT entries naming ports this switch does not have (as TwinSwitchEndpoint reports them)."""
        missing = sorted(set(new.get("PORT", {})) - self.ports, key=lambda p: int(p.removeprefix("Ethernet")))
        if not missing:
            return []
        return [f"PORT: {', '.join(missing)} do not exist on {self.name} "
                f"(it has {len(self.ports)} ports wired in this lab)"]
