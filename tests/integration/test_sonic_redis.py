"""twin's gNMI agent fronting a SONiC switch through its redis, against a real redis-server.

The redis is laid out as docker-sonic-vs lays it out: CONFIG_DB (4) written from leaf1's
config_db.json the way sonic-cfggen writes it, next to SONiC's own tables; STATE_DB (6),
APPL_DB (0) and COUNTERS_DB (2) holding what bgpmon, portsyncd, portsorch, fpmsyncd and syncd
write. The gNMI servicer runs in-process on 127.0.0.1 (plaintext) over a `SonicEndpoint`;
assertions read redis directly, by SONiC's raw key names.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from labtools import private_redis, without_yang
from pygnmi.client import gNMIclient, gNMIException
from pygnmi.spec.v080 import gnmi_pb2_grpc

from twin.gnmi.client import SwitchClient
from twin.stages.configdb import ConfigDb
from twin.stages.lab_file import load_lab
from twin.stages.render.config_db import build_config_db
from twin.switch.config.yang_check import YangCheck
from twin.switch.redis.sonic_redis import SonicRedis
from twin.switch.sonic_endpoint import SonicEndpoint
from twin.switch.sonic_gnmi.server import SonicGnmiServicer

pytestmark = pytest.mark.needs_redis  # skipped with the reason by the conftest when redis-server is absent

APPL_DB, COUNTERS_DB, CONFIG_DB, STATE_DB = 0, 2, 4, 6  # SONiC's database_config.json
USER, PASSWORD = "admin", "YourPaSsWoRd"
NB = "default|10.0.0.64"
NB_PATH = f"/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/{NB}"

# SONiC's own CONFIG_DB tables, which twin does not model (ACL_TABLE holds an `@` list).
SONIC_OWN: ConfigDb = {
    "FEATURE": {"bgp": {"state": "enabled", "auto_restart": "enabled"},
                "swss": {"state": "enabled", "auto_restart": "enabled"}},
    "FLEX_COUNTER_TABLE": {"PORT": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "1000"}},
    "ACL_TABLE": {"DATAACL": {"policy_desc": "DATAACL", "type": "L3", "stage": "ingress",
                              "ports": ["Ethernet0", "Ethernet4"]}},
}


# -- redis, laid out as SONiC lays it out ----------------------------------------------------


@pytest.fixture(scope="module")
def socket_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private redis-server on a unix socket (no TCP, no persistence), stopped at the end."""
    with private_redis(tmp_path_factory.mktemp("redis"), "--databases", "16") as sock:
        yield sock


def raw(sock: Path, db: int) -> redis.Redis:
    """A plain client on one database number, as `redis-cli -n <db>` would be."""
    return redis.Redis(unix_socket_path=str(sock), db=db, decode_responses=True)


@pytest.fixture(scope="module")
def leaf1() -> tuple[ConfigDb, list[str]]:
    """The config_db.json twin renders for the default lab's leaf1, and leaf1's ports."""
    plan = load_lab(Path("labs/default.yaml")).plan
    node = plan.node("leaf1")
    return build_config_db(plan, node), [i.name for i in node.interfaces]


@pytest.fixture(scope="module")
def on_switch(leaf1: tuple[ConfigDb, list[str]]) -> ConfigDb:
    """CONFIG_DB as the SONiC switch holds it: twin's tables plus SONiC's own."""
    return {**leaf1[0], **SONIC_OWN}


def write_like_sonic_cfggen(client: redis.Redis, config: ConfigDb) -> None:
    """`sonic-cfggen -j config_db.json --write-to-db`: one hash per `TABLE|key`, lists as
    `field@` comma-joined, an entry without fields as NULL: NULL; then CONFIG_DB_INITIALIZED."""
    pipe = client.pipeline()
    for table, rows in config.items():
        for key, row in rows.items():
            fields = {(f + "@" if isinstance(v, list) else f): (",".join(v) if isinstance(v, list) else v)
                      for f, v in row.items()} or {"NULL": "NULL"}
            pipe.hset(f"{table}|{key}", mapping=fields)
    pipe.set("CONFIG_DB_INITIALIZED", "1")
    pipe.execute()


