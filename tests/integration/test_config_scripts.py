"""CONFIG_DB read and loaded whole in one redis script each (sonic_redis.READ_CONFIG, LOAD_CONFIG),
against a real redis-server: what is loaded reads back as config_db.json holds it, stored as SONiC
stores it, and nothing else in the database is taken for an entry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from labtools import private_redis

from twin.stages.configdb import ConfigDb
from twin.switch.redis.redis_server import config_load
from twin.switch.redis.sonic_redis import SonicRedis

pytestmark = pytest.mark.needs_redis  # skipped with the reason by the conftest when redis-server is absent

CONFIG_DB = 4
WIDE = {f"f{i}": str(i) for i in range(5000)}   # 10,000 values: more than Lua unpacks at once (8,000)
CONFIG: ConfigDb = {
    "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "bgp_asn": "65100"}},
    "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65200", "name": "café ⚡ 𝔰𝔭𝔦𝔫𝔢 \"1\" \\ x"}},
    "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}},
    "VLAN": {"Vlan1000": {"vlanid": "1000", "members": ["Ethernet0", "Ethernet8"], "empty": []}},
    "WIDE": {"row": WIDE},
}


@pytest.fixture
def db(tmp_path: Path) -> Iterator[SonicRedis]:
    with private_redis(tmp_path, "--databases", "16") as sock:
        databases = SonicRedis(unix_socket=sock)
        yield databases
        databases.close()


def test_a_loaded_config_reads_back_whole_and_stored_as_sonic_stores_it(db: SonicRedis) -> None:
    raw = redis.Redis(unix_socket_path=str(db.unix_socket), db=CONFIG_DB, decode_responses=True)
    raw.hset("PORT|Ethernet99", "mtu", "1500")   # an earlier boot's: gone after the load
    config_load(db, CONFIG)
    assert db.get_config() == CONFIG
    assert raw.get("CONFIG_DB_INITIALIZED") == "1"
    assert not raw.exists("PORT|Ethernet99")
    assert raw.hgetall("LOOPBACK_INTERFACE|Loopback0") == {"NULL": "NULL"}
    assert raw.hgetall("VLAN|Vlan1000") == {"vlanid": "1000", "members@": "Ethernet0,Ethernet8", "empty@": ""}
    assert raw.hget("BGP_NEIGHBOR|default|10.0.0.1", "name") == CONFIG["BGP_NEIGHBOR"]["default|10.0.0.1"]["name"]
    assert raw.hlen("WIDE|row") == len(WIDE)


def test_only_hashes_under_a_table_are_entries(db: SonicRedis) -> None:
    config_load(db, {"PORT": {"Ethernet0": {"mtu": "9100"}}})
    raw = redis.Redis(unix_socket_path=str(db.unix_socket), db=CONFIG_DB)
    raw.set("NOT_A_HASH|x", "1")
    raw.sadd("A_SET|y", "1")
    raw.hset("FLAT_HASH", "a", "b")   # no separator: bookkeeping, not a table
    raw.hset("STAR|*?[]", "glob", "chars")   # glob characters in a key are only characters
    assert db.get_config() == {"PORT": {"Ethernet0": {"mtu": "9100"}}, "STAR": {"*?[]": {"glob": "chars"}}}


def test_an_empty_database_reads_as_an_empty_config(db: SonicRedis) -> None:
    assert db.get_config() == {}
    config_load(db, {})
    assert db.get_config() == {}
