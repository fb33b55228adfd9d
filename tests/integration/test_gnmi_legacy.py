"""sonic-gnmi's legacy handler (prefix target = a database) against a real redis-server.

`LegacyClient` is driven directly, as server.go Get and client_subscribe.go Run drive
sdc.NewDbClient: construct (NewDbClient), ValidatePaths + Get for Get, OnceRun / PollRun /
StreamRun for Subscribe. The redis holds what a SONiC switch holds (CONFIG_DB PORT with aliases,
COUNTERS_PORT_NAME_MAP and COUNTERS:oid:..., STATE_DB PORT_TABLE and NEIGH_STATE_TABLE, APPL_DB
ROUTE_TABLE) and sends keyspace notifications (`notify-keyspace-events AKE`), as SONiC's does.
Each case names the sonic-gnmi test (gnmi_server/server_test.go) or code it mirrors.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
import redis
from labtools import private_redis
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.sonic_redis import SonicRedis
from twin.switch.sonic_gnmi.golang import go_duration, go_json
from twin.switch.sonic_gnmi.legacy import LegacyClient
from twin.switch.sonic_gnmi.status import GnmiStatus
from twin.switch.sonic_gnmi.stream import Fatal, Sink

pytestmark = pytest.mark.needs_redis

APPL_DB, COUNTERS_DB, CONFIG_DB, STATE_DB = 0, 2, 4, 6
OID0, OID4, QOID0, QOID1 = "oid:0x1000000000001", "oid:0x1000000000002", "oid:0x15000000000001", "oid:0x15000000000002"
ETH0_COUNTERS = {"SAI_PORT_STAT_IF_IN_OCTETS": "100", "SAI_PORT_STAT_IF_OUT_OCTETS": "200"}
ETH4_COUNTERS = {"SAI_PORT_STAT_IF_IN_OCTETS": "300", "SAI_PORT_STAT_IF_OUT_OCTETS": "400"}
QUEUE_COUNTERS = {"SAI_QUEUE_STAT_PACKETS": "5", "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "64"}
WATERMARK = {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "192"}
PORT_STATE = {"state": "ok", "netdev_oper_status": "up", "mtu": "9100"}
NEIGH1 = {"state": "Established", "peerType": "e-BGP"}
NEIGH3 = {"state": "Active", "peerType": "e-BGP"}
ROUTE = {"nexthop": "10.0.0.1", "ifname": "Ethernet0", "protocol": "bgp"}
ROUTE6 = {"nexthop": "fc00::1", "ifname": "Ethernet4", "protocol": "bgp"}
BGP_NB = {"asn": "65001", "name": "spine1"}

SWITCH: dict[int, dict[str, dict[str, str]]] = {
    CONFIG_DB: {
        "PORT|Ethernet0": {"alias": "Ethernet1/1", "lanes": "0,1,2,3", "speed": "100000", "admin_status": "up"},
        "PORT|Ethernet4": {"alias": "fortyGigE0/4", "lanes": "4,5,6,7", "speed": "100000", "admin_status": "up"},
        "BGP_NEIGHBOR|default|10.0.0.1": BGP_NB,
    },
    COUNTERS_DB: {
        "COUNTERS_PORT_NAME_MAP": {"Ethernet0": OID0, "Ethernet4": OID4},
        "COUNTERS_QUEUE_NAME_MAP": {"Ethernet0:0": QOID0, "Ethernet4:0": QOID1},
        f"COUNTERS:{OID0}": ETH0_COUNTERS,
        f"COUNTERS:{OID4}": ETH4_COUNTERS,
        f"COUNTERS:{QOID0}": QUEUE_COUNTERS,
        f"COUNTERS:{QOID1}": QUEUE_COUNTERS,
        f"PERIODIC_WATERMARKS:{QOID0}": WATERMARK,
    },
    STATE_DB: {
        "PORT_TABLE|Ethernet0": PORT_STATE,
        "NEIGH_STATE_TABLE|10.0.0.1": NEIGH1,
        "NEIGH_STATE_TABLE|10.0.0.3": NEIGH3,
    },
    APPL_DB: {
        "ROUTE_TABLE:10.1.0.0/24": ROUTE,
        "ROUTE_TABLE:fc00::/64": ROUTE6,
    },
}


# -- redis ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def socket_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private redis-server with keyspace notifications, as SONiC's database container runs it."""
    with private_redis(tmp_path_factory.mktemp("redis"), "--notify-keyspace-events", "AKE") as sock:
        yield sock


