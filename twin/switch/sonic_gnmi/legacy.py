"""sonic-gnmi's legacy, read-only handler: requests whose prefix target names a database.

A Get or Subscribe whose prefix `target` is `APPL_DB`, `COUNTERS_DB`, `CONFIG_DB`, `STATE_DB`, ...
(sonic_data_client/db_client.go `IsTargetDb`) is served by `sdc.NewDbClient`, which reads
redis directly and answers in JSON_IETF whatever encoding was asked. This module follows
sonic-net/sonic-gnmi at commit 5ec1c20b:

- sonic_data_client/db_client.go: NewDbClient, parsePath, probePathElements,
  ensureKeysExistInRedis (ValidatePaths), Get / tableData2TypedValue, OnceRun, PollRun /
  subscribeTableData2TypedValue, StreamRun (here); its workers (dbFieldSubscribe,
  dbFieldMultiSubscribe, dbTableKeySubscribe, dbSingleTableKeySubscribe), validateSampleInterval,
  MinSampleInterval (twin.switch.sonic_gnmi.legacy_stream); go-redis, tablePath, TableData2Msi,
  makeJSON_redis, Msi2TypedValue (twin.switch.sonic_gnmi.legacy_db);
- sonic_data_client/virtual_db.go and trie.go: the virtual paths of COUNTERS_DB (COUNTERS/Ethernet*,
  Queues, Pfcwd, VoQs, PORT*, SWITCH*, SID*, ACL_RULE*, RATES, PORT_PHY_ATTR,
  PERIODIC_WATERMARKS/PriorityGroups, INTERFACE_COUNTERS), resolved through the name maps SONiC
  keeps in COUNTERS_DB and the aliases of CONFIG_DB PORT (twin.switch.sonic_gnmi.virtual_db);
- gnmi_server/server.go Get and gnmi_server/client_subscribe.go Run: errors of NewDbClient and
  of Get reach the client as NOT_FOUND; fatal stream errors as INVALID_ARGUMENT (stream.Sink).

Paths: the prefix's and the path's elem names after the database (keys of elems are ignored):
`TABLE` is the whole table (`{key: {field: value}}`), `TABLE/k` one key (`{field: value}`) or,
when `TABLE<sep>k` does not exist but the flat hash `TABLE` has field `k`, that field (a
string_val); `TABLE/a/b` the key `a<sep>b`, or key `a` field `b` when only that exists;
`TABLE/a/b/f` field `f` of key `a<sep>b`. Values are read from redis at request time.

Where sonic-gnmi differs from itself (Go map order) this module picks one order: notifications
follow the request's paths, trie wildcards are tried in the order virtual_db.go lists them.
sonic-gnmi reads the name maps once per process (sync.Once); here they are read per request, so
a map written after the first request is seen (sonic-gnmi would keep the first, maybe empty, one).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import grpc
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.sonic_redis import DATABASES, SonicRedis
from twin.switch.sonic_gnmi.legacy_db import (
    COUNTERS_DB,
    GoError,
    GoRedis,
    Msi,
    TablePath,
    go_path_list,
    is_target_db,
    msi_to_typed_value,
    separator,
    string_value,
    table_data_to_msi,
)
from twin.switch.sonic_gnmi.legacy_stream import Worker, start_thread, sync_when, validate_sample_interval
from twin.switch.sonic_gnmi.status import GnmiStatus
from twin.switch.sonic_gnmi.stream import Sink
from twin.switch.sonic_gnmi.virtual_db import VirtualMaps, lookup_v2r

FIELD_ON_CHANGE_POLL_NS = 200_000_000  # streamOnChangeSubscription: dbField*Subscribe every 200 ms


# -- the client --------------------------------------------------------------------------------

@dataclass
class _Entry:
    """One requested path (as the client sent it) and where its data lives."""

    path: Any
    tables: list[TablePath]


class LegacyClient:
    """sdc.DbClient: Get and Subscribe for a prefix whose target is a database.

    The constructor is NewDbClient (parsePath + probePathElements for every path); its errors
    are GnmiStatus NOT_FOUND, as server.go Get and client_subscribe.go Run return them."""

    def __init__(self, db: SonicRedis, prefix: Any, paths: list[Any]) -> None:
        self.db = db
        self.prefix = prefix
        self.target = prefix.target if prefix is not None else ""
        self._maps: VirtualMaps | None = None
        self._prev_updates: dict[bytes, bool] = {}  # PollRun prevUpdates
        self._poll_broken = False
        try:
            self.entries = [_Entry(p, self._parse(p)) for p in paths]
            for entry in self.entries:
                entry.tables = [self._probe(t) for t in entry.tables]
        except GoError as e:
            raise GnmiStatus(e.code or grpc.StatusCode.NOT_FOUND, e.message) from None

    # -- resolving paths (parsePath, probePathElements) ----------------------------------------

    def redis(self, db_name: str) -> GoRedis:
        """Target2RedisDb[ns][db]; a Target the switch's redis does not configure has no client."""
        if db_name not in DATABASES:
            raise GoError(f"Redis Client not present for dbName {db_name} dbNamespace ")
        return GoRedis(self.db.client(db_name))

    def _virtual_maps(self) -> VirtualMaps:
        if self._maps is None:
            self._maps = VirtualMaps.load(self.redis(COUNTERS_DB), self.redis("CONFIG_DB"))
        return self._maps

    def _parse(self, path: Any) -> list[TablePath]:
        """parsePath: `[DB, elem names...]` -> a virtual path's tables, or one tablePath where
        the 3rd and 4th names are a key (`a`, `a<sep>b`) until probing says otherwise."""
        db_name, valid = is_target_db(self.target)
        if not valid:
            raise GoError(f"Invalid target dbName {db_name}")
        maps = self._virtual_maps() if db_name == COUNTERS_DB else VirtualMaps()
        names = [db_name]
        if len(path.elem):  # gnmiFullPath: the prefix's elems count only when the path has elems
            prefix_elems = list(self.prefix.elem) if self.prefix is not None else []
            names += [e.name for e in prefix_elems] + [e.name for e in path.elem]
        virtual = lookup_v2r(maps, names) if db_name == COUNTERS_DB else None
        if virtual is not None:
            return virtual
        sep = separator(db_name)
        if not 2 <= len(names) <= 5:
            raise GoError(f"Invalid db table Path {go_path_list(names)}")
        if db_name not in DATABASES:  # probePathElements / TableData2Msi have no client for it
            raise GoError(f"Redis Client not present for dbName {db_name} dbNamespace ")
        key = sep.join(names[2:4])
        return [TablePath(db=db_name, table=names[1], key=key, sep=sep, field=names[4] if len(names) == 5 else "")]

    def _probe(self, tp: TablePath) -> TablePath:
        """probePathElements: `TABLE/x` is a field of the flat hash TABLE when `TABLE<sep>x` does
        not exist and TABLE has field x; `TABLE/a/b` is key a, field b when `TABLE<sep>a<sep>b`
        does not exist and key a has field b. Otherwise a key, which may appear later."""
        if tp.virtual or tp.field or not tp.key:
            return tp
        rdb = self.redis(tp.db)
        if rdb.exists(tp.redis_key):
            return tp
        if tp.sep and tp.sep in tp.key:
            first, second = tp.key.split(tp.sep, 1)
            return replace(tp, key=first, field=second) if rdb.hexists(f"{tp.table}{tp.sep}{first}", second) else tp
        return replace(tp, key="", field=tp.key) if rdb.hexists(tp.table, tp.key) else tp

    def validate_paths(self) -> None:
        """ValidatePaths (ensureKeysExistInRedis), which server.go runs for Get only: every
        non-virtual key must exist, else NOT_FOUND `No valid entry found on DB with key K`."""
        try:
            for entry in self.entries:
                for tp in entry.tables:
                    if tp.key and not tp.virtual and not self.redis(tp.db).exists(tp.redis_key):
                        raise GoError(f"No valid entry found on {tp.db} with key {tp.redis_key}")
        except GoError as e:
            raise GnmiStatus(e.code or grpc.StatusCode.NOT_FOUND, e.message) from None

    # -- Get -----------------------------------------------------------------------------------

    def get(self) -> list[Any]:
        """Get: one notification per path (prefix = the request's); a field is a string_val and
        its absence `redis: nil`, anything else JSON_IETF (`{}` when nothing is there). Errors
        are NOT_FOUND (server.go Get)."""
        ts = time.time_ns()
        out = []
        for entry in self.entries:
            try:
                value = self._get_value(entry.tables)
            except GoError as e:
                raise GnmiStatus(e.code or grpc.StatusCode.NOT_FOUND, e.message) from None
            out.append(self.notification(ts, entry.path, value))
        return out

    def _get_value(self, tables: list[TablePath]) -> Any:
        """tableData2TypedValue."""
        msi: Msi = {}
        for tp in tables:
            if not tp.json_field and tp.field:
                return string_value(self.redis(tp.db).hget_or_nil(tp.redis_key, tp.field))
            table_data_to_msi(self.redis(tp.db), tp, False, msi)
        return msi_to_typed_value(msi)

    def notification(self, ts: int, path: Any, value: Any) -> Any:
        note = gnmi_pb2.Notification(timestamp=ts, update=[gnmi_pb2.Update(path=path, val=value)])
        if self.prefix is not None:
            note.prefix.CopyFrom(self.prefix)
        return note

    def _delete(self, path: Any) -> Any:
        note = gnmi_pb2.Notification(timestamp=time.time_ns(), delete=[path])
        if self.prefix is not None:
            note.prefix.CopyFrom(self.prefix)
        return note

    # -- ONCE and POLL -------------------------------------------------------------------------

    def subscribe_value(self, tables: list[TablePath]) -> Any | None:
        """subscribeTableData2TypedValue: the value, or None when there is nothing to send (a
        missing field, a key or table with no data)."""
        msi: Msi = {}
        for tp in tables:
            if not tp.json_field and tp.field:
                value = self.redis(tp.db).hget(tp.redis_key, tp.field)
                if value is None:
                    continue
                return string_value(value)
            table_data_to_msi(self.redis(tp.db), tp, False, msi)
        return msi_to_typed_value(msi) if msi else None

    def once(self, sink: Sink) -> None:
        """OnceRun: every path that has data, then sync; an error is fatal `OnceRun error: ...`."""
        for entry in self.entries:
            try:
                value = self.subscribe_value(entry.tables)
            except GoError as e:
                sink.fatal(f"OnceRun error: {e.message}", e.code or grpc.StatusCode.INVALID_ARGUMENT)
                return
            if value is not None:
                sink.notify(self.notification(time.time_ns(), entry.path, value))
        sink.sync()

    def poll(self, sink: Sink) -> None:
        """One PollRun round: as ONCE, plus a delete of each path that had data the round before
        and has none now. A redis error ends PollRun silently: no sync, no further rounds."""
        if self._poll_broken:
            return
        for entry in self.entries:
            key = entry.path.SerializeToString(deterministic=True)  # prevUpdates["%v" of the path]
            try:
                value = self.subscribe_value(entry.tables)
            except GoError:
                self._poll_broken = True
                return
            if value is None:
                if self._prev_updates.get(key):
                    sink.notify(self._delete(entry.path))
                    self._prev_updates[key] = False
            else:
                sink.notify(self.notification(time.time_ns(), entry.path, value))
                self._prev_updates[key] = True
        sink.sync()

    # -- STREAM --------------------------------------------------------------------------------

    def _tables_for(self, path: Any) -> list[TablePath]:
        """c.pathG2S[sub.GetPath()]: the tables resolved for this subscription's path."""
        for entry in self.entries:
            if entry.path == path:
                return entry.tables
        tables = [self._probe(t) for t in self._parse(path)]
        self.entries.append(_Entry(path, tables))
        return tables

    def stream(self, subscriptions: Any, sink: Sink, stop: threading.Event) -> None:
        """StreamRun: one worker per subscription; sync once each has sent its first value.

        ON_CHANGE on a field polls it every 200 ms (dbField*Subscribe), on anything else it
        follows redis keyspace notifications (dbTableKeySubscribe); SAMPLE reads every interval
        (validateSampleInterval: 0 means MinSampleInterval, below it is fatal). Any other mode is
        fatal `unsupported subscription mode, MODE` and StreamRun sends no sync."""
        synced: list[threading.Event] = []
        for sub in subscriptions.subscription:
            done = threading.Event()
            if sub.mode == gnmi_pb2.SubscriptionMode.SAMPLE:
                target = partial(self._sample, sub, bool(subscriptions.updates_only), sink, stop, done)
            elif sub.mode == gnmi_pb2.SubscriptionMode.ON_CHANGE:
                target = partial(self._on_change, sub.path, sink, stop, done)
            else:
                sink.fatal(f"unsupported subscription mode, {gnmi_pb2.SubscriptionMode.Name(sub.mode)}")
                return
            synced.append(done)
            start_thread(target)
        start_thread(lambda: sync_when(synced, sink, stop))

    def _on_change(self, path: Any, sink: Sink, stop: threading.Event, synced: threading.Event) -> None:
        """streamOnChangeSubscription: fields are polled every 200 ms (dbField*Subscribe with
        updateOnly false), tables follow keyspace events (dbTableKeySubscribe, interval 0)."""
        self._run_worker(path, sink, stop, synced, on_change=True, interval_ns=0, updates_only=False)

    def _sample(self, sub: Any, updates_only: bool, sink: Sink, stop: threading.Event,
                synced: threading.Event) -> None:
        """streamSampleSubscription."""
        try:
            interval_ns = validate_sample_interval(sub.sample_interval)
        except GoError as e:
            sink.fatal(e.message)
            synced.set()
            return
        self._run_worker(sub.path, sink, stop, synced, on_change=False, interval_ns=interval_ns,
                         updates_only=updates_only)

    def _run_worker(self, path: Any, sink: Sink, stop: threading.Event, synced: threading.Event, *,
                    on_change: bool, interval_ns: int, updates_only: bool) -> None:
        try:
            tables = self._tables_for(path)
        except GoError as e:
            sink.fatal(e.message)
            synced.set()
            return
        worker = Worker(self, path, tables, sink, stop, synced)
        if tables and tables[0].field:
            poll_ns = FIELD_ON_CHANGE_POLL_NS if on_change else interval_ns
            if len(tables) > 1:
                worker.field_multi(on_change, poll_ns, updates_only)
            else:
                worker.field_single(on_change, poll_ns)
        else:
            worker.table_keys(0 if on_change else interval_ns, updates_only)

