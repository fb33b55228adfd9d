"""The legacy handler's redis (sonic-gnmi sonic_data_client/db_client.go at 5ec1c20b): a database's
client with go-redis's error texts, `tablePath` (where a piece of a gNMI path lives in redis) and
TableData2Msi / Msi2TypedValue, which read it into the JSON_IETF answer. twin.switch.sonic_gnmi.legacy
has the handler."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import grpc
import redis
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.redis_budget import ClientsExhausted
from twin.switch.redis.sonic_redis import DATABASES
from twin.switch.sonic_gnmi.golang import go_json
from twin.switch.sonic_gnmi.paths import counters_keyed

# sonic-gnmi proto/sonic.proto `enum Target` (OTHERS is not a database).
TARGETS = ("APPL_DB", "ASIC_DB", "COUNTERS_DB", "CONFIG_DB", "PFC_WD_DB", "FLEX_COUNTER_DB", "STATE_DB",
           "CHASSIS_STATE_DB")
COUNTERS_DB = "COUNTERS_DB"
REDIS_NIL = "redis: nil"  # go-redis's error for a missing key or field

Msi = dict[str, Any]  # Go's map[string]interface{}: field -> value, or key -> {field: value}


class GoError(Exception):
    """A plain Go `error` inside sonic-gnmi; its text is what reaches the client. `code`: the status
    it ends a call with where not the handler's own (RESOURCE_EXHAUSTED: the switch's redis
    connections for clients all in use, twin.switch.redis.redis_budget)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


# -- redis, as go-redis answers ----------------------------------------------------------------

class GoRedis:
    """One database's redis client with go-redis's error texts (`redis: nil`, server errors)."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except ClientsExhausted as e:
            raise GoError(str(e), grpc.StatusCode.RESOURCE_EXHAUSTED) from None
        except redis.RedisError as e:
            raise GoError(str(e)) from None

    def hgetall(self, key: str) -> dict[str, str]:
        return dict(cast(dict[str, str], self._call(lambda: self.client.hgetall(key))))

    def hget(self, key: str, name: str) -> str | None:
        """HGET; None where go-redis returns `redis.Nil`."""
        return cast(str | None, self._call(lambda: self.client.hget(key, name)))

    def hget_or_nil(self, key: str, name: str) -> str:
        """HGET as `.Result()` gives it: a missing field is the error `redis: nil`."""
        value = self.hget(key, name)
        if value is None:
            raise GoError(REDIS_NIL)
        return value

    def keys(self, pattern: str) -> list[str]:
        return list(cast(list[str], self._call(lambda: self.client.keys(pattern))))

    def exists(self, key: str) -> bool:
        return cast(int, self._call(lambda: self.client.exists(key))) == 1

    def hexists(self, key: str, name: str) -> bool:
        return bool(self._call(lambda: self.client.hexists(key, name)))

    def scan(self, pattern: str) -> list[str]:
        return cast(list[str], self._call(lambda: list(self.client.scan_iter(match=pattern))))


# -- tablePath ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class TablePath:
    """db_client.go `tablePath`: where one piece of a gNMI path lives in redis.

    `json_key`/`json_field` (jsonTableKey/jsonField) name it in the JSON answer when they differ
    from the redis key (virtual paths: `Ethernet0` for `COUNTERS:oid:0x...`)."""

    db: str
    table: str
    key: str = ""
    sep: str = ""
    field: str = ""
    json_table: str = ""
    json_key: str = ""
    json_field: str = ""
    virtual: bool = False

    @property
    def redis_key(self) -> str:
        """`TABLE<sep>key`, or `TABLE` for a flat hash (dbField*Subscribe, tableData2TypedValue)."""
        return f"{self.table}{self.sep}{self.key}" if self.key else self.table

    def go_repr(self) -> str:
        """The struct as Go's `%v` prints it (in the psubscribe failure message)."""
        values = ["", self.db, self.table, self.key, self.sep, self.field, "", "", "0", "0", self.json_table,
                  self.json_key, "", self.json_field, "true" if self.virtual else "false"]
        return "{" + " ".join(values) + "}"


def is_target_db(target: str) -> tuple[str, bool]:
    """db_client.go IsTargetDb on a single-namespace switch: `(dbName, valid)`; `DB/ns` is allowed,
    more than one `/` is not."""
    parts = target.split("/")
    return parts[0], len(parts) <= 2 and parts[0] in TARGETS


def separator(db: str) -> str:
    """GetTableKeySeparator: the database's separator; "" for one redis does not configure."""
    layout = DATABASES.get(db)
    return layout.separator if layout is not None else ""


def go_path_list(names: list[str]) -> str:
    """A Go `[]string` as `%v` prints it: `[STATE_DB PORT_TABLE]`."""
    return "[" + " ".join(names) + "]"


def msi_to_typed_value(msi: Msi) -> Any:
    """Msi2TypedValue: the map as JSON_IETF, whatever encoding the request asked for."""
    return gnmi_pb2.TypedValue(json_ietf_val=go_json(msi))


def string_value(value: str) -> Any:
    """A single field's value: a string_val (tableData2TypedValue, dbFieldSubscribe)."""
    return gnmi_pb2.TypedValue(string_val=value)


# -- reading redis into JSON (TableData2Msi) ---------------------------------------------------

def table_data_to_msi(rdb: GoRedis, tp: TablePath, use_key: bool, msi: Msi) -> None:
    """TableData2Msi: add `tp`'s data to `msi`.

    A whole table is `{key: {field: value}}` (keys after the first separator); one key (unless
    `use_key`) is its fields merged flat; a virtual path puts its data under `json_key` (one
    field only, when it has `json_field`; a missing field is skipped). Empty hashes are skipped."""
    if not tp.key:
        flat = tp.db == COUNTERS_DB and not counters_keyed(tp.db, tp.table)
        keys = rdb.keys(tp.table if flat else f"{tp.table}{tp.sep}*")
    else:
        keys = [f"{tp.table}{tp.sep}{tp.key}"]
    if tp.json_field and tp.json_key:
        value = rdb.hget(keys[0], tp.field) if keys else None
        if value is not None:
            msi[tp.json_key] = {tp.json_field: value}
        return
    for key in keys:
        fields = rdb.hgetall(key)
        if not fields:
            continue
        if tp.json_key:
            msi[tp.json_key] = fields
        elif (tp.key and not use_key) or tp.table == key:
            msi.update(fields)
        else:
            parts = key.split(tp.sep, 1) if tp.sep else [key]
            if len(parts) < 2:
                raise GoError(f"dbkey: {key}, failed split from delimitor {tp.sep}")
            msi[parts[1]] = fields