def seed_state(sock: Path, config: ConfigDb, ports: list[str]) -> None:
    """What SONiC's daemons write once leaf1 is up: BGP and BFD sessions, ports, routes, counters."""
    peers = {key.split("|")[-1]: row for key, row in config["BGP_NEIGHBOR"].items()}
    port_of = {key.split("|")[1].split("/")[0]: key.split("|")[0] for key in config["INTERFACE"] if "|" in key}
    state, appl, counters = raw(sock, STATE_DB), raw(sock, APPL_DB), raw(sock, COUNTERS_DB)
    for peer, row in peers.items():  # bgpmon
        state.hset(f"NEIGH_STATE_TABLE|{peer}", mapping={"state": "Established", "peerType": "e-BGP"})
        state.hset(f"BFD_SESSION_TABLE|default|{port_of[row['local_addr']]}|{peer}", mapping={
            "state": "Up", "type": "async_active", "local_addr": row["local_addr"], "multiplier": "3",
            "rx_interval": "100", "tx_interval": "100"})
    for n, port in enumerate(ports):
        row = config["PORT"][port]
        state.hset(f"PORT_TABLE|{port}", mapping={  # portsyncd
            "state": "ok", "netdev_oper_status": "up", "admin_status": "up", "mtu": row["mtu"], "speed": row["speed"]})
        appl.hset(f"PORT_TABLE:{port}", mapping={  # portmgrd / portsorch
            "admin_status": "up", "oper_status": "up", "mtu": row["mtu"], "speed": row["speed"], "lanes": row["lanes"]})
        oid = f"oid:0x1000000000{n + 2:03x}"
        counters.hset("COUNTERS_PORT_NAME_MAP", port, oid)  # syncd / flex counters
        counters.hset(f"COUNTERS:{oid}", mapping={
            "SAI_PORT_STAT_IF_IN_OCTETS": str(1000 * (n + 1)), "SAI_PORT_STAT_IF_OUT_OCTETS": str(2000 * (n + 1)),
            "SAI_PORT_STAT_IF_IN_UCAST_PKTS": str(10 * (n + 1)), "SAI_PORT_STAT_IF_IN_ERRORS": "0"})
    spines = {"nexthop": ",".join(peers), "ifname": ",".join(port_of[r["local_addr"]] for r in peers.values()),
              "protocol": "bgp"}
    appl.hset("ROUTE_TABLE:10.1.4.2", mapping=spines)  # fpmsyncd: host routes carry no /32
    appl.hset("ROUTE_TABLE:10.2.0.4/31", mapping=spines)
    appl.hset("ROUTE_TABLE:10.2.0.0/31", mapping={"nexthop": "0.0.0.0", "ifname": "Ethernet0"})
    appl.sadd("ROUTE_TABLE_KEY_SET", "10.9.9.0/24")  # ProducerStateTable's staging, not entries
    appl.hset("_ROUTE_TABLE:10.9.9.0/24", mapping={"nexthop": "10.0.0.64", "ifname": "Ethernet128"})


@pytest.fixture
def sock(socket_path: Path, on_switch: ConfigDb, leaf1: tuple[ConfigDb, list[str]]) -> Path:
    """The redis, emptied and seeded afresh for each test."""
    raw(socket_path, 0).flushall()
    write_like_sonic_cfggen(raw(socket_path, CONFIG_DB), on_switch)
    seed_state(socket_path, on_switch, leaf1[1])
    return socket_path


def dump(sock: Path) -> dict[int, dict[str, Any]]:
    """Every key of the four databases with its value: to prove a rejected Set changed nothing."""
    out: dict[int, dict[str, Any]] = {}
    for db in (APPL_DB, COUNTERS_DB, CONFIG_DB, STATE_DB):
        client = raw(sock, db)
        readers = {"hash": client.hgetall, "string": client.get, "set": client.smembers}
        out[db] = {k: readers[client.type(k)](k) for k in client.scan_iter()}
    return out


# -- the gNMI front ----------------------------------------------------------------------------


