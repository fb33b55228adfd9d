"""Get and Subscribe of sonic-gnmi's native handler (origin `sonic-db`), over a switch's redis.

Follows sonic_data_client/mixed_db_client.go (5ec1c20b): getDbtablePath, tableData2Msi,
tableData2TypedValue, Get, OnceRun, PollRun, StreamRun, dbFieldSubscribe, dbTableKeySubscribe.

- Values are JSON_IETF (Go's encoding/json: keys sorted, compact); PROTO answers the `pb` field
  of an entry; any other encoding fails with "Unknown encoding" — except a field, which is
  always answered as json_ietf_val.
- Fields named `x@` are lists (split at commas); `NULL` fields are dropped.
- Get answers one notification per path that has data. A path naming a key or field with no data
  is an error; a table with no entries is left out.
- Subscribe STREAM, ON_CHANGE: a table or key is followed through redis keyspace notifications
  (`__keyspace@N__:TABLE<sep>*`); an hset sends the key's entry again (`{key: {fields}}` for a
  table subscription, the fields for a key), a del or hdel of a key of a subscribed table sends a
  notification whose `delete` is the subscribed path. A field is read every 200 ms and sent as
  string_val when it changed. SAMPLE sends the table every interval (at least 1 s); TARGET_DEFINED
  is refused.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import redis
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.redis_budget import ClientsExhausted
from twin.switch.redis.sonic_redis import DATABASES, SonicRedis, glob_escape
from twin.switch.sonic_gnmi.golang import SECOND_NS, go_json, sample_interval_ns
from twin.switch.sonic_gnmi.paths import TablePath, parse_database, table_path
from twin.switch.sonic_gnmi.status import GnmiStatus, unknown
from twin.switch.sonic_gnmi.stream import Sink

FIELD_POLL_S = 0.2  # mixed_db_client.go streamOnChangeSubscription: dbFieldSubscribe every 200 ms
RECEIVE_TIMEOUT_S = 0.5  # dbSingleTableKeySubscribe's ReceiveTimeout
Msi = dict[str, Any]


def typed_fields(raw: dict[str, str]) -> Msi:
    """A redis hash as sonic-gnmi renders it (makeJSON_redis): `NULL` dropped, `x@` split into a list."""
    out: Msi = {}
    for name, value in raw.items():
        if name == "NULL":
            continue
        if name.endswith("@"):
            out[name[:-1]] = value.split(",")
        else:
            out[name] = value
    return out


def _encoding_name(encoding: int) -> str:
    try:
        return str(gnmi_pb2.Encoding.Name(encoding))
    except ValueError:
        return str(encoding)


def typed_value(msi: Msi, encoding: int) -> gnmi_pb2.TypedValue:
    """msi2TypedValue: JSON_IETF, or PROTO from the entry's `pb` field."""
    if encoding == gnmi_pb2.Encoding.JSON_IETF:
        return gnmi_pb2.TypedValue(json_ietf_val=go_json(msi))
    if encoding == gnmi_pb2.Encoding.PROTO:
        pb = msi.get("pb")
        if not isinstance(pb, bytes | str):
            raise unknown(f"No proto bytes found in msi {msi}")
        return gnmi_pb2.TypedValue(proto_bytes=pb.encode() if isinstance(pb, str) else pb)
    raise unknown(f"Unknown encoding {_encoding_name(encoding)}")


@contextlib.contextmanager
def _exhausted_is_a_status() -> Iterator[None]:
    """The switch's redis connections for clients all in use: RESOURCE_EXHAUSTED, saying so."""
    try:
        yield
    except ClientsExhausted as exc:
        raise GnmiStatus(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)) from None


def _fatal_code(exc: GnmiStatus) -> grpc.StatusCode:
    """How a stream's fatal error ends the call: INVALID_ARGUMENT (client_subscribe.go), but
    RESOURCE_EXHAUSTED stays itself."""
    if exc.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return exc.code
    return grpc.StatusCode.INVALID_ARGUMENT


