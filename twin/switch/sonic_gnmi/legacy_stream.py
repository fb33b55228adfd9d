"""The legacy handler's STREAM workers (sonic-gnmi sonic_data_client/db_client.go at 5ec1c20b: the
goroutines of StreamRun, dbFieldSubscribe, dbFieldMultiSubscribe, dbTableKeySubscribe and
dbSingleTableKeySubscribe; validateSampleInterval). twin.switch.sonic_gnmi.legacy starts one per
subscription."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, Protocol, cast

import grpc
import redis

from twin.switch.redis.redis_budget import ClientsExhausted
from twin.switch.redis.sonic_redis import DATABASES
from twin.switch.sonic_gnmi.golang import SECOND_NS, sample_interval_ns
from twin.switch.sonic_gnmi.legacy_db import (
    COUNTERS_DB,
    GoError,
    GoRedis,
    Msi,
    TablePath,
    msi_to_typed_value,
    string_value,
    table_data_to_msi,
)
from twin.switch.sonic_gnmi.paths import counters_keyed
from twin.switch.sonic_gnmi.stream import Sink

PUBSUB_RECEIVE_S = 0.5  # dbSingleTableKeySubscribe: pubsub.ReceiveTimeout(500 ms)
PSUBSCRIBE_CONFIRM_S = 1.0  # dbTableKeySubscribe: ReceiveTimeout(time.Second) for the confirmation


class Client(Protocol):
    """What a worker needs of its subscription's client (twin.switch.sonic_gnmi.legacy.LegacyClient)."""

    def redis(self, db_name: str) -> GoRedis: ...

    def notification(self, ts: int, path: Any, value: Any) -> Any: ...


def validate_sample_interval(sample_interval: int) -> int:
    """validateSampleInterval (twin.switch.sonic_gnmi.golang), its error as a Go error."""
    try:
        return sample_interval_ns(sample_interval)
    except ValueError as exc:
        raise GoError(str(exc)) from None


def start_thread(target: Callable[[], None]) -> None:
    threading.Thread(target=target, daemon=True, name="gnmi-legacy").start()


def sync_when(synced: list[threading.Event], sink: Sink, stop: threading.Event) -> None:
    """StreamRun: `c.synced.Wait()`, then the sync_response."""
    for event in synced:
        while not event.wait(0.1):
            if stop.is_set():
                return
    if not stop.is_set():
        sink.sync()


def keyspace_pattern(tp: TablePath) -> tuple[str, int]:
    """dbTableKeySubscribe's psubscribe pattern and the length of the channel before a key:
    `__keyspace@6__:NEIGH_STATE_TABLE|*`, `__keyspace@2__:COUNTERS:oid:0x...` (flat COUNTERS_DB
    tables have no separator: `__keyspace@2__:COUNTERS_PORT_NAME_MAP*`)."""
    pattern = f"__keyspace@{DATABASES[tp.db].id}__:{tp.table}"
    if not (tp.db == COUNTERS_DB and not counters_keyed(tp.db, tp.table)):
        pattern += tp.sep
    if tp.key:
        pattern += tp.key
        return pattern, len(pattern)
    return pattern + "*", len(pattern)


