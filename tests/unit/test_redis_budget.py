"""A switch's management clients share a bounded budget of redis connections, apart from the
switch's own daemons: a client past it is refused (ClientsExhausted), one that returns a
connection frees its slot, and idle connections do not pile up."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from twin.switch.redis.redis_budget import IDLE_KEEP, BudgetPool, ClientsExhausted, ConnectionBudget
from twin.switch.redis.sonic_redis import SonicRedis


class FakeConnection:
    """What the pool asks of a connection, without a server."""

    made: ClassVar[list[FakeConnection]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs, self.pid, self.open = kwargs, os.getpid(), False
        FakeConnection.made.append(self)

    def connect(self) -> None:
        self.open = True

    def can_read(self) -> bool:
        return False

    def disconnect(self, *args: Any) -> None:
        self.open = False

    def should_reconnect(self) -> bool:
        return False

    def set_re_auth_token(self, token: Any) -> None: ...

    def re_auth(self) -> None: ...


def _pool(budget: ConnectionBudget) -> BudgetPool:
    return BudgetPool(budget, connection_class=FakeConnection)


def test_connections_in_use_over_every_database_share_the_budget() -> None:
    budget = ConnectionBudget(limit=3, wait_s=0.01)
    state, config = _pool(budget), _pool(budget)
    held = [state.get_connection(), state.get_connection(), config.get_connection()]
    with pytest.raises(ClientsExhausted, match="all 3 redis connections"):
        config.get_connection()
    with pytest.raises(ClientsExhausted):
        state.get_connection()
    state.release(held[0])                       # a subscription ends: its slot is free again
    again = config.get_connection()
    assert again.open
    for pool, conn in ((state, held[1]), (config, held[2]), (config, again)):
        pool.release(conn)
    assert [budget.acquire() for _ in range(3)] == [None, None, None]   # every slot came back


def test_a_waiting_client_gets_a_connection_given_back_meanwhile() -> None:
    budget = ConnectionBudget(limit=1, wait_s=5)
    pool = _pool(budget)
    first = pool.get_connection()
    threading.Timer(0.05, pool.release, args=(first,)).start()
    assert pool.get_connection() is first       # reused, not refused


def test_idle_connections_beyond_a_few_are_closed() -> None:
    FakeConnection.made.clear()
    pool = _pool(ConnectionBudget(limit=50, wait_s=0.01))
    conns = [pool.get_connection() for _ in range(20)]
    for conn in conns:
        pool.release(conn)
    assert sum(c.open for c in FakeConnection.made) == IDLE_KEEP
    assert len(pool._available_connections) == IDLE_KEEP


def test_a_budgeted_switch_redis_uses_budget_pools(tmp_path: Path) -> None:
    budget = ConnectionBudget(limit=2)
    db = SonicRedis(unix_socket=tmp_path / "redis.sock", budget=budget)
    state, config = db.client("STATE_DB").connection_pool, db.client("CONFIG_DB").connection_pool
    assert isinstance(state, BudgetPool) and isinstance(config, BudgetPool)
    assert state.budget is config.budget is budget
    assert state.connection_kwargs["path"] == str(tmp_path / "redis.sock") and state.connection_kwargs["db"] == 6
    own = SonicRedis(unix_socket=tmp_path / "redis.sock")   # the switch's daemons: apart, unbudgeted
    assert not isinstance(own.client("STATE_DB").connection_pool, BudgetPool)
