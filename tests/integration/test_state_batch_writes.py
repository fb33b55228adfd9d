"""The state producers' batched writes (twin.switch.state.producers.Batch, one script per database,
SonicRedis.write_rows) against a real redis-server: the same hashes, in the same order, with the
same keyspace events as the HSET, HDEL and DEL commands sent one by one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from labtools import private_redis

from twin.switch.redis.sonic_redis import SonicRedis
from twin.switch.state.producers import Batch

pytestmark = pytest.mark.needs_redis  # skipped with the reason by the conftest when redis-server is absent

STATE_DB, COUNTERS_DB = 6, 2   # SONiC's database_config.json


@pytest.fixture()
def sock(tmp_path: Path) -> Iterator[Path]:
    with private_redis(tmp_path, "--databases", "16", "--notify-keyspace-events", "Kgh") as path:
        yield path


def raw(sock: Path, db: int) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(sock), db=db, decode_responses=True)


def events(pubsub: redis.client.PubSub, want: int) -> list[tuple[str, str]]:
    """The next `want` keyspace events: (key, command)."""
    got: list[tuple[str, str]] = []
    deadline = time.monotonic() + 5
    while len(got) < want and time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.2)
        if message and message["type"] == "pmessage":
            got.append((message["channel"].split(":", 1)[1], message["data"]))
    return got


def test_a_batch_writes_each_database_in_the_order_queued(sock: Path) -> None:
    state, counters = raw(sock, STATE_DB), raw(sock, COUNTERS_DB)
    state.hset("PORT_TABLE|Ethernet0", mapping={"state": "ok", "old": "x"})
    state.hset("PORT_TABLE|Ethernet4", mapping={"state": "ok"})
    watch = counters.pubsub()
    watch.psubscribe(f"__keyspace@{COUNTERS_DB}__:*")
    watch.get_message(timeout=1)   # the subscription's confirmation

    batch = Batch(SonicRedis(unix_socket=sock))
    batch.pipe("STATE_DB").hset("PORT_TABLE|Ethernet0", mapping={"state": "ok", "netdev_oper_status": "up"})
    batch.pipe("STATE_DB").hdel("PORT_TABLE|Ethernet0", "old")
    batch.pipe("STATE_DB").delete("PORT_TABLE|Ethernet4")
    ports = batch.pipe("COUNTERS_DB")
    ports.hset("COUNTERS:oid:0x1", mapping={"SAI_PORT_STAT_IF_IN_OCTETS": "18446744073709551615"})
    ports.delete("COUNTERS:oid:0x1")   # order kept: the row is gone, then written afresh
    ports.hset("COUNTERS:oid:0x1", mapping={"SAI_PORT_STAT_IF_OUT_OCTETS": "7"})
    ports.hset("COUNTERS_PORT_NAME_MAP", mapping={f"Ethernet{4 * i}": f"oid:0x{i:x}" for i in range(1500)})
    ports.hset("COUNTERS:oid:0x2", mapping={"name": "é ü \" \\ 1e5"})
    ports.hdel("COUNTERS:oid:0x2")   # no fields: nothing to send
    batch.execute()

    assert state.hgetall("PORT_TABLE|Ethernet0") == {"state": "ok", "netdev_oper_status": "up"}
    assert not state.exists("PORT_TABLE|Ethernet4")
    # numbers stay the strings they were (a Lua number would round a 64-bit counter)
    assert counters.hgetall("COUNTERS:oid:0x1") == {"SAI_PORT_STAT_IF_OUT_OCTETS": "7"}
    names = counters.hgetall("COUNTERS_PORT_NAME_MAP")
    assert len(names) == 1500 and names["Ethernet5996"] == "oid:0x5db"   # more than a spine's queue map
    assert counters.hgetall("COUNTERS:oid:0x2") == {"name": "é ü \" \\ 1e5"}
    # the keyspace events of the commands one by one, in order (what a gNMI subscription follows)
    assert events(watch, 5) == [("COUNTERS:oid:0x1", "hset"), ("COUNTERS:oid:0x1", "del"),
                                ("COUNTERS:oid:0x1", "hset"), ("COUNTERS_PORT_NAME_MAP", "hset"),
                                ("COUNTERS:oid:0x2", "hset")]
    watch.close()


def test_a_row_without_fields_is_refused_when_queued(sock: Path) -> None:
    batch = Batch(SonicRedis(unix_socket=sock))
    with pytest.raises(ValueError, match=r"HSET PORT_TABLE\|Ethernet0 with no fields"):
        batch.pipe("STATE_DB").hset("PORT_TABLE|Ethernet0", mapping={})
    batch.execute()   # nothing was queued: nothing is sent
    assert raw(sock, STATE_DB).dbsize() == 0


def test_a_hash_larger_than_one_unpack_is_written_whole(sock: Path) -> None:
    batch = Batch(SonicRedis(unix_socket=sock))
    batch.pipe("COUNTERS_DB").hset("COUNTERS_QUEUE_NAME_MAP", mapping={f"Ethernet{i}:{q}": f"oid:{i}.{q}"
                                                                       for i in range(500) for q in range(9)})
    batch.execute()
    names = raw(sock, COUNTERS_DB).hgetall("COUNTERS_QUEUE_NAME_MAP")
    assert len(names) == 4500 and names["Ethernet499:8"] == "oid:499.8" and names["Ethernet0:0"] == "oid:0.0"
