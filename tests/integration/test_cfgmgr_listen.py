"""A config daemon's listener against a real redis-server: it follows CONFIG_DB's keyspace events,
waits on its subscription between changes instead of waking to look at its stop event, and ends
promptly when the agent closes its daemons (cfgmgr.wake)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from labtools import private_redis

from twin.switch.config.cfgmgr import ConfigDaemon, listen, wake
from twin.switch.redis.sonic_redis import SonicRedis
from twin.switch.state.switchd import SwitchDaemons

pytestmark = pytest.mark.needs_redis  # skipped with the reason by the conftest when redis-server is absent

CONFIG_DB = 4


class CountingPubSub:
    """redis-py's PubSub, counting the reads the listener makes."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.reads = inner, 0
        self.waiting = threading.Event()   # set while a read is under way

    def get_message(self, *args: Any, **kwargs: Any) -> Any:
        self.reads += 1
        self.waiting.set()
        try:
            return self.inner.get_message(*args, **kwargs)
        finally:
            self.waiting.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class RecordingDaemon:
    """What listen needs of a ConfigDaemon: its switch's redis, start, and the changes it is given."""

    def __init__(self, sock: Path) -> None:
        self.name = "leaf1"
        self.db = SonicRedis(unix_socket=sock)
        self.started = threading.Event()
        self.changes: list[set[str]] = []
        self.pubsubs: list[CountingPubSub] = []
        client = self.db.client("CONFIG_DB")
        make = client.pubsub

        def counted(**kwargs: Any) -> CountingPubSub:
            self.pubsubs.append(CountingPubSub(make(**kwargs)))
            return self.pubsubs[-1]

        client.pubsub = counted  # type: ignore[method-assign]

    def start(self) -> None:
        self.started.set()

    def changed(self, keys: set[str]) -> None:
        self.changes.append(keys)


@pytest.fixture
def sock(tmp_path: Path) -> Iterator[Path]:
    with private_redis(tmp_path, "--notify-keyspace-events", "AKE", "--databases", "16") as path:
        yield path


def _until(condition: Any, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_change_is_programmed_and_an_idle_listener_does_not_wake(sock: Path) -> None:
    daemon = RecordingDaemon(sock)
    stop = threading.Event()
    thread = threading.Thread(target=listen, args=(cast(ConfigDaemon, daemon), stop), daemon=True)
    thread.start()
    try:
        assert daemon.started.wait(10)
        writer = redis.Redis(unix_socket_path=str(sock), db=CONFIG_DB)
        with writer.pipeline(transaction=True) as pipe:   # one MULTI/EXEC: one change
            pipe.hset("BGP_NEIGHBOR|10.0.0.1", "asn", "65100")
            pipe.hset("PORT|Ethernet0", "mtu", "9100")
            pipe.execute()
        assert _until(lambda: daemon.changes), "the listener never programmed the change"
        assert daemon.changes == [{"BGP_NEIGHBOR|10.0.0.1", "PORT|Ethernet0"}]
        pubsub = daemon.pubsubs[0]
        assert _until(pubsub.waiting.is_set), "the listener did not go back to its subscription"
        reads = pubsub.reads
        time.sleep(1.5)   # idle: three wake-ups at the old half-second poll
        assert pubsub.reads == reads, "the idle listener woke to look at its stop event"
        stop.set()
        assert thread.is_alive(), "the listener ended without being woken"
        wake(cast(ConfigDaemon, daemon))
        thread.join(10)
        assert not thread.is_alive(), "the listener did not end when woken"
    finally:
        stop.set()
        wake(cast(ConfigDaemon, daemon))


def test_closing_the_agents_daemons_ends_their_listeners(sock: Path) -> None:
    daemon = RecordingDaemon(sock)
    daemons = SwitchDaemons([cast(ConfigDaemon, daemon)], [])
    daemons.start_config()
    assert daemon.started.wait(10)
    daemons.close()   # joins each listener for 2 s: one still waiting on redis is alive after it
    assert not any(t.is_alive() for t in daemons.threads), "a listener outlived close"


def test_waking_a_switch_whose_redis_is_gone_is_no_error(tmp_path: Path) -> None:
    daemon = RecordingDaemon(tmp_path / "gone.sock")
    wake(cast(ConfigDaemon, daemon))   # logs, does not raise