@pytest.fixture
def port(sock: Path, leaf1: tuple[ConfigDb, list[str]]) -> Iterator[int]:
    """twin's gNMI servicer over a SonicEndpoint, plaintext on 127.0.0.1; yields its port."""
    endpoint = SonicEndpoint("leaf1", leaf1[1], SonicRedis(unix_socket=sock))
    endpoint.recover()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    gnmi_pb2_grpc.add_gNMIServicer_to_server(SonicGnmiServicer(endpoint, USER, PASSWORD, YangCheck.find()), server)
    bound = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield bound
    finally:
        server.stop(grace=None)
        endpoint.db.close()


@pytest.fixture
def gc(port: int) -> Iterator[gNMIclient]:
    """pygnmi, as a user's script drives SONiC's gNMI server."""
    with gNMIclient(target=("127.0.0.1", port), username=USER, password=PASSWORD, insecure=True) as client:
        yield client


def twin_client(port: int) -> SwitchClient:
    """twin's own client (what `twin push` and the checks use)."""
    return SwitchClient("leaf1", {"host": "127.0.0.1", "port": port, "username": USER, "password": PASSWORD,
                                  "insecure": True})


def value(response: dict[str, Any]) -> Any:
    return response["notification"][0]["update"][0]["val"]


# -- reads -------------------------------------------------------------------------------------


def test_get_config_round_trips_config_db_json(sock: Path, on_switch: ConfigDb) -> None:
    assert SonicRedis(unix_socket=sock).get_config() == on_switch
    cfg = raw(sock, CONFIG_DB)
    assert cfg.hgetall("ACL_TABLE|DATAACL")["ports@"] == "Ethernet0,Ethernet4"
    assert cfg.hgetall("INTERFACE|Ethernet0") == {"NULL": "NULL"}
    assert cfg.get("CONFIG_DB_INITIALIZED") == "1"


def test_config_and_state_over_gnmi(port: int, on_switch: ConfigDb) -> None:
    with twin_client(port) as sw:
        assert sw.table("CONFIG_DB", "BGP_NEIGHBOR") == on_switch["BGP_NEIGHBOR"]
        assert sw.get("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu") == "9100"
        assert sw.get("/sonic-db:CONFIG_DB/localhost/")["ACL_TABLE"]["DATAACL"]["ports"] == ["Ethernet0", "Ethernet4"]
        neigh = sw.table("STATE_DB", "NEIGH_STATE_TABLE")
        assert neigh == {peer.split("|")[-1]: {"state": "Established", "peerType": "e-BGP"}
                         for peer in on_switch["BGP_NEIGHBOR"]}
        routes = sw.table("APPL_DB", "ROUTE_TABLE")  # as fpmsyncd keys them: host routes without /32
        assert set(routes) == {"10.1.4.2", "10.2.0.4/31", "10.2.0.0/31"}
        assert sw.get("/sonic-db:APPL_DB/localhost/ROUTE_TABLE/10.1.4.2/ifname") == \
            "Ethernet128,Ethernet132,Ethernet136,Ethernet140"
        assert sw.get("/sonic-db:APPL_DB/localhost/ROUTE_TABLE[key=10.2.0.4/31]/ifname")
        assert sw.table("APPL_DB", "PORT_TABLE")["Ethernet128"]["oper_status"] == "up"
        bfd = sw.table("STATE_DB", "BFD_SESSION_TABLE")
        assert bfd["default|Ethernet128|10.0.0.64"]["state"] == "Up" and len(bfd) == 4


def test_legacy_target_paths_and_counters(gc: gNMIclient) -> None:
    neigh = value(gc.get(prefix="", target="STATE_DB", path=["NEIGH_STATE_TABLE"], encoding="json_ietf"))
    assert {v["state"] for v in neigh.values()} == {"Established"} and len(neigh) == 4
    names = value(gc.get(prefix="", target="COUNTERS_DB", path=["COUNTERS_PORT_NAME_MAP"], encoding="json_ietf"))
    oid = names["Ethernet128"]
    assert oid.startswith("oid:0x")
    counters = value(gc.get(prefix="", target="COUNTERS_DB", path=[f"COUNTERS/{oid}"], encoding="json_ietf"))
    assert int(counters["SAI_PORT_STAT_IF_IN_OCTETS"]) > 0