class Worker:
    """One STREAM subscription's worker (the goroutines of db_client.go)."""

    def __init__(self, client: Client, path: Any, tables: list[TablePath], sink: Sink,
                 stop: threading.Event, synced: threading.Event) -> None:
        self.client, self.path, self.tables = client, path, tables
        self.sink, self.stop, self.synced = sink, stop, synced

    def send(self, value: Any) -> None:
        self.sink.notify(self.client.notification(time.time_ns(), self.path, value))

    def fatal(self, message: str, code: grpc.StatusCode | None = None) -> None:
        self.sink.fatal(message, code or grpc.StatusCode.INVALID_ARGUMENT)
        self.synced.set()

    def _hget(self, tp: TablePath) -> str | None:
        """HGET of the field; errors read as a missing field (dbField*Subscribe log them)."""
        try:
            return self.client.redis(tp.db).hget(tp.redis_key, tp.field)
        except GoError:
            return None

    def field_single(self, on_change: bool, interval_ns: int) -> None:
        """dbFieldSubscribe: the field's value ("" when missing) now, then every interval; for
        ON_CHANGE only when it differs from the last sent."""
        tp = self.tables[0]
        value = self._hget(tp) or ""
        self.send(string_value(value))
        self.synced.set()
        while not self.stop.wait(interval_ns / SECOND_NS):
            new = self._hget(tp) or ""
            if not on_change or new != value:
                self.send(string_value(new))
                value = new

    def field_multi(self, on_change: bool, interval_ns: int, updates_only: bool) -> None:
        """dbFieldMultiSubscribe: `{json_key: {field: value}}` of every port now, then every
        interval; ON_CHANGE (and SAMPLE with updates_only) keeps only values that changed, and
        ON_CHANGE sends nothing when none did (SAMPLE sends `{}`)."""
        last: dict[TablePath, str] = {}

        def read() -> Msi:
            msi: Msi = {}
            for tp in self.tables:
                value = self._hget(tp)
                if value is None:
                    if tp.json_field:
                        continue
                    value = ""
                if (on_change or updates_only) and tp in last and last[tp] == value:
                    continue
                last[tp] = value
                msi[tp.json_key] = {tp.json_field: value}
            return msi

        self.send(msi_to_typed_value(read()))
        self.synced.set()
        while not self.stop.wait(interval_ns / SECOND_NS):
            msi = read()
            if not on_change or msi:
                self.send(msi_to_typed_value(msi))

    def table_keys(self, interval_ns: int, updates_only: bool) -> None:
        """dbTableKeySubscribe: psubscribe to each table's keyspace, send what is there now (`{}`
        when nothing), then each change (interval 0, ON_CHANGE) or, every interval (SAMPLE), all
        data with the changes merged in (only the changes, with updates_only)."""
        pubsubs: list[Any] = []
        try:
            msi_all: Msi = {}
            listeners = []
            for tp in self.tables:
                pattern, prefix_len = keyspace_pattern(tp)
                pubsub = cast(Any, self.client.redis(tp.db).client).pubsub()
                pubsubs.append(pubsub)
                if not _psubscribed(pubsub, pattern):
                    self.fatal(f"psubscribe to {pattern} failed for {tp.go_repr()}")
                    return
                table_data_to_msi(self.client.redis(tp.db), tp, False, msi_all)
                listeners.append((tp, pubsub, prefix_len))
            self.send(msi_to_typed_value(msi_all))
            self.synced.set()
            if updates_only:
                msi_all = {}
            updates: queue.Queue[Msi] = queue.Queue()
            for tp, pubsub, prefix_len in listeners:
                start_thread(partial(self._listen, tp, pubsub, prefix_len, updates))
            self._forward(updates, msi_all, interval_ns, updates_only)
        except GoError as e:
            self.fatal(e.message, e.code)
        except ClientsExhausted as e:   # a psubscribe found no connection for it
            self.fatal(str(e), grpc.StatusCode.RESOURCE_EXHAUSTED)
        finally:  # Go: defer pubsub.Close()
            for pubsub in pubsubs:
                pubsub.close()

    def _forward(self, updates: queue.Queue[Msi], msi_all: Msi, interval_ns: int, updates_only: bool) -> None:
        """dbTableKeySubscribe's select loop over the listeners' updates and the interval."""
        interval = interval_ns / SECOND_NS
        deadline = time.monotonic() + interval if interval_ns else None
        while not self.stop.is_set():
            wait = PUBSUB_RECEIVE_S
            if deadline is not None:
                wait = max(0.0, min(PUBSUB_RECEIVE_S, deadline - time.monotonic()))
            try:
                update: Msi | None = updates.get(timeout=wait)
            except queue.Empty:
                update = None
            if update is not None:
                if deadline is None:
                    self.send(msi_to_typed_value(update))
                else:
                    msi_all.update(update)
            if deadline is not None and time.monotonic() >= deadline:
                self.send(msi_to_typed_value(msi_all))
                if updates_only:
                    msi_all = {}
                deadline = time.monotonic() + interval

    def _listen(self, tp: TablePath, pubsub: Any, prefix_len: int, updates: queue.Queue[Msi]) -> None:
        """dbSingleTableKeySubscribe: on `hset`, the key's data again (skipped when the same as
        the last read); on `del`/`hdel` in a whole-table subscription `{key: {}}` (nothing for a
        key subscription); other events are ignored."""
        last: Msi = {}
        while not self.stop.is_set():
            try:
                message = pubsub.get_message(ignore_subscribe_messages=True, timeout=PUBSUB_RECEIVE_S)
            except (redis.RedisError, OSError, ValueError, TypeError):   # TypeError: hiredis, when the
                # switch's connections are closed under this read (SonicRedis.close as the stream ends)
                self.stop.wait(PUBSUB_RECEIVE_S)
                continue
            if not message or message.get("type") != "pmessage":
                continue
            channel, event = str(message["channel"]), str(message["data"])
            if tp.key == "" and len(channel) < prefix_len:
                continue
            new: Msi = {}
            if event in ("del", "hdel"):
                if not tp.key:
                    new[channel[prefix_len:]] = {}
            elif event == "hset":
                try:
                    if tp.key:
                        table_data_to_msi(self.client.redis(tp.db), tp, False, new)
                    else:
                        table_data_to_msi(self.client.redis(tp.db), replace(tp, key=channel[prefix_len:]), True, new)
                except GoError as e:
                    self.sink.fatal(e.message, e.code or grpc.StatusCode.INVALID_ARGUMENT)
                    return
                if new == last:
                    continue
                last = new
            else:
                continue
            if new:
                updates.put(new)


def _psubscribed(pubsub: Any, pattern: str) -> bool:
    """PSubscribe and its confirmation within a second, for exactly `pattern`."""
    try:
        pubsub.psubscribe(pattern)
        deadline = time.monotonic() + PSUBSCRIBE_CONFIRM_S
        while time.monotonic() < deadline:
            message = pubsub.get_message(timeout=max(0.0, deadline - time.monotonic()))
            if message is not None:
                return bool(message.get("type") == "psubscribe" and message.get("channel") == pattern)
    except ClientsExhausted:
        raise
    except redis.RedisError:
        return False
    return False