class NativeClient:
    """One native request: its database and paths, read from the switch's redis on demand."""

    def __init__(self, db: SonicRedis, prefix: gnmi_pb2.Path | None, paths: list[gnmi_pb2.Path],
                 encoding: int = gnmi_pb2.Encoding.JSON_IETF) -> None:
        self.db, self.prefix, self.paths, self.encoding = db, prefix, paths, encoding
        self.target = parse_database(prefix, paths)
        self._had: dict[int, bool] = {}  # POLL: which paths had data in the last round

    # -- reading redis --------------------------------------------------------------------------

    def _redis(self, tp: TablePath) -> redis.Redis:
        return self.db.client(tp.db)

    def _hgetall(self, tp: TablePath, name: str) -> dict[str, str]:
        """A hash as text; read as bytes, so a binary `pb` field cannot fail the read."""
        raw = self.db.client(tp.db, decode=False).hgetall(name)
        if not isinstance(raw, dict):
            return {}
        return {_text_of(k): _text_of(v) for k, v in raw.items()}

    def _hget(self, tp: TablePath, name: str, field: str) -> str | None:
        value = self._redis(tp).hget(name, field)
        return value if isinstance(value, str) else None

    def table_path(self, path: gnmi_pb2.Path, for_read: bool = True) -> TablePath:
        """getDbtablePath: a read of a whole table needs some key that starts with its name."""
        tp = table_path(self.target, self.prefix, path)
        if for_read and tp.depth == 2:
            with _exhausted_is_a_status():
                found = list(self._redis(tp).scan_iter(match=glob_escape(tp.table) + "*", count=1000))
            if not found:
                where = tp.table
                raise unknown(f"Failed to find {tp.db} {where} <nil> []")
        return tp

    def _keys(self, tp: TablePath) -> list[str]:
        client = self._redis(tp)
        if not tp.table:
            if tp.db == "COUNTERS_DB":
                raise unknown("Can not read all tables in COUNTERS_DB")
            pattern = "*" + glob_escape(tp.separator) + "*"
        elif not tp.key:
            pattern = glob_escape(tp.table) if not tp.keyed else glob_escape(tp.table + tp.separator) + "*"
        else:
            return [tp.redis_key]
        return sorted(client.scan_iter(match=pattern, count=1000))

    def msi(self, tp: TablePath, key_level: bool = False) -> Msi:
        """tableData2Msi: a database as `{table: {key: fields}}`, a table as `{key: fields}`
        (a flat hash as its fields), a key as its fields (or `{key: fields}` when `key_level`)."""
        out: Msi = {}
        for name in self._keys(tp):
            raw = self._hgetall(tp, name)
            if not tp.table:
                table, _, key = name.partition(tp.separator)
                out.setdefault(table, {})[key] = typed_fields(raw)
            elif (tp.key and not key_level) or name == tp.table:
                if self.encoding == gnmi_pb2.Encoding.PROTO:
                    pb = self.db.client(tp.db, decode=False).hget(name, "pb")
                    if pb is None:
                        raise unknown(f"No proto bytes found in redis {raw}")
                    out["pb"] = pb
                elif self.encoding == gnmi_pb2.Encoding.JSON_IETF:
                    out.update(typed_fields(raw))  # any other encoding reads nothing: "No valid entry"
            else:
                out[name.partition(tp.separator)[2]] = typed_fields(raw)
        return out

    def field_value(self, tp: TablePath) -> gnmi_pb2.TypedValue | None:
        """A field (or one item of a list field) as json_ietf_val; None when it does not exist."""
        if tp.index >= 0:
            raw = self._hget(tp, tp.redis_key, tp.field + "@")
            if raw is None:
                return None
            items = raw.split(",")
            if tp.index >= len(items):
                raise unknown(f"Invalid index {tp.index} for {items}")
            return gnmi_pb2.TypedValue(json_ietf_val=go_json(items[tp.index]))
        value = self._hget(tp, tp.redis_key, tp.field)
        if value is not None:
            return gnmi_pb2.TypedValue(json_ietf_val=go_json(value))
        listed = self._hget(tp, tp.redis_key, tp.field + "@")
        if listed is not None:
            return gnmi_pb2.TypedValue(json_ietf_val=go_json(listed.split(",")))
        return None

    def value(self, tp: TablePath) -> gnmi_pb2.TypedValue | None:
        """tableData2TypedValue: what the path holds now, None when nothing."""
        with _exhausted_is_a_status():
            if tp.field:
                return self.field_value(tp)
            msi = self.msi(tp)
        return typed_value(msi, self.encoding) if msi else None

    def _notification(self, path: gnmi_pb2.Path, val: gnmi_pb2.TypedValue) -> gnmi_pb2.Notification:
        return gnmi_pb2.Notification(timestamp=time.time_ns(), prefix=self.prefix,
                                     update=[gnmi_pb2.Update(path=path, val=val)])

    # -- Get, ONCE, POLL ------------------------------------------------------------------------

    def get(self) -> list[gnmi_pb2.Notification]:
        """One notification per path with data; a key or field without data is an error."""
        out = []
        for path in self.paths:
            tp = self.table_path(path)
            val = self.value(tp)
            if val is None:
                if tp.key or tp.field:
                    raise unknown(f"No valid entry found for path {_text(path)}")
                continue
            out.append(self._notification(path, val))
        return out

    def once(self, sink: Sink) -> None:
        try:
            for path in self.paths:
                val = self.value(self.table_path(path))
                if val is not None:
                    sink.notify(self._notification(path, val))
        except GnmiStatus as exc:
            sink.fatal(f"OnceRun error: {exc.message}", _fatal_code(exc))
            return
        sink.sync()

    def poll(self, sink: Sink) -> None:
        """One PollRun round: every path with data, and a delete for a path that had data the
        round before and has none now."""
        for i, path in enumerate(self.paths):
            try:
                val = self.value(self.table_path(path))
            except GnmiStatus:
                return
            if val is None:
                if self._had.get(i):
                    sink.notify(gnmi_pb2.Notification(timestamp=time.time_ns(), prefix=self.prefix, delete=[path]))
                    self._had[i] = False
            else:
                sink.notify(self._notification(path, val))
                self._had[i] = True
        sink.sync()

    # -- STREAM ---------------------------------------------------------------------------------

    def stream(self, subscriptions: gnmi_pb2.SubscriptionList, sink: Sink, stop: threading.Event) -> None:
        """StreamRun: one worker per subscription; sync once each has sent its first values."""
        subs = list(subscriptions.subscription)
        for sub in subs:
            if sub.mode not in (gnmi_pb2.SubscriptionMode.SAMPLE, gnmi_pb2.SubscriptionMode.ON_CHANGE):
                sink.fatal(f"unsupported subscription mode, {gnmi_pb2.SubscriptionMode.Name(sub.mode)}")
                return
        synced = threading.Barrier(len(subs) + 1) if subs else None
        for sub in subs:
            worker = _Worker(self, sub, subscriptions.updates_only, sink, stop, synced)
            threading.Thread(target=worker.run, name="gnmi-stream", daemon=True).start()
        if synced is not None:
            try:
                synced.wait()
            except threading.BrokenBarrierError:
                return
        sink.sync()