# -- Set ---------------------------------------------------------------------------------------


def keyspace_events(sock: Path, action: Any) -> list[tuple[str, str]]:
    """The CONFIG_DB keyspace events (what SONiC's daemons wake on) that `action()` causes."""
    client = raw(sock, CONFIG_DB)
    client.config_set("notify-keyspace-events", "KA")
    pubsub = client.pubsub()
    pubsub.psubscribe(f"__keyspace@{CONFIG_DB}__:*")
    pubsub.get_message(timeout=1)  # the psubscribe confirmation
    action()
    events = []
    while (msg := pubsub.get_message(timeout=0.5)) is not None:
        events.append((msg["channel"].split(":", 1)[1], msg["data"]))
    pubsub.close()
    return events


def test_update_writes_only_that_field(sock: Path, port: int) -> None:
    before = raw(sock, CONFIG_DB).hgetall(f"BGP_NEIGHBOR|{NB}")
    with twin_client(port) as sw:
        events = keyspace_events(sock, lambda: sw.set_field("BGP_NEIGHBOR", NB, "admin_status", "down"))
    assert raw(sock, CONFIG_DB).hgetall(f"BGP_NEIGHBOR|{NB}") == {**before, "admin_status": "down"}
    assert events == [(f"BGP_NEIGHBOR|{NB}", "hset")]


def test_new_empty_entry_is_written_as_null(sock: Path, gc: gNMIclient) -> None:
    # a key holding / travels with JSON Pointer's ~1, which sonic-gnmi's patch keeps and GCU decodes
    gc.set(update=[("/sonic-db:CONFIG_DB/localhost/BGP_GLOBALS_AF_NETWORK/default|ipv4_unicast|10.9.0.0~124",
                    {})], encoding="json_ietf")
    assert raw(sock, CONFIG_DB).hgetall("BGP_GLOBALS_AF_NETWORK|default|ipv4_unicast|10.9.0.0/24") == \
        {"NULL": "NULL"}


def test_replace_of_an_entry_drops_the_fields_it_leaves_out(sock: Path, gc: gNMIclient) -> None:
    key = "default|10.0.0.66"
    entry = {"asn": "65100", "name": "spine2", "local_addr": "10.0.0.67", "admin_status": "down"}
    gc.set(replace=[(f"/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/{key}", entry)], encoding="json_ietf")
    assert raw(sock, CONFIG_DB).hgetall(f"BGP_NEIGHBOR|{key}") == entry


def test_replace_of_the_whole_config_is_exactly_that_config(sock: Path, port: int, leaf1: tuple[ConfigDb, list[str]],
                                                            on_switch: ConfigDb) -> None:
    """GCU's config replace: the running config becomes the one sent (push carries SONiC's own
    tables over itself, twin.gnmi.push.with_sonic_tables)."""
    twin_config = {**leaf1[0], **SONIC_OWN,
                   "BGP_NEIGHBOR": {k: v for k, v in leaf1[0]["BGP_NEIGHBOR"].items() if k != NB}}
    with twin_client(port) as sw:
        sw.replace_config(twin_config)
        assert sw.get("/sonic-db:CONFIG_DB/localhost/") == twin_config
    cfg = raw(sock, CONFIG_DB)
    assert not cfg.exists(f"BGP_NEIGHBOR|{NB}")
    assert cfg.hgetall("ACL_TABLE|DATAACL")["ports@"] == "Ethernet0,Ethernet4"
    assert cfg.hgetall("FEATURE|bgp")["state"] == "enabled"
    assert cfg.get("CONFIG_DB_INITIALIZED") == "1"


def test_delete_of_a_key_and_of_a_field(sock: Path, gc: gNMIclient) -> None:
    gc.set(delete=["/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/default|10.0.0.70",
                   "/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/default|10.0.0.68/bfd"], encoding="json_ietf")
    cfg = raw(sock, CONFIG_DB)
    assert not cfg.exists("BGP_NEIGHBOR|default|10.0.0.70")
    assert cfg.hget("BGP_NEIGHBOR|default|10.0.0.68", "bfd") is None
    assert cfg.hget("BGP_NEIGHBOR|default|10.0.0.68", "asn") == "65100"


