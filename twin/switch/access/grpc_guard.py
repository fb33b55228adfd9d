"""A switch's gRPC server (gNMI and gNOI) that no client can lock: every call judged before it
takes a thread or has a message read, connections bounded and timed out.

- `GuardInterceptor` authenticates each call from its metadata (`username`, `password`) on the
  server's polling thread and asks the switch's `CallGate` what it gets (twin.switch.access.call_gate):
  run now, run once the client's failed logins were answered, or be refused: UNAUTHENTICATED
  "Unauthenticated" as sonic-gnmi's authenticate() answers (gNOI SetPackage: its
  PERMISSION_DENIED wrapping), or RESOURCE_EXHAUSTED past the switch's or the client's number of
  calls. A refusal never reads the request and takes a worker of a small shared pool for as long
  as it takes to send the status; a delayed one waits in `Scheduler`, which holds no thread.
  The server's `open_methods` (gRPC reflection, which sonic-gnmi serves without authenticate())
  take no credentials: they are only counted against the switch's and the client's calls.
- `server_options`: connections closed after 5 s without a call (sonic-gnmi's idle_conn_duration
  default) or 10 s without finishing their handshake, at most `MAX_CONNECTIONS` at once,
  keepalive pings to find dead clients, and sonic-gnmi's keepalive policy (pings every 20 s allowed
  without calls).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any, TypeVar

import grpc

from twin.switch.access import grpc_peer
from twin.switch.access.auth import PasswordAuth
from twin.switch.access.call_gate import MAX_CALLS, CallGate, Outcome, Ticket
from twin.switch.access.login_throttle import client_host

T = TypeVar("T")
log = logging.getLogger("twin.grpc_guard")

MAX_MESSAGE = 4 * 1024 * 1024        # grpc-go's default, as sonic-gnmi
MAX_CONNECTIONS = 1024               # a switch's gRPC connections at once
IDLE_CONNECTION_MS = 5_000           # sonic-gnmi's --idle_conn_duration default (5 s)
HANDSHAKE_MS = 10_000
KEEPALIVE_MS, KEEPALIVE_TIMEOUT_MS = 30_000, 20_000
CLIENT_PING_MS = 20_000              # sonic-gnmi's keepalive.EnforcementPolicy MinTime
STREAMS_PER_CONNECTION = 128
REFUSERS = 4                         # the shared pool's threads that send refusals

UNAUTHENTICATED = (grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")
REFUSALS = {  # methods whose authentication failure sonic-gnmi words otherwise
    "/gnoi.system.System/SetPackage": (grpc.StatusCode.PERMISSION_DENIED,
                                       "authentication failed: rpc error: code = Unauthenticated desc = "
                                       "Unauthenticated"),
}
BUSY = (grpc.StatusCode.RESOURCE_EXHAUSTED, "Concurrent RPC limit exceeded!")  # grpc's own words


def server_options() -> list[tuple[str, int]]:
    return [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", -1),
            ("grpc.max_allowed_incoming_connections", MAX_CONNECTIONS),
            ("grpc.max_connection_idle_ms", IDLE_CONNECTION_MS),
            ("grpc.server_handshake_timeout_ms", HANDSHAKE_MS),
            ("grpc.max_concurrent_streams", STREAMS_PER_CONNECTION),
            ("grpc.keepalive_time_ms", KEEPALIVE_MS), ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_recv_ping_interval_without_data_ms", CLIENT_PING_MS)]


class Scheduler:
    """Runs callables at a monotonic time from one thread of its own (started on first use)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def at(self, when: float, job: Callable[[], None]) -> None:
        if when <= time.monotonic():
            job()
            return
        with self._wake:
            heapq.heappush(self._heap, (when, next(self._seq), job))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="grpc-guard", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._wake.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                _, _, job = heapq.heappop(self._heap)
            try:
                job()
            except Exception:  # a job that fails must not stop the others
                log.exception("a delayed gRPC answer failed")


class _Deferred(futures.ThreadPoolExecutor):
    """What grpc submits one call's work to (a handler's `experimental_thread_pool`): the work goes
    to `pool` at `when`, and holds no thread until then. Only `submit` is used, so the executor's
    own machinery is not set up."""

    def __init__(self, scheduler: Scheduler, when: float, pool: futures.ThreadPoolExecutor) -> None:
        self._scheduler, self._when, self._pool = scheduler, when, pool

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> futures.Future[T]:
        outer: futures.Future[T] = futures.Future()

        def release() -> None:
            try:
                inner = self._pool.submit(fn, *args, **kwargs)
            except RuntimeError as exc:  # the pool was shut down: the server is stopping
                outer.set_exception(exc)
                return
            inner.add_done_callback(lambda done: _settle(done, outer))

        self._scheduler.at(self._when, release)
        return outer

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


def _settle(done: futures.Future[T], outer: futures.Future[T]) -> None:
    error = done.exception()
    if error is not None:
        outer.set_exception(error)
    else:
        outer.set_result(done.result())


SCHEDULER = Scheduler()
REFUSER_POOL = futures.ThreadPoolExecutor(max_workers=REFUSERS, thread_name_prefix="grpc-refuse")


class GuardInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """Judges every call of one switch's server before it runs (see the module's docstring)."""

    def __init__(self, gate: CallGate, auth: PasswordAuth, pool: futures.ThreadPoolExecutor,
                 scheduler: Scheduler = SCHEDULER, refusers: futures.ThreadPoolExecutor = REFUSER_POOL,
                 clock: Callable[[], float] = time.monotonic, open_methods: frozenset[str] = frozenset()) -> None:
        if not grpc_peer.install():
            log.warning("grpcio %s does not tell interceptors the client's address: every client of a switch "
                        "is judged as one for failed logins and calls per client", grpc.__version__)
        self.gate, self.auth, self.pool = gate, auth, pool
        self.scheduler, self.refusers, self.clock = scheduler, refusers, clock
        self.open_methods = open_methods

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        handler = continuation(details)
        if handler is None:  # no such method: grpc answers UNIMPLEMENTED, nothing was taken
            return None
        peer = client_host(grpc_peer.PEER.get())
        if details.method in self.open_methods:
            ticket = self.gate.arrive_open(peer, self.clock())
        else:
            metadata: dict[str, Any] = {}
            for key, value in details.invocation_metadata or ():
                metadata.setdefault(key, value)
            ticket = self.gate.arrive(peer, self.auth.authentic_metadata(metadata), self.clock())
        if ticket.outcome is Outcome.RUN:
            return self._run(handler, ticket, details.method)
        if ticket.outcome is Outcome.UNAUTHENTICATED:
            code, message = REFUSALS.get(details.method, UNAUTHENTICATED)
        elif ticket.outcome is Outcome.PEER_BUSY:
            code, message = grpc.StatusCode.RESOURCE_EXHAUSTED, (
                f"Concurrent RPC limit exceeded for {ticket.peer}: {self.gate.peer_calls} calls at once per client")
        elif ticket.outcome is Outcome.FLOODED:
            code, message = grpc.StatusCode.RESOURCE_EXHAUSTED, (
                f"too many failed logins waiting for their answer ({ticket.peer}: at most "
                f"{self.gate.peer_waiting} a client, {self.gate.max_waiting} a switch); try again later")
        else:
            code, message = BUSY
        return self._refuse(ticket, code, message)

    def _refuse(self, ticket: Ticket, code: grpc.StatusCode, message: str) -> grpc.RpcMethodHandler:
        """A handler that reads no request and answers `code` at the ticket's time (any method's
        client takes a status alone as the answer)."""
        gate = self.gate

        def refuse(requests: Iterator[Any], context: grpc.ServicerContext) -> None:
            try:
                context.abort(code, message)
            finally:
                gate.finished(ticket)

        refuse.experimental_thread_pool = self._pool_for(ticket, self.refusers)  # type: ignore[attr-defined]
        return grpc.stream_unary_rpc_method_handler(refuse)

    def _run(self, handler: grpc.RpcMethodHandler, ticket: Ticket, method: str) -> grpc.RpcMethodHandler:
        """The method's own handler, counted against the gate until the call ends, started at the
        ticket's time (after the client's failed logins were answered).

        Served as a request-streaming handler whatever the method: grpc calls such a handler even
        when the client went away before sending its request (a unary handler it would skip), so
        the call's place is always given back, by the callback grpc runs when a call ends."""
        gate = self.gate
        lock = threading.Lock()
        open_ = [True]

        def finish() -> None:
            with lock:
                if not open_[0]:
                    return
                open_[0] = False
            gate.finished(ticket)

        def begin(context: grpc.ServicerContext) -> None:
            if not context.add_callback(finish):  # the call has ended already
                finish()

        def one(requests: Iterator[Any], context: grpc.ServicerContext) -> Any:
            """A unary method's request, as grpc reads it (a cancelled call raises RpcError)."""
            for request in requests:
                return request
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f'"{method}" requires exactly one request message.')
            raise AssertionError("context.abort raises")

        def responses(iterator: Iterator[Any]) -> Iterator[Any]:
            try:
                yield from iterator
            finally:
                finish()

        def wrap(behavior: Callable[..., Any], unary_in: bool, unary_out: bool) -> Callable[..., Any]:
            def call(requests: Iterator[Any], context: grpc.ServicerContext) -> Any:
                begin(context)
                try:
                    answer = behavior(one(requests, context) if unary_in else requests, context)
                except BaseException:
                    finish()
                    raise
                if unary_out:  # given back as the answer leaves, not later when grpc ends the call
                    finish()
                    return answer
                return responses(answer)
            return call

        kinds = (("unary_unary", True, True, grpc.stream_unary_rpc_method_handler),
                 ("unary_stream", True, False, grpc.stream_stream_rpc_method_handler),
                 ("stream_unary", False, True, grpc.stream_unary_rpc_method_handler),
                 ("stream_stream", False, False, grpc.stream_stream_rpc_method_handler))
        for attribute, unary_in, unary_out, make in kinds:
            behavior = getattr(handler, attribute)
            if behavior is not None:
                wrapped: Any = wrap(behavior, unary_in, unary_out)
                if ticket.at > self.clock():
                    wrapped.experimental_thread_pool = self._pool_for(ticket, self.pool)
                made: grpc.RpcMethodHandler = make(wrapped, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)
                return made
        finish()
        return handler

    def _pool_for(self, ticket: Ticket, pool: futures.ThreadPoolExecutor) -> futures.ThreadPoolExecutor:
        return _Deferred(self.scheduler, ticket.at, pool) if ticket.at > self.clock() else pool


def guarded_server(name: str, username: str, password: str, gate: CallGate | None = None,
                   open_methods: frozenset[str] = frozenset()) -> tuple[grpc.Server, CallGate]:
    """A switch's gRPC server: MAX_CALLS workers (made as needed), every call through its gate;
    `open_methods` (full method names) are served without credentials."""
    pool = futures.ThreadPoolExecutor(max_workers=MAX_CALLS, thread_name_prefix=name)
    gate = gate if gate is not None else CallGate()
    interceptor = GuardInterceptor(gate, PasswordAuth(username, password), pool, open_methods=open_methods)
    return grpc.server(pool, interceptors=[interceptor], options=server_options()), gate