def raw(sock: Path, db: int) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(sock), db=db, decode_responses=True)


@pytest.fixture
def db(socket_path: Path) -> Iterator[SonicRedis]:
    """The switch's databases, loaded fresh for each test."""
    raw(socket_path, 0).flushall()
    for number, keys in SWITCH.items():
        client = raw(socket_path, number)
        for key, fields in keys.items():
            client.hset(key, mapping=cast(Any, fields))
    sonic = SonicRedis(unix_socket=socket_path)
    yield sonic
    sonic.close()


# -- requests ------------------------------------------------------------------------------------

def path(*names: str) -> Any:
    return gnmi_pb2.Path(elem=[gnmi_pb2.PathElem(name=n) for n in names])


def prefix(target: str, *names: str) -> Any:
    return gnmi_pb2.Path(target=target, elem=[gnmi_pb2.PathElem(name=n) for n in names])


def run_get(db: SonicRedis, target: str, *names: str, prefix_elems: tuple[str, ...] = ()) -> Any:
    """server.go Get's IsTargetDb branch: NewDbClient, ValidatePaths, Get; one update's value."""
    pfx = prefix(target, *prefix_elems)
    client = LegacyClient(db, pfx, [path(*names)])
    client.validate_paths()
    notifications = client.get()
    assert len(notifications) == 1
    note = notifications[0]
    assert note.prefix == pfx
    assert len(note.update) == 1 and note.update[0].path == path(*names)
    return note.update[0].val


def decoded(val: Any) -> Any:
    """A TypedValue as the sonic-gnmi tests compare it: JSON parsed, or the scalar."""
    if val.WhichOneof("value") == "json_ietf_val":
        return json.loads(val.json_ietf_val)
    assert val.WhichOneof("value") == "string_val"
    return val.string_val


def items(sink: Sink, count: int, timeout: float = 5.0) -> list[Any]:
    """The next `count` things a Subscribe would send (fails after `timeout` without one)."""
    out: list[Any] = []
    for _ in range(count):
        item = sink.next(timeout)
        assert item is not None, f"nothing more after {out}"
        out.append(item)
    return out


def update_value(item: Any) -> Any:
    assert not isinstance(item, Fatal), item
    assert item.WhichOneof("response") == "update", item
    assert len(item.update.update) == 1
    return decoded(item.update.update[0].val)


def is_sync(item: Any) -> bool:
    return not isinstance(item, Fatal) and item.WhichOneof("response") == "sync_response"


# -- Get -------------------------------------------------------------------------------------------

