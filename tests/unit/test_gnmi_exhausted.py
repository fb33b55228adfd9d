"""A gNMI client that finds its switch's redis connections for clients all in use is told
RESOURCE_EXHAUSTED naming the limit (Get, ONCE, STREAM; native and legacy handlers alike), not a
frozen call or an unrelated error."""

from __future__ import annotations

import threading
from typing import Any

import grpc
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.redis_budget import ClientsExhausted
from twin.switch.sonic_gnmi.legacy import LegacyClient
from twin.switch.sonic_gnmi.native import NativeClient
from twin.switch.sonic_gnmi.status import GnmiStatus
from twin.switch.sonic_gnmi.stream import Fatal, Sink

MESSAGE = "all 256 redis connections this switch allows its management clients are in use"


class Spent:
    """A redis client every command of which finds the budget spent."""

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise ClientsExhausted(MESSAGE)
        return call


class SpentDb:
    def client(self, db: str, decode: bool = True) -> Spent:
        return Spent()


def _path(*elems: str, origin: str = "") -> gnmi_pb2.Path:
    return gnmi_pb2.Path(origin=origin, elem=[gnmi_pb2.PathElem(name=e) for e in elems])


def _native() -> NativeClient:
    return NativeClient(SpentDb(), None, [_path("STATE_DB", "localhost", "PORT_TABLE", origin="sonic-db")])  # type: ignore[arg-type]


def _fatal(sink: Sink) -> Fatal:
    while True:
        item = sink.next(timeout=10)
        assert item is not None, "no fatal error came"
        if isinstance(item, Fatal):
            return item


def test_native_get_is_resource_exhausted() -> None:
    try:
        _native().get()
    except GnmiStatus as exc:
        assert exc.code == grpc.StatusCode.RESOURCE_EXHAUSTED and MESSAGE in exc.message
    else:
        raise AssertionError("Get went through")


def test_native_once_and_stream_end_resource_exhausted() -> None:
    sink = Sink()
    _native().once(sink)
    assert _fatal(sink).code == grpc.StatusCode.RESOURCE_EXHAUSTED
    sink, stop = Sink(), threading.Event()
    subs = gnmi_pb2.SubscriptionList(mode=gnmi_pb2.SubscriptionList.STREAM, subscription=[
        gnmi_pb2.Subscription(path=_path("STATE_DB", "localhost", "PORT_TABLE", origin="sonic-db"),
                              mode=gnmi_pb2.SubscriptionMode.ON_CHANGE)])
    threading.Thread(target=_native().stream, args=(subs, sink, stop), daemon=True).start()
    fatal = _fatal(sink)
    stop.set()
    assert fatal.code == grpc.StatusCode.RESOURCE_EXHAUSTED and MESSAGE in fatal.message


def test_legacy_get_is_resource_exhausted() -> None:
    prefix = gnmi_pb2.Path(target="STATE_DB")
    try:
        LegacyClient(SpentDb(), prefix, [_path("PORT_TABLE", "Ethernet0")]).get()  # type: ignore[arg-type]
    except GnmiStatus as exc:
        assert exc.code == grpc.StatusCode.RESOURCE_EXHAUSTED and MESSAGE in exc.message
    else:
        raise AssertionError("Get went through")


def test_other_fatal_errors_stay_invalid_argument() -> None:
    sink = Sink()
    sink.fatal("unsupported subscription mode, TARGET_DEFINED")
    assert _fatal(sink).code == grpc.StatusCode.INVALID_ARGUMENT
