"""SONiC's database instance of one switch: a Debian redis-server in the switch's namespace.

As on docker-sonic-vs (sonic-swss-common `common/database_config.json`): one instance named
`redis` at 127.0.0.1:6379 inside the switch, plus a unix socket (SONiC: /var/run/redis/redis.sock;
twin: `redis.sock` in the switch's run directory, where the agent on the host reaches it),
databases by number (APPL_DB 0, ASIC_DB 1, COUNTERS_DB 2, LOGLEVEL_DB 3, CONFIG_DB 4,
FLEX_COUNTER_DB 5, STATE_DB 6), keyspace notifications on (`AKE`, as swss sets them). Nothing is
persisted: config_db.json is the switch's saved config, loaded at boot as `config-setup` loads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import redis

from twin.host.poll import wait_until
from twin.stages.configdb import ConfigDb
from twin.switch.redis.sonic_redis import DATABASES, SonicRedis

SOCKET = "redis.sock"
PIDFILE = "redis.pid"
LOGFILE = "redis.log"
DATABASE_CONFIG = "database_config.json"
KEYSPACE_EVENTS = "AKE"
HZ = 1  # redis's background tasks a second (its default, and SONiC's: 10); see redis_argv


def socket_path(rundir: Path) -> Path:
    """Where the agent and `sonic-db-cli` reach this switch's redis."""
    return rundir / SOCKET


def redis_argv(rundir: Path) -> list[str]:
    """redis-server for one switch, run inside its namespace (127.0.0.1 there is the switch's own).

    Small on purpose: no persistence, no jemalloc background thread, and housekeeping once a second
    (HZ) where redis's default is 10: it expires keys (SONiC's databases set none) and times out idle
    clients (none time out), and at 10 Hz an idle redis takes 1.9 ms of CPU a second against 0.6 at
    1 Hz: 0.36 against 0.11 CPU for the 192 switches of labs/scale.yaml, taken from their BGP."""
    return ["redis-server", "--bind", "127.0.0.1", "--port", "6379", "--protected-mode", "no",
            "--unixsocket", str(socket_path(rundir)), "--unixsocketperm", "700",
            "--databases", "16", "--notify-keyspace-events", KEYSPACE_EVENTS,
            "--save", "", "--appendonly", "no", "--dir", str(rundir),
            "--daemonize", "yes", "--pidfile", str(rundir / PIDFILE),
            "--logfile", str(rundir / LOGFILE), "--loglevel", "warning",
            "--jemalloc-bg-thread", "no", "--hz", str(HZ),
            # as docker-database's redis.conf: a subscriber that falls behind is never disconnected
            "--client-output-buffer-limit", "pubsub 0 0 0"]


def database_config(rundir: Path) -> dict[str, Any]:
    """database_config.json as docker-sonic-vs lays it out, pointing at this switch's socket."""
    return {
        "INSTANCES": {"redis": {"hostname": "127.0.0.1", "port": 6379,
                                "unix_socket_path": str(socket_path(rundir)), "persistence_for_warm_boot": "no"}},
        "DATABASES": {d.name: {"id": d.id, "separator": d.separator, "instance": "redis"}
                      for d in DATABASES.values()},
        "VERSION": "1.0",
    }


def write_database_config(rundir: Path) -> None:
    (rundir / DATABASE_CONFIG).write_text(json.dumps(database_config(rundir), indent=4) + "\n")


def wait_ready(rundir: Path, timeout: float = 10) -> SonicRedis:
    """The switch's databases once redis answers on its socket; TimeoutError otherwise."""
    db = SonicRedis(unix_socket=socket_path(rundir), timeout=timeout)
    last: list[Exception] = []

    def answers() -> bool:
        try:
            return socket_path(rundir).exists() and bool(db.client("CONFIG_DB").ping())
        except (OSError, redis.ConnectionError) as exc:  # still starting
            last[:] = [exc]
            return False

    wait_until(answers, timeout, 0.005, lambda: TimeoutError(
        f"redis of {rundir.name} did not answer ({last[0] if last else 'no socket'}; see {rundir / LOGFILE})"))
    return db


def config_load(db: SonicRedis, config: ConfigDb) -> None:
    """CONFIG_DB := `config` at boot, as `config-setup` does (`sonic-cfggen -j config_db.json
    --write-to-db`, then CONFIG_DB_INITIALIZED = 1): one script, so daemons never see half."""
    db.load_config(config)