GETS = [
    pytest.param("STATE_DB", ("NEIGH_STATE_TABLE",), {"10.0.0.1": NEIGH1, "10.0.0.3": NEIGH3},
                 id="2-elem-table:server_test-poll-query-for-NEIGH_STATE_TABLE"),
    pytest.param("STATE_DB", ("PORT_TABLE", "Ethernet0"), PORT_STATE,
                 id="3-elem-key:server_test-get-State-DB-SWITCH_CAPABILITY-switch"),
    pytest.param("STATE_DB", ("PORT_TABLE", "Ethernet0", "mtu"), "9100",
                 id="4-elem-key-field:probePathElements-HExists"),
    pytest.param("CONFIG_DB", ("BGP_NEIGHBOR", "default", "10.0.0.1"), BGP_NB,
                 id="4-elem-composite-key:parsePath-case-4"),
    pytest.param("CONFIG_DB", ("BGP_NEIGHBOR", "default", "10.0.0.1", "asn"), "65001",
                 id="5-elem-key-field:parsePath-case-5"),
    pytest.param("APPL_DB", ("ROUTE_TABLE",), {"10.1.0.0/24": ROUTE, "fc00::/64": ROUTE6},
                 id="2-elem-appl-table:TableData2Msi-split-at-first-separator"),
    pytest.param("APPL_DB", ("ROUTE_TABLE", "fc00::/64"), ROUTE6,
                 id="3-elem-key-holding-separator:probePathElements-Exists"),
    pytest.param("COUNTERS_DB", ("COUNTERS_PORT_NAME_MAP",), {"Ethernet0": OID0, "Ethernet4": OID4},
                 id="flat-counters-table:server_test-Get-COUNTERS_PORT_NAME_MAP"),
    pytest.param("COUNTERS_DB", ("COUNTERS_PORT_NAME_MAP", "Ethernet4"), OID4,
                 id="3-elem-field-of-flat-hash:probePathElements-HExists-table"),
    pytest.param("COUNTERS_DB", ("COUNTERS", OID0), ETH0_COUNTERS, id="plain-oid-key:parsePath-no-v2r"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet0"), ETH0_COUNTERS,
                 id="virtual-port:server_test-get-COUNTERS:Ethernet68"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet1/1"), ETH0_COUNTERS,
                 id="virtual-alias:server_test-get-COUNTERS-use-vendor-alias"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet*"),
                 {"Ethernet1/1": ETH0_COUNTERS, "fortyGigE0/4": ETH4_COUNTERS},
                 id="virtual-wildcard-by-alias:server_test-get-COUNTERS:Ethernet*"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet*", "SAI_PORT_STAT_IF_IN_OCTETS"),
                 {"Ethernet1/1": {"SAI_PORT_STAT_IF_IN_OCTETS": "100"},
                  "fortyGigE0/4": {"SAI_PORT_STAT_IF_IN_OCTETS": "300"}},
                 id="virtual-wildcard-field:server_test-get-COUNTERS:Ethernet*-SAI_PORT_STAT_PFC_7_RX_PKTS"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet0", "SAI_PORT_STAT_IF_OUT_OCTETS"), "200",
                 id="virtual-port-field:server_test-get-COUNTERS:Ethernet68-SAI_PORT_STAT_PFC_7_RX_PKTS"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet0", "Queues"),
                 {"Ethernet0:0": QUEUE_COUNTERS, "Ethernet0:0:periodic": WATERMARK},
                 id="virtual-queues:v2rEthPortQueStats-with-PERIODIC_WATERMARKS"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet*", "Queues"),
                 {"Ethernet1/1:0": QUEUE_COUNTERS, "Ethernet1/1:0:periodic": WATERMARK,
                  "fortyGigE0/4:0": QUEUE_COUNTERS},
                 id="virtual-queues-wildcard:v2rEthPortQueStats-missing-watermark-skipped"),
    pytest.param("COUNTERS_DB", ("INTERFACE_COUNTERS",), {"Ethernet0": ETH0_COUNTERS, "Ethernet4": ETH4_COUNTERS},
                 id="virtual-interface-counters:v2rInterfaceCountersStats"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "PORT*"), {}, id="virtual-fabric-without-map:v2rFabricPortStats-empty"),
    pytest.param("STATE_DB", ("TRANSCEIVER_DOM_SENSOR",), {},
                 id="empty-table:server_test-Get-valid-but-non-existing-node"),
]


@pytest.mark.parametrize(("target", "names", "want"), GETS)
def test_get_shapes(db: SonicRedis, target: str, names: tuple[str, ...], want: Any) -> None:
    assert decoded(run_get(db, target, *names)) == want


