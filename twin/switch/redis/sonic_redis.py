"""A switch behind twin's gNMI agent, through SONiC's redis databases: one model for every runtime.

docker-sonic-vs runs no gNMI server, so the agent fronts it: Get reads CONFIG_DB, APPL_DB,
STATE_DB and COUNTERS_DB live from the container's redis; Set validates the whole new config,
then writes only the difference to CONFIG_DB in one MULTI/EXEC, and SONiC's own daemons
(bgpcfgd, portmgrd, intfmgrd, ...) react to it. twin's own switches keep the same databases
(twin.switch.redis.redis_server) and are served by the same code (twin.switch.twin_endpoint subclasses
SonicEndpoint); there twin's daemons (twin.switch.config.cfgmgr, twin.switch.state.producers) play SONiC's.

Layout, from sonic-swss-common `common/database_config.json` (sonic-buildimage's
`dockers/docker-database/database_config.json.j2` has the same ids and separators for these
and adds databases from id 8 up): one redis instance (127.0.0.1:6379, unix socket
/var/run/redis/redis.sock), databases by number, keys `TABLE<separator>KEY`. A key without
the separator is a flat hash (COUNTERS_PORT_NAME_MAP: port -> oid) or SONiC bookkeeping
(CONFIG_DB_INITIALIZED, a string). CONFIG_DB fields whose name ends in `@` hold comma-separated
lists, which config_db.json writes as JSON lists, and an entry with no fields is stored as
`NULL: NULL` (swsscommon ConfigDBConnector.typed_to_raw / raw_to_typed, which sonic-cfggen uses).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from redis.typing import EncodableT, FieldT

from twin.stages.configdb import ConfigDb
from twin.switch.redis.redis_budget import BudgetPool, ConnectionBudget


@dataclass(frozen=True)
class Database:
    """One of SONiC's logical databases: its redis database number and key separator."""

    name: str
    id: int
    separator: str


# sonic-swss-common common/database_config.json, "DATABASES" (instance "redis" for all).
DATABASES: dict[str, Database] = {d.name: d for d in (
    Database("APPL_DB", 0, ":"),
    Database("ASIC_DB", 1, ":"),
    Database("COUNTERS_DB", 2, ":"),
    Database("LOGLEVEL_DB", 3, ":"),
    Database("CONFIG_DB", 4, "|"),
    Database("PFC_WD_DB", 5, ":"),
    Database("FLEX_COUNTER_DB", 5, ":"),
    Database("STATE_DB", 6, "|"),
    Database("SNMP_OVERLAY_DB", 7, "|"),
)}

CONFIG_DB_INITIALIZED = "CONFIG_DB_INITIALIZED"  # ConfigDBConnector.INIT_INDICATOR: a string key, not a table
NULL_FIELD = "NULL"  # the placeholder field of an entry that has no fields
LIST_SUFFIX = "@"  # a field name ending in @ holds a comma-separated list

RawRow = dict[str, str]  # a redis hash as stored: field -> string

# Whole-database reads and writes run in redis as one script each: a switch's CONFIG_DB at 64 x 128
# is about 1,600 hashes, and a command apiece through redis-py cost 20 ms of CPU a switch to read
# and 15 ms to write, where one script's reply or argument is parsed in C (hiredis, Lua's cjson).
# ARGV[1]: the separator, glob-escaped. Reply: name, {field, value, ...}, name, ... of every hash
# whose name holds it.
READ_CONFIG = """
local out = {}
for _, name in ipairs(redis.call('KEYS', '*' .. ARGV[1] .. '*')) do
  if redis.call('TYPE', name).ok == 'hash' then
    out[#out + 1] = name
    out[#out + 1] = redis.call('HGETALL', name)
  end
end
return out
"""
# ARGV[1]: JSON [name, [field, value, ...], ...]; ARGV[2]: the key set to 1 once they are written.
LOAD_CONFIG = """
redis.call('FLUSHDB')
local rows = cjson.decode(ARGV[1])
for i = 1, #rows, 2 do
  local fields = rows[i + 1]
  for j = 1, #fields, 1000 do
    redis.call('HSET', rows[i], unpack(fields, j, math.min(j + 999, #fields)))
  end
end
redis.call('SET', ARGV[2], '1')
return #rows / 2
"""