INVALID_SETS = [
    # sonic-gnmi's JSON Patch `add` of a key replaces the entry: without its mandatory lanes YANG refuses it
    ("key-level update drops mandatory fields",
     dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128", {"admin_status": "down"})]),
     "Given patch will produce invalid config"),
    ("bad admin_status", dict(update=[(f"{NB_PATH}/admin_status", '"sideways"')]),
     "Given patch will produce invalid config"),
    ("[key=] in a Set path names a table without YANG",
     dict(update=[(f"/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR[key={NB}]", {"admin_status": "down"})]),
     "tables without YANG models"),
    ("port that does not exist", dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet400",
                                               {"lanes": "400,401,402,403", "speed": "40000",
                                                "mtu": "9100", "admin_status": "up"})]),
     "PORT: Ethernet400 do not exist on leaf1"),
    # GCU's jsonpatch step: the table's parent is missing (sonic-gnmi's checkpoint made it, GCU does not)
    ("unknown table", dict(update=[("/sonic-db:CONFIG_DB/localhost/NOT_A_TABLE/x", {"a": "b"})]),
     "member 'NOT_A_TABLE' not found"),
    ("unknown table as a whole", dict(update=[("/sonic-db:CONFIG_DB/localhost/NOT_A_TABLE", {"x": {"a": "b"}})]),
     "tables without YANG models"),
    ("read-only database", dict(update=[("/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet128", {"a": "b"})]),
     "Set RPC does not support STATE_DB"),
    ("replace of a missing path", dict(replace=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/nosuch", '"x"')]),
     "Invalid entry"),
    ("valid and invalid together", dict(update=[(f"{NB_PATH}/admin_status", '"down"'),
                                                ("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu", '"99999"')]),
     "Given patch will produce invalid config"),
    ("json encoding", dict(update=[(f"{NB_PATH}/admin_status", '"down"')], encoding="json"), "Fail to parse"),
]


# the cases whose message is libyang's (a type, an enumeration)
YANG_VERDICTS = {"bad admin_status", "valid and invalid together"}


@pytest.mark.parametrize(("case", "kwargs", "reason"), INVALID_SETS, ids=[c[0] for c in INVALID_SETS])
def test_invalid_set_changes_nothing(sock: Path, gc: gNMIclient, case: str, kwargs: dict[str, Any],
                                     reason: str) -> None:
    before = dump(sock)
    with pytest.raises(gNMIException) as err:
        gc.set(**{"encoding": "json_ietf", **kwargs})
    rpc = getattr(err.value, "orig_exc", None)
    assert isinstance(rpc, grpc.RpcError) and rpc.code() == grpc.StatusCode.UNKNOWN, rpc
    assert dump(sock) == before
    if case in YANG_VERDICTS and (why := without_yang()) is not None:
        pytest.skip(why)
    assert reason in str(err.value)


def test_a_connection_selects_its_database_and_nothing_more(socket_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """As swsscommon connects: no CLIENT SETINFO (Debian 12's redis 7.0 refuses it, each connection
    paid two round trips for it) and no read of redis-py's package metadata per client."""
    import redis.utils

    from twin.switch.redis.redis_budget import ConnectionBudget

    def no_metadata() -> str:
        raise AssertionError("redis-py read its package metadata to name itself to the server")

    stats = raw(socket_path, 0)   # redis-py's own default, for the server's statistics
    before = stats.info("commandstats").get("cmdstat_client", {}).get("calls", 0)
    monkeypatch.setattr(redis.utils, "get_lib_version", no_metadata)
    for db in (SonicRedis(unix_socket=socket_path), SonicRedis(unix_socket=socket_path, budget=ConnectionBudget(4))):
        try:
            for name in ("APPL_DB", "COUNTERS_DB", "CONFIG_DB", "STATE_DB"):
                assert db.client(name).ping()
        finally:
            db.close()
    assert stats.info("commandstats").get("cmdstat_client", {}).get("calls", 0) == before