def test_get_json_bytes_are_go_encoding_json(db: SonicRedis) -> None:
    """Msi2TypedValue/emitJSON: json.Marshal's compact, key-sorted bytes, as JSON_IETF."""
    val = run_get(db, "COUNTERS_DB", "COUNTERS_PORT_NAME_MAP")
    assert val.json_ietf_val == f'{{"Ethernet0":"{OID0}","Ethernet4":"{OID4}"}}'.encode()


def test_get_prefix_elems_join_the_path(db: SonicRedis) -> None:
    """gnmiFullPath: the prefix's elems come before the path's."""
    assert decoded(run_get(db, "STATE_DB", "Ethernet0", prefix_elems=("PORT_TABLE",))) == PORT_STATE


def test_get_sees_redis_at_request_time(db: SonicRedis, socket_path: Path) -> None:
    raw(socket_path, STATE_DB).hset("PORT_TABLE|Ethernet0", "mtu", "1500")
    assert run_get(db, "STATE_DB", "PORT_TABLE", "Ethernet0", "mtu").string_val == "1500"


GET_ERRORS = [
    pytest.param("STATE_DB", ("PORT_TABLE", "Ethernet8"),
                 "No valid entry found on STATE_DB with key PORT_TABLE|Ethernet8",
                 id="missing-key:ensureKeysExistInRedis"),
    pytest.param("CONFIG_DB", ("BGP_NEIGHBOR", "default", "10.9.9.9"),
                 "No valid entry found on CONFIG_DB with key BGP_NEIGHBOR|default|10.9.9.9",
                 id="missing-composite-key:ensureKeysExistInRedis"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet8"),
                 "No valid entry found on COUNTERS_DB with key COUNTERS:Ethernet8",
                 id="unknown-port-falls-back-to-plain-key:server_test-Invalid-fabric-port-key-get"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "SID:fcbb:bbbb:3::/48"),
                 "No valid entry found on COUNTERS_DB with key COUNTERS:SID:fcbb:bbbb:3::/48",
                 id="sid-without-map:server_test-get-COUNTERS:fcbb:bbbb:3::48-not-existing"),
    pytest.param("COUNTERS_DB", ("PERIODIC_WATERMARKS", "Ethernet0", "PriorityGroups"),
                 "No valid entry found on COUNTERS_DB with key PERIODIC_WATERMARKS:Ethernet0:PriorityGroups",
                 id="no-pg-name-map:v2rEthPortPGPeriodicWMs-error-then-plain-path"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "fortyGigE0/4"),
                 "No valid entry found on COUNTERS_DB with key COUNTERS:fortyGigE0/4",
                 id="alias-not-starting-with-Ethernet-is-not-virtual:trie.go-findNode-prefix-wildcard"),
    pytest.param("CONFIG_DB", ("BGP_NEIGHBOR", "default", "10.0.0.1", "nosuch"), "redis: nil",
                 id="missing-field:tableData2TypedValue-HGet"),
    pytest.param("COUNTERS_DB", ("COUNTERS", "Ethernet0", "nosuch"), "redis: nil",
                 id="missing-virtual-field:tableData2TypedValue-HGet"),
    pytest.param("STATE_DB", (), "Invalid db table Path [STATE_DB]", id="1-elem:server_test-Invalid-DBKey-of-length-1"),
    pytest.param("STATE_DB", ("A", "b", "c", "d", "e"), "Invalid db table Path [STATE_DB A b c d e]",
                 id="6-elem:parsePath-default"),
    pytest.param("STATE_DB/asic0/x", ("PORT_TABLE",), "Invalid target dbName STATE_DB", id="bad-target:IsTargetDb"),
]


@pytest.mark.parametrize(("target", "names", "message"), GET_ERRORS)
def test_get_errors_are_not_found(db: SonicRedis, target: str, names: tuple[str, ...], message: str) -> None:
    """server.go Get: NewDbClient's, ValidatePaths' and Get's errors are all codes.NotFound."""
    with pytest.raises(GnmiStatus) as caught:
        run_get(db, target, *names)
    assert caught.value.code == grpc.StatusCode.NOT_FOUND
    assert caught.value.message == message