# The state producers' writes to one database, as one script (write_rows): a switch's first pass is a few
# thousand hashes (a spine's 64 ports' counters, their queues' and PGs' rows), and redis-py packing an
# HSET apiece into a pipeline cost the agent 29-30 ms of CPU per 1,344 rows against 12 ms for the
# same writes as one JSON argument (redis itself 6.5 ms against 10-13 ms): the agent serves every
# switch from one process, and its first pass runs while the fabric's sessions come up.
# ARGV[1]: JSON [[kind, name, arg, ...], ...]: 'h' HSET name field value ..., 'x' HDEL name field ...,
# 'd' DEL name; in order. Keyspace events are those of the same commands sent one by one, but for
# a hash of more than 3,500 fields (a spine's queue name map has 1,280), written by several HSETs:
# Lua unpacks at most 8,000 values at once.
WRITE_ROWS = """
local ops = cjson.decode(ARGV[1])
for i = 1, #ops do
  local op = ops[i]
  if op[1] == 'd' then
    redis.call('DEL', op[2])
  else
    local command = op[1] == 'h' and 'HSET' or 'HDEL'
    for j = 3, #op, 7000 do
      redis.call(command, op[2], unpack(op, j, math.min(j + 6999, #op)))
    end
  end
end
return #ops
"""


# -- keys and values, as pure functions --------------------------------------------------------

def database(name: str) -> Database:
    """The layout of database `name`; ValueError for a name SONiC does not define."""
    try:
        return DATABASES[name]
    except KeyError:
        raise ValueError(f"unknown SONiC database '{name}'; known: {', '.join(DATABASES)}") from None


def redis_key(db: str, table: str, key: str | None = None) -> str:
    """The redis key of `key` in `table` of `db` (`BGP_NEIGHBOR|default|10.0.0.1`,
    `ROUTE_TABLE:10.1.0.0/24`); the bare table name for a flat hash (key None)."""
    return table if key is None else f"{table}{database(db).separator}{key}"


def split_key(db: str, raw: str) -> tuple[str, str | None]:
    """`(table, key)` of a redis key of `db`, split at the first separator as swsscommon does
    (keys may hold the separator again: `BGP_NEIGHBOR|default|10.0.0.1`); `(raw, None)` for a
    key without one, such as the flat hash COUNTERS_PORT_NAME_MAP."""
    table, sep, key = raw.partition(database(db).separator)
    return (table, key) if sep else (raw, None)


def raw_to_typed(raw: Mapping[str, str]) -> dict[str, Any]:
    """A CONFIG_DB hash as config_db.json writes it: `NULL` dropped, `name@` fields as lists.

    An empty `name@` value reads as an empty list (swsscommon would give `[""]`), so that
    `typed_to_raw` and `raw_to_typed` round-trip every list.

    Names and values are interned: a switch's CONFIG_DB repeats them from port to port ("up",
    "9100", a buffer profile) and every switch of a lab repeats the others', and an agent keeps
    each switch's CONFIG_DB for as long as it runs (one copy of each string, not one per row)."""
    typed: dict[str, Any] = {}
    for name, value in raw.items():
        if name == NULL_FIELD:
            continue
        if name.endswith(LIST_SUFFIX):
            items = value.split(",") if value else []
            typed[sys.intern(name.removesuffix(LIST_SUFFIX))] = [sys.intern(v) for v in items]
        else:
            typed[sys.intern(name)] = sys.intern(value)
    return typed


def typed_to_raw(typed: Mapping[str, Any]) -> RawRow:
    """A config_db.json entry as SONiC stores it: lists as `name@` comma-joined, everything else
    as a string, and an entry with no fields as `NULL: NULL` (redis has no empty hashes)."""
    if not typed:
        return {NULL_FIELD: NULL_FIELD}
    raw: RawRow = {}
    for name, value in typed.items():
        if isinstance(value, list | tuple):
            raw[name + LIST_SUFFIX] = ",".join(str(v) for v in value)
        else:
            raw[name] = str(value)
    return raw


def as_stored(db: ConfigDb) -> ConfigDb:
    """`db` as it reads back from CONFIG_DB: every value a string, lists as lists of strings."""
    return {table: {key: raw_to_typed(typed_to_raw(row or {})) for key, row in rows.items()}
            for table, rows in db.items()}


