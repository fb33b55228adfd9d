"""A switch's gNMI subscriptions, as gnmic runs them against SONiC, feeding `SwitchTables`.

- SAMPLE on COUNTERS_DB's virtual paths with the target `COUNTERS_DB` (sonic-gnmi's legacy
  handler, as `gnmic --target COUNTERS_DB subscribe --path "COUNTERS/Ethernet*"`): port counters and,
  where the switch has queue maps, `COUNTERS/Ethernet*/Queues`. sonic-gnmi names the ports by their
  alias there; they are read back to SONiC's names from CONFIG_DB PORT.
- ON_CHANGE on `/sonic-db:STATE_DB/localhost/PORT_TABLE`, `.../NEIGH_STATE_TABLE`,
  `/sonic-db:APPL_DB/localhost/PORT_TABLE` (portsorch's flap counts) and `.../ROUTE_TABLE`: the whole
  table first, then each change.
Each subscription is a stream of its own (one failing, such as the queues of a switch without queue
maps, leaves the others running) and is opened again 2 s after it ends, until the collector stops."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from twin.gnmi.channel import credentials, open_channel
from twin.telemetry.metrics import SwitchTables

log = logging.getLogger("twin.telemetry")
RETRY_S = 2.0


@dataclass(frozen=True)
class Subscription:
    db: str             # where the values land in SwitchTables: (db, table)
    table: str
    path: str
    target: str = ""    # the prefix's target: COUNTERS_DB for the virtual paths, "" for /sonic-db: paths
    sample_s: float = 0.0  # 0: ON_CHANGE

    def request(self) -> gnmi_pb2.SubscribeRequest:
        mode = gnmi_pb2.SubscriptionMode.SAMPLE if self.sample_s else gnmi_pb2.SubscriptionMode.ON_CHANGE
        return gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
            prefix=gnmi_pb2.Path(target=self.target) if self.target else gnmi_pb2.Path(),
            mode=gnmi_pb2.SubscriptionList.STREAM, encoding=gnmi_pb2.Encoding.JSON_IETF,
            subscription=[gnmi_pb2.Subscription(path=gnmi_path_generator(self.path), mode=mode,
                                                sample_interval=int(self.sample_s * 1e9))]))


def subscriptions(sample_s: float) -> list[Subscription]:
    return [
        Subscription("COUNTERS_DB", "COUNTERS", "COUNTERS/Ethernet*", "COUNTERS_DB", sample_s),
        Subscription("COUNTERS_DB", "Queues", "COUNTERS/Ethernet*/Queues", "COUNTERS_DB", sample_s),
        Subscription("STATE_DB", "PORT_TABLE", "/sonic-db:STATE_DB/localhost/PORT_TABLE"),
        Subscription("STATE_DB", "NEIGH_STATE_TABLE", "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE"),
        Subscription("APPL_DB", "PORT_TABLE", "/sonic-db:APPL_DB/localhost/PORT_TABLE"),
        Subscription("APPL_DB", "ROUTE_TABLE", "/sonic-db:APPL_DB/localhost/ROUTE_TABLE"),
    ]


def apply_update(tables: SwitchTables, sub: Subscription, notification: Any, aliases: dict[str, str]) -> None:
    """One notification of `sub` into `tables`. A sample replaces the table; an on-change update sets
    the keys it names (the whole table, `{key: fields}`, or one key, its path ending in it); a delete
    removes them."""
    table = tables.tables.setdefault((sub.db, sub.table), {})
    for path in notification.delete:
        names = [e.name for e in path.elem]
        if sub.table in names and names[-1] != sub.table:
            table.pop(names[-1], None)
    for update in notification.update:
        raw = update.val.json_ietf_val or update.val.json_val
        if not raw:
            continue
        value = json.loads(raw)
        if not isinstance(value, dict):
            continue
        names = [e.name for e in update.path.elem]
        if sub.sample_s:
            tables.tables[(sub.db, sub.table)] = {_name(k, aliases): v for k, v in value.items() if isinstance(v, dict)}
        elif names and names[-1] != sub.table and sub.table in names:
            table[names[-1]] = {k: str(v) for k, v in value.items()}
        else:
            table.update({k: {f: str(x) for f, x in v.items()} for k, v in value.items() if isinstance(v, dict)})


def _name(key: str, aliases: dict[str, str]) -> str:
    """A port (`etp17a`) or queue (`etp17a:3`) key as sonic-gnmi's virtual paths name it, by SONiC's name."""
    port, sep, rest = key.partition(":")
    return aliases.get(port, port) + sep + rest


class SwitchSubscriber:
    """Every subscription of one switch, each on a thread of its own, until `stop` is set."""

    def __init__(self, name: str, target: dict[str, Any], tables: SwitchTables, lock: threading.Lock,
                 stop: threading.Event, sample_s: float, on_update: Callable[[str], None] = lambda name: None) -> None:
        self.name, self.target, self.tables, self.lock, self.stop = name, target, tables, lock, stop
        self.subs = subscriptions(sample_s)
        self.on_update = on_update
        self._alive: set[str] = set()
        self._calls: set[Any] = set()
        self._channel: grpc.Channel | None = None

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self._run, args=(sub,), name=f"gnmi-{self.name}-{sub.table}", daemon=True)
                   for sub in self.subs]
        for thread in threads:
            thread.start()
        return threads

    def _run(self, sub: Subscription) -> None:
        while not self.stop.is_set():
            try:
                self._stream(sub)
            except (grpc.RpcError, OSError, ValueError) as exc:
                if not self.stop.is_set():
                    log.debug("%s %s: %s", self.name, sub.path, exc)
            with self.lock:
                self._alive.discard(sub.table)
                self.tables.up = bool(self._alive)
                self._channel = None
            self.stop.wait(RETRY_S)

    def _stream(self, sub: Subscription) -> None:
        channel = self._connect()
        aliases = self._aliases(channel) if sub.target == "COUNTERS_DB" else {}
        stub = gnmi_pb2_grpc.gNMIStub(channel)
        call = stub.Subscribe(iter([sub.request()]), metadata=credentials(self.target))
        with self.lock:
            self._calls.add(call)
        try:
            self._read(sub, call, aliases)
        finally:
            with self.lock:
                self._calls.discard(call)

    def _read(self, sub: Subscription, call: Any, aliases: dict[str, str]) -> None:
        for response in call:
            if response.HasField("update"):
                with self.lock:
                    apply_update(self.tables, sub, response.update, aliases)
                    self._alive.add(sub.table)
                    self.tables.up = True
                self.on_update(self.name)

    def close(self) -> None:
        """End every stream (a blocked iterator ends only when its call is cancelled)."""
        with self.lock:
            calls = list(self._calls)
        for call in calls:
            call.cancel()

    def _connect(self) -> grpc.Channel:
        with self.lock:
            if self._channel is None:
                self._channel = open_channel(self.name, self.target)
            return self._channel

    def _aliases(self, channel: grpc.Channel) -> dict[str, str]:
        """CONFIG_DB PORT's alias -> name, read with a Get as a gnmic user reads it."""
        request = gnmi_pb2.GetRequest(path=[gnmi_path_generator("/sonic-db:CONFIG_DB/localhost/PORT")],
                                      encoding=gnmi_pb2.Encoding.JSON_IETF)
        response = gnmi_pb2_grpc.gNMIStub(channel).Get(request, metadata=credentials(self.target), timeout=10)
        ports: dict[str, Any] = {}
        for notification in response.notification:
            for update in notification.update:
                ports.update(json.loads(update.val.json_ietf_val or b"{}"))
        return {str(fields["alias"]): name for name, fields in ports.items()
                if isinstance(fields, dict) and fields.get("alias")}