def test_port_without_alias_fails_every_counters_request(db: SonicRedis, socket_path: Path) -> None:
    """GetAliasMap: HGet(PORT|x, alias) fails with redis.Nil and parsePath returns that error."""
    raw(socket_path, CONFIG_DB).hset("PORT|Ethernet8", mapping={"lanes": "8"})
    with pytest.raises(GnmiStatus) as caught:
        LegacyClient(db, prefix("COUNTERS_DB"), [path("COUNTERS_PORT_NAME_MAP")])
    assert (caught.value.code, caught.value.message) == (grpc.StatusCode.NOT_FOUND, "redis: nil")


def test_port_without_config_entry_makes_wildcard_a_plain_key(db: SonicRedis, socket_path: Path) -> None:
    """v2rEthPortStats: a mapped port missing from CONFIG_DB PORT `does not have namespace
    associated`; lookupV2R's error is only logged, so `Ethernet*` is then a plain key."""
    raw(socket_path, COUNTERS_DB).hset("COUNTERS_PORT_NAME_MAP", "Ethernet8", "oid:0x1000000000003")
    with pytest.raises(GnmiStatus, match="No valid entry found on COUNTERS_DB with key COUNTERS:Ethernet\\*"):
        run_get(db, "COUNTERS_DB", "COUNTERS", "Ethernet*")


# -- ONCE and POLL ---------------------------------------------------------------------------------

def test_once_sends_paths_with_data_then_sync(db: SonicRedis) -> None:
    """OnceRun: subscribeTableData2TypedValue skips a missing key (no ValidatePaths), then sync."""
    client = LegacyClient(db, prefix("STATE_DB"), [path("NEIGH_STATE_TABLE"), path("PORT_TABLE", "Ethernet8"),
                                                   path("PORT_TABLE", "Ethernet0", "mtu")])
    sink = Sink()
    client.once(sink)
    got = items(sink, 3)
    assert [update_value(got[0]), update_value(got[1])] == [{"10.0.0.1": NEIGH1, "10.0.0.3": NEIGH3}, "9100"]
    assert is_sync(got[2]) and sink.next(0.2) is None


def test_poll_sends_delete_when_data_goes(db: SonicRedis, socket_path: Path) -> None:
    """PollRun prevUpdates: a path that had data and has none now gets one delete, then nothing."""
    client = LegacyClient(db, prefix("STATE_DB"), [path("NEIGH_STATE_TABLE", "10.0.0.1")])
    sink = Sink()
    client.poll(sink)
    first = items(sink, 2)
    assert update_value(first[0]) == NEIGH1 and is_sync(first[1])
    raw(socket_path, STATE_DB).delete("NEIGH_STATE_TABLE|10.0.0.1")
    client.poll(sink)
    second = items(sink, 2)
    assert not isinstance(second[0], Fatal)
    assert list(second[0].update.delete) == [path("NEIGH_STATE_TABLE", "10.0.0.1")]
    assert second[0].update.prefix == prefix("STATE_DB") and is_sync(second[1])
    client.poll(sink)
    assert is_sync(items(sink, 1)[0])


# -- STREAM ----------------------------------------------------------------------------------------

def subscription_list(target: str, *subs: tuple[tuple[str, ...], int, int], updates_only: bool = False) -> Any:
    return gnmi_pb2.SubscriptionList(
        prefix=prefix(target), mode=gnmi_pb2.SubscriptionList.STREAM, updates_only=updates_only,
        subscription=[gnmi_pb2.Subscription(path=path(*names), mode=mode, sample_interval=interval)
                      for names, mode, interval in subs])


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def start_stream(db: SonicRedis, stop: threading.Event, target: str,
                 *subs: tuple[tuple[str, ...], int, int], updates_only: bool = False) -> Sink:
    subscriptions = subscription_list(target, *subs, updates_only=updates_only)
    client = LegacyClient(db, subscriptions.prefix, [s.path for s in subscriptions.subscription])
    sink = Sink()
    client.stream(subscriptions, sink, stop)
    return sink


