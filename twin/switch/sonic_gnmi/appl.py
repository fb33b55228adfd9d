"""A native Set on APPL_DB, written as sonic-gnmi writes it (mixed_db_client.go SetDB,
handleTableData): through a ProducerStateTable, the way SONiC's producers hand work to orchagent.

A producer does not write `TABLE:key`: it stages the fields in `_TABLE:key`, adds the key to
`TABLE_KEY_SET` (a delete also to `TABLE_DEL_SET`) and publishes on `TABLE_CHANNEL@0`
(sonic-swss-common producerstatetable.cpp). The consumer (orchagent on SONiC) moves it into
`TABLE:key`; twin's switch runs no orchagent, so what a Set writes stays staged there, as on a
SONiC switch whose orchagent has no handler for the table.
Deletes address a table (all its keys) or a key; updates and replaces a key (an object of fields)
or a table (an object of keys); a field cannot be written ("Unsupported path ..., can't update
field"). Field values are strings, lists are joined into `name@` fields, anything else is dropped
(ConvertDbEntry).
"""

from __future__ import annotations

import json
from typing import Any

from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.sonic_gnmi.golang import go_unmarshal
from twin.switch.sonic_gnmi.native import NativeClient
from twin.switch.sonic_gnmi.paths import TablePath
from twin.switch.sonic_gnmi.status import unknown

APPL_DB_ID = 0


def db_entry(value: dict[str, Any]) -> dict[str, str | bytes]:
    """ConvertDbEntry: strings (and a proto's bytes) kept, lists as `name@` comma-joined, other values dropped."""
    out: dict[str, str | bytes] = {}
    for name, item in value.items():
        if isinstance(item, str | bytes):
            out[name] = item
        elif isinstance(item, list):
            out[name + "@"] = ",".join(x for x in item if isinstance(x, str))
    return out


class Producer:
    """One APPL_DB table written as a ProducerStateTable writes it."""

    def __init__(self, client: NativeClient, table: str) -> None:
        self.redis = client.db.client("APPL_DB")
        self.table = table

    def set(self, key: str, fields: dict[str, str | bytes]) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.sadd(f"{self.table}_KEY_SET", key)
        if fields:
            pipe.hset(f"_{self.table}:{key}", mapping=dict(fields.items()))
        pipe.publish(f"{self.table}_CHANNEL@{APPL_DB_ID}", "G")
        pipe.execute()

    def delete(self, key: str) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.sadd(f"{self.table}_KEY_SET", key)
        pipe.sadd(f"{self.table}_DEL_SET", key)
        pipe.delete(f"_{self.table}:{key}")
        pipe.publish(f"{self.table}_CHANNEL@{APPL_DB_ID}", "G")
        pipe.execute()


def _value(val: gnmi_pb2.TypedValue, tp: TablePath) -> Any:
    if val.json_ietf_val:
        try:
            return go_unmarshal(val.json_ietf_val)
        except json.JSONDecodeError as exc:
            raise unknown(f"JSON unmarshalling error: {exc}") from None
    if tp.key:
        return {"pb": bytes(val.proto_bytes)}
    raise unknown(f"No valid value: {tp}")


def _write(client: NativeClient, tp: TablePath, val: gnmi_pb2.TypedValue | None) -> None:
    if tp.field:
        raise unknown(f"Unsupported path {tp}, can't update field")
    producer = Producer(client, tp.table)
    if val is None:
        keys = [tp.key] if tp.key else [name.partition(":")[2] for name in
                                        client.db.client("APPL_DB").scan_iter(match=f"{tp.table}:*", count=1000)]
        for key in keys:
            producer.delete(key)
        return
    value = _value(val, tp)
    if not isinstance(value, dict):
        raise unknown(f"Unsupported value {value} type {type(value).__name__}")
    entries = {tp.key: value} if tp.key else value
    for key, fields in entries.items():
        if not isinstance(fields, dict):
            raise unknown(f"Key {key}: Unsupported value {fields} type {type(fields).__name__}")
        producer.set(key, db_entry(fields))


def set_db(client: NativeClient, delete: list[gnmi_pb2.Path], replace: list[gnmi_pb2.Update],
           update: list[gnmi_pb2.Update]) -> None:
    """SetDB: deletes, then replaces, then updates, each as it comes."""
    for path in delete:
        _write(client, client.table_path(path), None)
    for upd in replace:  # a replace without a value deletes (getDbtablePath: no value is opRemove)
        if upd.HasField("val"):
            _write(client, client.table_path(upd.path, for_read=False), upd.val)
        else:
            _write(client, client.table_path(upd.path), None)
    for upd in update:
        _write(client, client.table_path(upd.path, for_read=False), upd.val)
