"""A call's client address where grpc's server interceptors run (grpcio's synchronous server).

grpcio hands an interceptor the method and the metadata, not the peer, and runs it on the server's
polling thread before the call is given a worker thread: the one place where a call can be judged
without taking a thread. `install()` wraps grpcio's `_find_method_handler` so that the peer is set
in the call's context (`PEER`) just before the interceptors run. Without it (a grpcio whose inner
function changed), `PEER` stays empty and every client is judged as one.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any

from grpc import _server

PEER: contextvars.ContextVar[str] = contextvars.ContextVar("twin_grpc_peer", default="")
_lock = threading.Lock()


def install() -> bool:
    """Set `PEER` for every call of every grpc server in this process; True when in place."""
    with _lock:
        original = getattr(_server, "_find_method_handler", None)
        if original is None:
            return False
        if getattr(original, "twin_sets_peer", False):
            return True

        def find_method_handler(rpc_event: Any, *rest: Any) -> Any:
            try:
                peer = rpc_event.call.peer()
                text = peer.decode(errors="replace") if isinstance(peer, bytes) else str(peer)
            except Exception:  # a call without a peer: judged with the others that have none
                text = ""
            PEER.set(text)
            context = getattr(rest[0], "context", None) if rest else None
            if isinstance(context, contextvars.Context):  # interceptors run in the call's own context
                context.run(PEER.set, text)
            return original(rpc_event, *rest)

        find_method_handler.twin_sets_peer = True  # type: ignore[attr-defined]
        _server._find_method_handler = find_method_handler
        return True