ON_CHANGE, SAMPLE, TARGET_DEFINED = (gnmi_pb2.SubscriptionMode.ON_CHANGE, gnmi_pb2.SubscriptionMode.SAMPLE,
                                     gnmi_pb2.SubscriptionMode.TARGET_DEFINED)


def test_on_change_table_follows_keyspace_events(db: SonicRedis, socket_path: Path, stop: threading.Event) -> None:
    """dbTableKeySubscribe + dbSingleTableKeySubscribe: the table, sync, then `{key: data}` per
    hset and `{key: {}}` per del (server_test TestTableKeyOnDeletion)."""
    sink = start_stream(db, stop, "STATE_DB", (("NEIGH_STATE_TABLE",), ON_CHANGE, 0))
    first = items(sink, 2)
    assert update_value(first[0]) == {"10.0.0.1": NEIGH1, "10.0.0.3": NEIGH3} and is_sync(first[1])
    state = raw(socket_path, STATE_DB)
    state.hset("NEIGH_STATE_TABLE|10.0.0.5", mapping={"state": "Connect", "peerType": "i-BGP"})
    assert update_value(items(sink, 1)[0]) == {"10.0.0.5": {"state": "Connect", "peerType": "i-BGP"}}
    state.delete("NEIGH_STATE_TABLE|10.0.0.1")
    assert update_value(items(sink, 1)[0]) == {"10.0.0.1": {}}


def test_on_change_virtual_port_sends_whole_key(db: SonicRedis, socket_path: Path, stop: threading.Event) -> None:
    """server_test `stream query for table key Ethernet68 with new test_field field`: the same
    value set twice sends one update (dbSingleTableKeySubscribe's DeepEqual)."""
    sink = start_stream(db, stop, "COUNTERS_DB", (("COUNTERS", "Ethernet0"), ON_CHANGE, 0))
    first = items(sink, 2)
    assert update_value(first[0]) == ETH0_COUNTERS and is_sync(first[1])
    counters = raw(socket_path, COUNTERS_DB)
    counters.hset(f"COUNTERS:{OID0}", "test_field", "test_value")
    assert update_value(items(sink, 1)[0]) == {**ETH0_COUNTERS, "test_field": "test_value"}
    counters.hset(f"COUNTERS:{OID0}", "test_field", "test_value")
    counters.hset(f"COUNTERS:{OID0}", "SAI_PORT_STAT_IF_IN_OCTETS", "101")
    assert update_value(items(sink, 1)[0]) == {**ETH0_COUNTERS, "test_field": "test_value",
                                               "SAI_PORT_STAT_IF_IN_OCTETS": "101"}


def test_on_change_wildcard_sends_changed_port(db: SonicRedis, socket_path: Path, stop: threading.Event) -> None:
    """server_test `stream query for table key Ethernet* with new test_field field on Ethernet68`."""
    sink = start_stream(db, stop, "COUNTERS_DB", (("COUNTERS", "Ethernet*"), ON_CHANGE, 0))
    first = items(sink, 2)
    assert update_value(first[0]) == {"Ethernet1/1": ETH0_COUNTERS, "fortyGigE0/4": ETH4_COUNTERS} and is_sync(first[1])
    raw(socket_path, COUNTERS_DB).hset(f"COUNTERS:{OID4}", "test_field", "test_value")
    assert update_value(items(sink, 1)[0]) == {"fortyGigE0/4": {**ETH4_COUNTERS, "test_field": "test_value"}}


