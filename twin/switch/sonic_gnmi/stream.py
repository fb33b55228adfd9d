"""The Subscribe run loop both handlers share, as sonic-gnmi's client_subscribe.go runs it.

A handler (native or legacy) turns a SubscriptionList into work: ONCE and POLL read once per
round, STREAM starts one worker per subscription. Workers put what they read into a `Sink`;
the Subscribe call sends the sink's responses in order. A worker's fatal error ends the call
with INVALID_ARGUMENT and the error's text, as client_subscribe.go's Run does
(`grpc.Errorf(codes.InvalidArgument, "%s", err)` after `ValToResp` meets a fatal value); a worker
that found the switch's redis connections for clients all in use (twin.switch.redis.redis_budget) ends it
with RESOURCE_EXHAUSTED instead (sonic-gnmi would wait for its go-redis pool and fail plainly).
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import grpc
from pygnmi.spec.v080 import gnmi_pb2


@dataclass(frozen=True)
class Fatal:
    """A worker's fatal error: the call ends with `code` and this message."""

    message: str
    code: grpc.StatusCode = grpc.StatusCode.INVALID_ARGUMENT


Item: TypeAlias = Any  # a gnmi_pb2.SubscribeResponse (protobuf classes are untyped) or a Fatal


class Sink:
    """What subscription workers produce, in the order the call sends it (thread-safe)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Item] = queue.Queue()

    def notify(self, notification: gnmi_pb2.Notification) -> None:
        """Send one notification (an update, or a delete)."""
        self._queue.put(gnmi_pb2.SubscribeResponse(update=notification))

    def sync(self) -> None:
        """Send sync_response: every subscribed path was sent at least once."""
        self._queue.put(gnmi_pb2.SubscribeResponse(sync_response=True))

    def fatal(self, message: str, code: grpc.StatusCode = grpc.StatusCode.INVALID_ARGUMENT) -> None:
        """End the call with `code` (INVALID_ARGUMENT) `message` once what came before it was sent."""
        self._queue.put(Fatal(message, code))

    def next(self, timeout: float) -> Item | None:
        """The next item, or None after `timeout` seconds without one."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None


class DataClient(Protocol):
    """One handler's view of a Subscribe or Get request (sonic_data_client's Client interface)."""

    def get(self) -> list[gnmi_pb2.Notification]:
        """Get: one notification per path that has data (raises GnmiStatus)."""
        ...

    def once(self, sink: Sink) -> None:
        """ONCE (and each POLL round): every path with data, then sync."""
        ...

    def poll(self, sink: Sink) -> None:
        """One POLL round: as ONCE, plus deletes for paths that had data the round before."""
        ...

    def stream(self, subscriptions: gnmi_pb2.SubscriptionList, sink: Sink, stop: threading.Event) -> None:
        """STREAM: start the workers (threads) and return; they stop when `stop` is set.
        The handler sends sync once every worker has sent its first values."""
        ...
