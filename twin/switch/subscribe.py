"""gNMI Subscribe for the agent: ONCE, POLL and STREAM (SAMPLE and ON_CHANGE).

ON_CHANGE re-reads the subscribed state every 50 ms (FRR and the kernel have no change feed
the agent could use across namespaces) and sends only keys that changed, and deletes for keys
that vanished: a BGP session going down reaches the client within about one read after FRR
sees it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from pygnmi.spec.v080 import gnmi_pb2

from twin.gnmi.paths import DbPath, parse

if TYPE_CHECKING:
    from twin.switch.agent import GnmiServicer

ON_CHANGE_PERIOD_S = 0.05
DEFAULT_SAMPLE_S = 1.0


@dataclass
class _Sub:
    path: gnmi_pb2.Path
    db_path: DbPath
    on_change: bool
    interval: float
    next_due: float = 0.0
    last: Any = None


def _key_path(sub: gnmi_pb2.Path, key: str) -> gnmi_pb2.Path:
    """The subscription's own path (relative to the request prefix, as sent) plus one key."""
    elems = list(sub.elem)
    if "/" in key and elems and not elems[-1].key:
        elems[-1] = gnmi_pb2.PathElem(name=elems[-1].name, key={"key": key})
    else:
        elems.append(gnmi_pb2.PathElem(name=key))
    return gnmi_pb2.Path(origin=sub.origin, elem=elems, target=sub.target)


def _changes(sub: _Sub, value: Any) -> tuple[list[gnmi_pb2.Update], list[gnmi_pb2.Path]]:
    from twin.switch.agent import _typed

    enc = gnmi_pb2.Encoding.JSON_IETF
    before = sub.last
    if sub.db_path.key is None and isinstance(value, dict) and isinstance(before, dict):
        updates = [gnmi_pb2.Update(path=_key_path(sub.path, k), val=_typed(v, enc))
                   for k, v in value.items() if before.get(k) != v]
        deletes = [_key_path(sub.path, k) for k in before if k not in value]
        return updates, deletes
    if value != before:
        return [gnmi_pb2.Update(path=sub.path, val=_typed(value, enc))], []
    return [], []


def serve_subscription(servicer: GnmiServicer, requests: Iterator[gnmi_pb2.SubscribeRequest],
                       context: grpc.ServicerContext) -> Iterator[gnmi_pb2.SubscribeResponse]:
    first = next(requests)
    if not first.HasField("subscribe"):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first SubscribeRequest must carry a SubscriptionList")
    slist = first.subscribe
    prefix = slist.prefix if slist.HasField("prefix") else None
    encoding = slist.encoding or gnmi_pb2.Encoding.JSON_IETF
    subs = [_Sub(path=s.path, db_path=parse(prefix, s.path),
                 on_change=s.mode in (gnmi_pb2.SubscriptionMode.ON_CHANGE, gnmi_pb2.SubscriptionMode.TARGET_DEFINED),
                 interval=(s.sample_interval / 1e9) if s.sample_interval else DEFAULT_SAMPLE_S)
            for s in slist.subscription]
    if not subs:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a SubscriptionList needs at least one subscription")

    def full() -> gnmi_pb2.SubscribeResponse:
        return gnmi_pb2.SubscribeResponse(update=servicer._notification(prefix, [s.path for s in subs], encoding))

    sync = gnmi_pb2.SubscribeResponse(sync_response=True)
    if slist.mode == gnmi_pb2.SubscriptionList.ONCE:
        yield full()
        yield sync
        return
    if slist.mode == gnmi_pb2.SubscriptionList.POLL:
        yield full()
        yield sync
        for req in requests:
            if req.HasField("poll"):
                yield full()
                yield sync
        return
    # STREAM
    for s in subs:
        s.last = servicer._read(s.db_path)
    if not slist.updates_only:
        yield full()
    yield sync
    now = time.monotonic()
    for s in subs:
        s.next_due = now + (ON_CHANGE_PERIOD_S if s.on_change else s.interval)
    while context.is_active():
        now = time.monotonic()
        due = [s for s in subs if s.next_due <= now]
        for s in due:
            value = servicer._read(s.db_path)
            if s.on_change:
                updates, deletes = _changes(s, value)
                s.next_due = now + ON_CHANGE_PERIOD_S
            else:
                from twin.switch.agent import _typed

                updates, deletes = [gnmi_pb2.Update(path=s.path, val=_typed(value, encoding))], []
                s.next_due = now + s.interval
            s.last = value
            if updates or deletes:
                yield gnmi_pb2.SubscribeResponse(update=gnmi_pb2.Notification(
                    timestamp=time.time_ns(), prefix=prefix, update=updates, delete=deletes))
        wait = min(s.next_due for s in subs) - time.monotonic()
        if wait > 0:
            time.sleep(min(wait, 0.05))