def test_on_change_field_is_polled(db: SonicRedis, socket_path: Path, stop: threading.Event) -> None:
    """dbFieldSubscribe (200 ms): server_test `stream query for COUNTERS/Ethernet68/
    SAI_PORT_STAT_PFC_7_RX_PKTS with update of field value`: string values."""
    field_path = ("COUNTERS", "Ethernet0", "SAI_PORT_STAT_IF_IN_OCTETS")
    sink = start_stream(db, stop, "COUNTERS_DB", (field_path, ON_CHANGE, 0))
    first = items(sink, 2)
    assert update_value(first[0]) == "100" and is_sync(first[1])
    raw(socket_path, COUNTERS_DB).hset(f"COUNTERS:{OID0}", "SAI_PORT_STAT_IF_IN_OCTETS", "4")
    assert update_value(items(sink, 1)[0]) == "4"


def test_on_change_of_missing_key_sends_empty_then_data(db: SonicRedis, socket_path: Path,
                                                        stop: threading.Event) -> None:
    """NewDbClient does not validate for Subscribe: a key that does not exist yet sends `{}`
    (dbTableKeySubscribe's first sendMsiData), then its data once written."""
    sink = start_stream(db, stop, "STATE_DB", (("PORT_TABLE", "Ethernet8"), ON_CHANGE, 0))
    first = items(sink, 2)
    assert update_value(first[0]) == {} and is_sync(first[1])
    raw(socket_path, STATE_DB).hset("PORT_TABLE|Ethernet8", "state", "ok")
    assert update_value(items(sink, 1)[0]) == {"state": "ok"}


def test_sample_resends_every_interval(db: SonicRedis, stop: threading.Event) -> None:
    """dbTableKeySubscribe with an interval: all data again at each tick (1 s, MinSampleInterval)."""
    sink = start_stream(db, stop, "STATE_DB", (("PORT_TABLE", "Ethernet0"), SAMPLE, 1_000_000_000))
    got = items(sink, 3)
    assert update_value(got[0]) == PORT_STATE and is_sync(got[1]) and update_value(got[2]) == PORT_STATE


STREAM_FATALS = [
    pytest.param(SAMPLE, 500_000_000, "invalid interval: 500ms. It cannot be less than 1s",
                 id="sample-below-min:validateSampleInterval"),
    pytest.param(SAMPLE, 2**64 - 1, "invalid interval: -1ns. It cannot be less than 1s",
                 id="sample-uint64-as-go-duration:validateSampleInterval"),
    pytest.param(TARGET_DEFINED, 0, "unsupported subscription mode, TARGET_DEFINED", id="target-defined:StreamRun"),
]


@pytest.mark.parametrize(("mode", "interval", "message"), STREAM_FATALS)
def test_stream_fatal(db: SonicRedis, stop: threading.Event, mode: int, interval: int, message: str) -> None:
    """The first thing sent is the fatal error (client_subscribe.go ends the call with it)."""
    sink = start_stream(db, stop, "STATE_DB", (("PORT_TABLE", "Ethernet0"), mode, interval))
    assert items(sink, 1)[0] == Fatal(message)


# -- Go's formatting -------------------------------------------------------------------------------

@pytest.mark.parametrize(("ns", "text"), [
    (0, "0s"), (999, "999ns"), (1_500, "1.5µs"), (500_000_000, "500ms"), (1_000_000_000, "1s"),
    (1_500_000_000, "1.5s"), (90_000_000_000, "1m30s"), (3_600_000_000_000, "1h0m0s"), (-1, "-1ns"),
], ids=lambda v: str(v))
def test_go_duration_string(ns: int, text: str) -> None:
    """time.Duration.String, as validateSampleInterval's message prints the intervals."""
    assert go_duration(ns) == text


def test_go_json_escapes_html() -> None:
    """encoding/json.Marshal escapes <, > and & (emitJSON uses json.Marshal)."""
    want = '{"a":{"y":"é","z":"1"},"b":"\\u003c\\u0026\\u003e"}'
    assert go_json({"b": "<&>", "a": {"z": "1", "y": "é"}}) == want.encode()