@dataclass
class ConfigWrite:
    """The redis commands that turn one CONFIG_DB into another, touching only what differs."""

    hset: dict[str, RawRow] = field(default_factory=dict)  # redis key -> fields to add or change
    hdel: dict[str, list[str]] = field(default_factory=dict)  # redis key -> fields to remove
    delete: list[str] = field(default_factory=list)  # redis keys to remove whole

    @property
    def empty(self) -> bool:
        """True when the two configs are the same and nothing is to be written."""
        return not (self.hset or self.hdel or self.delete)


def config_write(old: ConfigDb, new: ConfigDb) -> ConfigWrite:
    """What to write to a CONFIG_DB holding `old` so that it holds `new`.

    Compared field by field in stored form, so a list field changing into a string (`ports@`
    into `ports`) or an empty entry gaining fields (`NULL` goes) is written exactly."""
    out = ConfigWrite()
    for table in sorted(old.keys() | new.keys()):
        before, after = old.get(table, {}), new.get(table, {})
        for key in sorted(before.keys() | after.keys()):
            name = redis_key("CONFIG_DB", table, key)
            if key not in after:
                out.delete.append(name)
                continue
            raw_new = typed_to_raw(after[key])
            raw_old = typed_to_raw(before[key]) if key in before else {}
            changed = {f: v for f, v in raw_new.items() if raw_old.get(f) != v}
            gone = sorted(raw_old.keys() - raw_new.keys())
            if changed:
                out.hset[name] = changed
            if gone:
                out.hdel[name] = gone
    return out


