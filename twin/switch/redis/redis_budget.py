"""A per-switch budget of redis connections for the switch's management clients.

A switch's gNMI clients read its databases over connections of their own (a STREAM subscription
holds one for as long as it runs); the switch's own daemons (config daemon, state producers) have
theirs apart, so no number of clients can take a connection the switch needs (100 ON_CHANGE
subscriptions once exhausted the one pool they all shared, "Too many connections", and the
switch's state producers froze). The clients' connections of one switch, over every database,
share one `ConnectionBudget`: a client that finds it spent waits `wait_s` for a connection to come
back, then gets `ClientsExhausted`, which the gNMI front turns into RESOURCE_EXHAUSTED. Idle
connections beyond IDLE_KEEP a database are closed as they come back, so what the budget allows in
use is about what the switch's redis ever holds for clients.
"""

from __future__ import annotations

import threading
from typing import Any

import redis
from redis.exceptions import MaxConnectionsError

CLIENT_CONNECTIONS = 256   # a switch's clients' connections in use at once (gNMI: MAX_RPCS calls a switch)
CLIENT_WAIT_S = 1.0        # how long a client waits for one of them before it is refused
IDLE_KEEP = 4              # idle client connections kept open a database


class ClientsExhausted(MaxConnectionsError):
    """Every connection of a switch's client budget is in use (the message says so)."""


class ConnectionBudget:
    """At most `limit` connections in use at once, across the pools that share it."""

    def __init__(self, limit: int = CLIENT_CONNECTIONS, wait_s: float = CLIENT_WAIT_S) -> None:
        self.limit, self.wait_s = limit, wait_s
        self._slots = threading.BoundedSemaphore(limit)

    def acquire(self) -> None:
        if not self._slots.acquire(timeout=self.wait_s):
            raise ClientsExhausted(f"all {self.limit} redis connections this switch allows its management "
                                   "clients are in use (subscriptions hold one each); try again later")

    def release(self) -> None:
        self._slots.release()


class BudgetPool(redis.ConnectionPool):
    """A redis-py connection pool whose connections in use count against a shared budget."""

    def __init__(self, budget: ConnectionBudget, **kwargs: Any) -> None:
        super().__init__(max_connections=1 << 30, **kwargs)   # the budget bounds it, not this
        self.budget = budget
        self._held: set[Any] = set()
        self._held_lock = threading.Lock()

    def get_connection(self, *args: Any, **options: Any) -> Any:
        self.budget.acquire()
        try:
            connection = super().get_connection(*args, **options)
        except BaseException:
            self.budget.release()
            raise
        with self._held_lock:
            self._held.add(connection)
        return connection

    def release(self, connection: Any) -> None:
        with self._held_lock:
            held = connection in self._held
            self._held.discard(connection)
        super().release(connection)
        if held:
            self.budget.release()
        self._close_idle()

    def _close_idle(self) -> None:
        """Idle connections beyond IDLE_KEEP closed (a burst of subscriptions ending leaves none open)."""
        with self._lock:
            extra = self._available_connections[IDLE_KEEP:]
            del self._available_connections[IDLE_KEEP:]
            self._created_connections -= len(extra)
        for connection in extra:
            connection.disconnect()