class _Worker:
    """One STREAM subscription (streamOnChangeSubscription / streamSampleSubscription)."""

    def __init__(self, client: NativeClient, sub: gnmi_pb2.Subscription, updates_only: bool, sink: Sink,
                 stop: threading.Event, synced: threading.Barrier | None) -> None:
        self.client, self.sub, self.updates_only = client, sub, updates_only
        self.sink, self.stop, self.synced = sink, stop, synced
        self._synced = False

    def _signal_sync(self) -> None:
        if not self._synced and self.synced is not None:
            self._synced = True
            with contextlib.suppress(threading.BrokenBarrierError):
                self.synced.wait()

    def _fatal(self, message: str, code: grpc.StatusCode = grpc.StatusCode.INVALID_ARGUMENT) -> None:
        self.sink.fatal(message, code)
        if self.synced is not None:
            self.synced.abort()

    def run(self) -> None:
        try:
            interval = 0.0
            if self.sub.mode == gnmi_pb2.SubscriptionMode.SAMPLE:
                interval = _sample_interval(self.sub.sample_interval)
            try:
                tp = self.client.table_path(self.sub.path)
            except GnmiStatus as exc:
                on_change = self.sub.mode == gnmi_pb2.SubscriptionMode.ON_CHANGE
                raise GnmiStatus(exc.code, ("streamOnChangeSubscription error:  " if on_change else "")
                                 + exc.message) from None
            if tp.field:
                self._field(tp, interval)
            else:
                self._table(tp, interval)
        except GnmiStatus as exc:
            self._fatal(exc.message, _fatal_code(exc))
        except ClientsExhausted as exc:
            self._fatal(str(exc), grpc.StatusCode.RESOURCE_EXHAUSTED)
        except redis.RedisError as exc:
            self._fatal(f"redis: {exc}")

    def _send(self, val: gnmi_pb2.TypedValue, delete: bool = False) -> None:
        path = self.sub.path
        note = gnmi_pb2.Notification(timestamp=time.time_ns(), prefix=self.client.prefix)
        if delete:
            note.delete.append(path)
        else:
            note.update.append(gnmi_pb2.Update(path=path, val=val))
        self.sink.notify(note)

    def _field(self, tp: TablePath, interval: float) -> None:
        """dbFieldSubscribe: the field as string_val, then every interval (ON_CHANGE: 200 ms,
        sent only when it changed)."""
        on_change = interval == 0
        period = FIELD_POLL_S if on_change else interval

        def read() -> str:
            return self.client._hget(tp, tp.redis_key, tp.field) or ""

        value = read()
        self._send(gnmi_pb2.TypedValue(string_val=value))
        self._signal_sync()
        while not self.stop.wait(period):
            new = read()
            if not on_change or new != value:
                self._send(gnmi_pb2.TypedValue(string_val=new))
                value = new

    def _table(self, tp: TablePath, interval: float) -> None:
        """dbTableKeySubscribe: everything now, then changes from keyspace notifications
        (ON_CHANGE: each as it comes; SAMPLE: merged and sent every interval)."""
        client = self.client._redis(tp)
        db_number = DATABASES[tp.db].id
        channel = f"__keyspace@{db_number}__:{tp.table}{tp.separator if tp.keyed else ''}"
        pattern = channel + (glob_escape(tp.key) if tp.key else "*")
        pubsub = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
        pubsub.psubscribe(pattern)
        try:
            everything = self.client.msi(tp)
            self._send(typed_value(everything, gnmi_pb2.Encoding.JSON_IETF))
            self._signal_sync()
            if self.updates_only:
                everything = {}
            self._follow(pubsub, tp, len(channel), interval, everything)
        finally:
            pubsub.close()

    def _follow(self, pubsub: Any, tp: TablePath, prefix_len: int, interval: float, everything: Msi) -> None:
        last: Msi = {}
        due = time.monotonic() + interval
        while not self.stop.is_set():
            message = pubsub.get_message(timeout=min(RECEIVE_TIMEOUT_S, interval) if interval else RECEIVE_TIMEOUT_S)
            if message is not None and message.get("type") == "pmessage":
                change = self._change(tp, str(message["channel"])[prefix_len:], str(message["data"]))
                if change is not None and (change.get("delete") or change != last):
                    if not change.get("delete"):
                        last = change
                    if interval == 0:
                        self._send_change(change)
                    else:
                        everything.update({k: v for k, v in change.items() if k != "delete"})
            if interval and time.monotonic() >= due:
                self._send(typed_value(everything, gnmi_pb2.Encoding.JSON_IETF))
                if self.updates_only:
                    everything = {}
                due = time.monotonic() + interval

    def _change(self, tp: TablePath, key: str, event: str) -> Msi | None:
        """What one keyspace event means (dbSingleTableKeySubscribe): None for events it ignores."""
        if event in ("del", "hdel"):
            if tp.key:
                return None
            return {key: {}, "delete": True}
        if event != "hset":
            return None
        if tp.key:
            return self.client.msi(tp)
        return self.client.msi(TablePath(db=tp.db, separator=tp.separator, table=tp.table, key=key, depth=3),
                               key_level=True)

    def _send_change(self, change: Msi) -> None:
        if change.pop("delete", False):
            self._send(gnmi_pb2.TypedValue(), delete=True)
        else:
            self._send(typed_value(change, gnmi_pb2.Encoding.JSON_IETF))


def _sample_interval(requested_ns: int) -> float:
    """validateSampleInterval, in seconds; its error ends the stream (INVALID_ARGUMENT)."""
    try:
        return sample_interval_ns(requested_ns) / SECOND_NS
    except ValueError as exc:
        raise GnmiStatus(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None


def _text_of(value: bytes | str) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _text(path: gnmi_pb2.Path) -> str:
    """A path in Go's %v style, for messages."""
    return "elem:" + " elem:".join(
        "{name:" + json.dumps(e.name) + "".join(f" key:{{key:{json.dumps(k)} value:{json.dumps(v)}}}"
                                               for k, v in e.key.items()) + "}" for e in path.elem)