def glob_escape(text: str) -> str:
    """`text` as a literal in a redis SCAN MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


# -- the databases of one SONiC switch ---------------------------------------------------------

DRIVER_INFO = None   # redis-py's driver_info: None sends no CLIENT SETINFO on connecting


class SonicRedis:
    """SONiC's redis databases of one switch: one redis instance, databases by number.

    Each instance has connections of its own; with a `budget` (twin.switch.redis.redis_budget) the
    connections it has in use at once, over every database, are bounded by it. A connection selects
    its database and nothing more, as swsscommon's does: no CLIENT SETINFO (redis-py's default sends
    two, which Debian 12's redis 7.0 refuses, and reads the package's metadata for each connection
    and each client; DRIVER_INFO)."""

    def __init__(self, unix_socket: Path | None = None, host: str = "127.0.0.1", port: int = 6379,
                 timeout: float = 10, budget: ConnectionBudget | None = None) -> None:
        self.unix_socket, self.host, self.port, self.timeout = unix_socket, host, port, timeout
        self.budget = budget
        self._clients: dict[tuple[int, bool], redis.Redis] = {}
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        """Where the redis is, for messages."""
        return f"unix:{self.unix_socket}" if self.unix_socket is not None else f"{self.host}:{self.port}"

    def client(self, db: str, decode: bool = True) -> redis.Redis:
        """A client (thread-safe, pooled) on database `db`; made once per database number.
        `decode=False`: values come back as bytes (a proto's `pb` field is binary)."""
        key = (database(db).id, decode)
        with self._lock:
            if key not in self._clients:
                if self.budget is not None:
                    self._clients[key] = redis.Redis(connection_pool=self._budget_pool(key[0], decode))
                elif self.unix_socket is not None:
                    self._clients[key] = redis.Redis(unix_socket_path=str(self.unix_socket), db=key[0],
                                                     decode_responses=decode, socket_timeout=self.timeout,
                                                     driver_info=DRIVER_INFO)
                else:
                    self._clients[key] = redis.Redis(host=self.host, port=self.port, db=key[0],
                                                     decode_responses=decode, socket_timeout=self.timeout,
                                                     driver_info=DRIVER_INFO)
            return self._clients[key]

    def apart(self, budget: ConnectionBudget | None = None) -> SonicRedis:
        """The same databases over connections of their own (bounded by `budget` when given): what
        one user of the switch's redis does with its connections never takes another's."""
        return SonicRedis(unix_socket=self.unix_socket, host=self.host, port=self.port, timeout=self.timeout,
                          budget=budget)

    def _budget_pool(self, number: int, decode: bool) -> BudgetPool:
        assert self.budget is not None
        where: dict[str, object] = (
            {"connection_class": redis.UnixDomainSocketConnection, "path": str(self.unix_socket)}
            if self.unix_socket is not None else {"host": self.host, "port": self.port})
        return BudgetPool(self.budget, db=number, decode_responses=decode, socket_timeout=self.timeout,
                          driver_info=DRIVER_INFO, **where)

    def close(self) -> None:
        """Drop every connection."""
        with self._lock:
            for client in self._clients.values():
                client.close()
                client.connection_pool.disconnect()
            self._clients.clear()

    @staticmethod
    def _hashes(client: redis.Redis, names: list[str]) -> list[RawRow]:
        """HGETALL of every key in one MULTI/EXEC, so the rows are one consistent snapshot.
        A key that vanished or is not a hash reads as `{}`."""
        if not names:
            return []
        pipe = client.pipeline(transaction=True)
        for name in names:
            pipe.hgetall(name)
        rows = pipe.execute(raise_on_error=False)
        return [dict(row) if isinstance(row, dict) else {} for row in rows]

    def get_config(self) -> ConfigDb:
        """The whole CONFIG_DB as config_db.json: `{TABLE: {key: {field: value or list}}}`, read in
        one script (READ_CONFIG), so the rows are one consistent snapshot.

        Keys without the `|` separator are SONiC's bookkeeping (CONFIG_DB_INITIALIZED), not
        tables, and are left out, as ConfigDBConnector.get_config does."""
        client = self.client("CONFIG_DB")
        flat = client.register_script(READ_CONFIG)(args=[glob_escape(database("CONFIG_DB").separator)])
        db: ConfigDb = {}
        for i in range(0, len(flat), 2):
            table, key = split_key("CONFIG_DB", flat[i])
            pairs = flat[i + 1]
            if pairs and key is not None:
                db.setdefault(table, {})[key] = raw_to_typed(dict(zip(pairs[0::2], pairs[1::2], strict=True)))
        return {table: dict(sorted(rows.items())) for table, rows in sorted(db.items())}

    def load_config(self, config: ConfigDb) -> None:
        """CONFIG_DB := `config`, then CONFIG_DB_INITIALIZED = 1, in one script (LOAD_CONFIG): a
        reader sees the old database or the whole new one, never half."""
        rows: list[Any] = []
        for table, entries in config.items():
            for key, row in entries.items():
                fields = [x for pair in typed_to_raw(row or {}).items() for x in pair]
                rows += [redis_key("CONFIG_DB", table, key), fields]
        self.client("CONFIG_DB").register_script(LOAD_CONFIG)(
            args=[json.dumps(rows, ensure_ascii=False), CONFIG_DB_INITIALIZED])

    def write_rows(self, db: str, ops: str) -> None:
        """Database `db`'s writes `ops` (WRITE_ROWS's JSON argument) in one script, in order."""
        self.client(db).register_script(WRITE_ROWS)(args=[ops])

    def apply_config(self, old: ConfigDb, new: ConfigDb) -> ConfigWrite:
        """Turn CONFIG_DB from `old` into `new`, writing only the differences, in one MULTI/EXEC.

        Redis runs the transaction whole and alone: SONiC's daemons, woken by keyspace events,
        never read half a Set. HSET, HDEL and DEL on hashes cannot fail once queued."""
        write = config_write(old, new)
        if write.empty:
            return write
        pipe = self.client("CONFIG_DB").pipeline(transaction=True)
        for name, fields in write.hset.items():
            mapping: dict[FieldT, EncodableT] = {f: v for f, v in fields.items()}
            pipe.hset(name, mapping=mapping)
        for name, gone in write.hdel.items():
            pipe.hdel(name, *gone)
        if write.delete:
            pipe.delete(*write.delete)
        pipe.execute()
        return write

    def table(self, db: str, table: str) -> dict[str, Any]:
        """One table of `db` as stored: `{key: {field: value}}`, or `{field: value}` when the
        table is a flat hash (COUNTERS_PORT_NAME_MAP); `{}` when it does not exist.

        Only `TABLE<sep>*` hashes count: ProducerStateTable's `_TABLE:*` staging copies and
        `TABLE_KEY_SET` sets are not entries."""
        client = self.client(db)
        prefix = table + database(db).separator
        names = sorted(client.scan_iter(match=glob_escape(prefix) + "*", count=1000))
        if not names:
            return dict(self._hashes(client, [table])[0])
        return {name[len(prefix):]: raw for name, raw in zip(names, self._hashes(client, names), strict=True) if raw}
