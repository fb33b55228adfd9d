"""sonic-gnmi's legacy, read-only handler: requests whose prefix target names a database.

A Get or Subscribe whose prefix `target` is `APPL_DB`, `COUNTERS_DB`, `CONFIG_DB`, `STATE_DB`, ...
(sonic_data_client/db_client.go `IsTargetDb`) is served by `sdc.NewDbClient`, which reads
redis directly and answers in JSON_IETF whatever encoding was asked. This module follows
sonic-net/sonic-gnmi at commit 5ec1c20b:

- sonic_data_client/db_client.go: NewDbClient, parsePath, probePathElements,
  ensureKeysExistInRedis (ValidatePaths), Get / tableData2TypedValue, OnceRun, PollRun /
  subscribeTableData2TypedValue, StreamRun and its workers (dbFieldSubscribe,
  dbFieldMultiSubscribe, dbTableKeySubscribe, dbSingleTableKeySubscribe), TableData2Msi,
  makeJSON_redis, Msi2TypedValue, validateSampleInterval, MinSampleInterval;
- sonic_data_client/virtual_db.go and trie.go: the virtual paths of COUNTERS_DB (COUNTERS/Ethernet*,
  Queues, Pfcwd, VoQs, PORT*, SWITCH*, SID*, ACL_RULE*, RATES, PORT_PHY_ATTR,
  PERIODIC_WATERMARKS/PriorityGroups, INTERFACE_COUNTERS), resolved through the name maps SONiC
  keeps in COUNTERS_DB and the aliases of CONFIG_DB PORT;
- gnmi_server/server.go Get and gnmi_server/client_subscribe.go Run: errors of NewDbClient and
  of Get reach the client as NOT_FOUND; fatal stream errors as INVALID_ARGUMENT (stream.Sink).

Paths: the prefix's and the path's elem names after the database (keys of elems are ignored):
`TABLE` is the whole table (`{key: {field: value}}`), `TABLE/k` one key (`{field: value}`) or,
when `TABLE<sep>k` does not exist but the flat hash `TABLE` has field `k`, that field (a
string_val); `TABLE/a/b` the key `a<sep>b`, or key `a` field `b` when only that exists;
`TABLE/a/b/f` field `f` of key `a<sep>b`. Values are read from redis at request time.

Where sonic-gnmi differs from itself (Go map order) this module picks one order: notifications
follow the request's paths, trie wildcards are tried in the order virtual_db.go lists them.
sonic-gnmi reads the name maps once per process (sync.Once); here they are read per request, so
a map written after the first request is seen (sonic-gnmi would keep the first, maybe empty, one).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar, cast

import grpc
import redis
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.redis_budget import ClientsExhausted
from twin.switch.redis.sonic_redis import DATABASES, SonicRedis
from twin.switch.sonic_gnmi.golang import SECOND_NS, go_json, sample_interval_ns
from twin.switch.sonic_gnmi.paths import counters_keyed
from twin.switch.sonic_gnmi.status import GnmiStatus
from twin.switch.sonic_gnmi.stream import Sink

# sonic-gnmi proto/sonic.proto `enum Target` (OTHERS is not a database).
TARGETS = ("APPL_DB", "ASIC_DB", "COUNTERS_DB", "CONFIG_DB", "PFC_WD_DB", "FLEX_COUNTER_DB", "STATE_DB",
           "CHASSIS_STATE_DB")
COUNTERS_DB = "COUNTERS_DB"
FIELD_ON_CHANGE_POLL_NS = 200_000_000  # streamOnChangeSubscription: dbField*Subscribe every 200 ms
PUBSUB_RECEIVE_S = 0.5  # dbSingleTableKeySubscribe: pubsub.ReceiveTimeout(500 ms)
PSUBSCRIBE_CONFIRM_S = 1.0  # dbTableKeySubscribe: ReceiveTimeout(time.Second) for the confirmation
REDIS_NIL = "redis: nil"  # go-redis's error for a missing key or field
QUEUE_WATERMARK_FIELD = "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"  # v2rEthPortQueStats

Msi = dict[str, Any]  # Go's map[string]interface{}: field -> value, or key -> {field: value}
T = TypeVar("T")


class GoError(Exception):
    """A plain Go `error` inside sonic-gnmi; its text is what reaches the client. `code`: the status
    it ends a call with where not the handler's own (RESOURCE_EXHAUSTED: the switch's redis
    connections for clients all in use, twin.switch.redis.redis_budget)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


# -- redis, as go-redis answers ----------------------------------------------------------------

class _Redis:
    """One database's redis client with go-redis's error texts (`redis: nil`, server errors)."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except ClientsExhausted as e:
            raise GoError(str(e), grpc.StatusCode.RESOURCE_EXHAUSTED) from None
        except redis.RedisError as e:
            raise GoError(str(e)) from None

    def hgetall(self, key: str) -> dict[str, str]:
        return dict(cast(dict[str, str], self._call(lambda: self.client.hgetall(key))))

    def hget(self, key: str, name: str) -> str | None:
        """HGET; None where go-redis returns `redis.Nil`."""
        return cast(str | None, self._call(lambda: self.client.hget(key, name)))

    def hget_or_nil(self, key: str, name: str) -> str:
        """HGET as `.Result()` gives it: a missing field is the error `redis: nil`."""
        value = self.hget(key, name)
        if value is None:
            raise GoError(REDIS_NIL)
        return value

    def keys(self, pattern: str) -> list[str]:
        return list(cast(list[str], self._call(lambda: self.client.keys(pattern))))

    def exists(self, key: str) -> bool:
        return cast(int, self._call(lambda: self.client.exists(key))) == 1

    def hexists(self, key: str, name: str) -> bool:
        return bool(self._call(lambda: self.client.hexists(key, name)))

    def scan(self, pattern: str) -> list[str]:
        return cast(list[str], self._call(lambda: list(self.client.scan_iter(match=pattern))))


# -- tablePath ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class TablePath:
    """db_client.go `tablePath`: where one piece of a gNMI path lives in redis.

    `json_key`/`json_field` (jsonTableKey/jsonField) name it in the JSON answer when they differ
    from the redis key (virtual paths: `Ethernet0` for `COUNTERS:oid:0x...`)."""

    db: str
    table: str
    key: str = ""
    sep: str = ""
    field: str = ""
    json_table: str = ""
    json_key: str = ""
    json_field: str = ""
    virtual: bool = False

    @property
    def redis_key(self) -> str:
        """`TABLE<sep>key`, or `TABLE` for a flat hash (dbField*Subscribe, tableData2TypedValue)."""
        return f"{self.table}{self.sep}{self.key}" if self.key else self.table

    def go_repr(self) -> str:
        """The struct as Go's `%v` prints it (in the psubscribe failure message)."""
        values = ["", self.db, self.table, self.key, self.sep, self.field, "", "", "0", "0", self.json_table,
                  self.json_key, "", self.json_field, "true" if self.virtual else "false"]
        return "{" + " ".join(values) + "}"


def is_target_db(target: str) -> tuple[str, bool]:
    """db_client.go IsTargetDb on a single-namespace switch: `(dbName, valid)`; `DB/ns` is allowed,
    more than one `/` is not."""
    parts = target.split("/")
    return parts[0], len(parts) <= 2 and parts[0] in TARGETS


def separator(db: str) -> str:
    """GetTableKeySeparator: the database's separator; "" for one redis does not configure."""
    layout = DATABASES.get(db)
    return layout.separator if layout is not None else ""


def go_path_list(names: list[str]) -> str:
    """A Go `[]string` as `%v` prints it: `[STATE_DB PORT_TABLE]`."""
    return "[" + " ".join(names) + "]"


def msi_to_typed_value(msi: Msi) -> Any:
    """Msi2TypedValue: the map as JSON_IETF, whatever encoding the request asked for."""
    return gnmi_pb2.TypedValue(json_ietf_val=go_json(msi))


def string_value(value: str) -> Any:
    """A single field's value: a string_val (tableData2TypedValue, dbFieldSubscribe)."""
    return gnmi_pb2.TypedValue(string_val=value)


# -- the virtual paths of COUNTERS_DB (virtual_db.go) ------------------------------------------

@dataclass
class VirtualMaps:
    """The name maps virtual_db.go's init* functions read before resolving a COUNTERS_DB path."""

    port: dict[str, str] = field(default_factory=dict)  # COUNTERS_PORT_NAME_MAP: port -> oid
    queue: dict[str, str] = field(default_factory=dict)  # COUNTERS_QUEUE_NAME_MAP: port:index -> oid
    pg: dict[str, dict[str, str]] = field(default_factory=dict)  # COUNTERS_PG_NAME_MAP: port -> index -> oid
    alias2name: dict[str, str] = field(default_factory=dict)  # CONFIG_DB PORT alias
    name2alias: dict[str, str] = field(default_factory=dict)
    port2ns: dict[str, str] = field(default_factory=dict)  # every CONFIG_DB PORT: namespace ""
    pfcwd: dict[str, dict[str, str]] = field(default_factory=dict)  # port -> port:queue -> oid
    fabric: dict[str, str] = field(default_factory=dict)  # COUNTERS_FABRIC_PORT_NAME_MAP
    switch_stat: dict[str, str] = field(default_factory=dict)  # COUNTERS_DEBUG_NAME_SWITCH_STAT_MAP
    sid: dict[str, str] = field(default_factory=dict)  # COUNTERS_SRV6_NAME_MAP
    acl_rule: dict[str, str] = field(default_factory=dict)  # ACL_COUNTER_RULE_MAP
    voq: dict[str, str] = field(default_factory=dict)  # COUNTERS_VOQ_NAME_MAP
    voq_oid_ns: dict[str, str] = field(default_factory=dict)  # oid -> namespace holding COUNTERS:oid

    @classmethod
    def load(cls, counters: _Redis, config: _Redis) -> VirtualMaps:
        """parsePath's init sequence for COUNTERS_DB: port, queue, PG and alias maps fail the
        request (their errors reach the client); the others' errors are only logged there."""
        maps = cls(port=counters.hgetall("COUNTERS_PORT_NAME_MAP"), queue=counters.hgetall("COUNTERS_QUEUE_NAME_MAP"))
        maps.pg = _pg_map(counters.hgetall("COUNTERS_PG_NAME_MAP"))
        maps.alias2name, maps.name2alias, maps.port2ns = _alias_maps(config)
        maps.pfcwd = _logged(lambda: _pfcwd_map(config, maps.queue), {})
        maps.fabric = _logged(lambda: counters.hgetall("COUNTERS_FABRIC_PORT_NAME_MAP"), {})
        maps.switch_stat = _logged(lambda: counters.hgetall("COUNTERS_DEBUG_NAME_SWITCH_STAT_MAP"), {})
        maps.sid = _logged(lambda: counters.hgetall("COUNTERS_SRV6_NAME_MAP"), {})
        maps.acl_rule = _logged(lambda: counters.hgetall("ACL_COUNTER_RULE_MAP"), {})
        maps.voq = _logged(lambda: counters.hgetall("COUNTERS_VOQ_NAME_MAP"), {})
        no_keys: list[str] = []
        present = {k.removeprefix("COUNTERS:") for k in _logged(lambda: counters.scan("COUNTERS:oid:*"), no_keys)}
        maps.voq_oid_ns = {oid: "" for oid in maps.voq.values() if oid in present}  # getVoQCountersMap
        return maps


def _logged(fn: Callable[[], T], default: T) -> T:
    """An init whose error sonic-gnmi only logs (`Could not create ...`): the map stays empty."""
    try:
        return fn()
    except GoError:
        return default


def _pg_map(raw: dict[str, str]) -> dict[str, dict[str, str]]:
    """initCountersPGNameMap: `Ethernet64:7` -> {Ethernet64: {7: oid}}; `invalid pg name` else."""
    out: dict[str, dict[str, str]] = {}
    for pg, oid in raw.items():
        parts = pg.split(":")
        if len(parts) != 2:
            raise GoError(f"invalid pg name {pg}")
        out.setdefault(parts[0], {})[parts[1]] = oid
    return out


def _alias_maps(config: _Redis) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """GetAliasMap: every CONFIG_DB `PORT|<name>` with its `alias` (a PORT without one fails the
    request with `redis: nil`); every such port lives in the default namespace ""."""
    alias2name, name2alias, port2ns = {}, {}, {}
    for key in config.keys("PORT|*"):
        alias, name = config.hget_or_nil(key, "alias"), key[5:]
        alias2name[alias], name2alias[name], port2ns[name] = name, alias, ""
    return alias2name, name2alias, port2ns


def _pfcwd_map(config: _Redis, queues: dict[str, str]) -> dict[str, dict[str, str]]:
    """GetPfcwdMap: the PFC-WD ports of CONFIG_DB PFC_WD and, per port, the oids of its queues
    whose priority is in PORT_QOS_MAP pfc_enable (through MAP_PFC_PRIORITY_TO_QUEUE|AZURE)."""
    wd_keys = config.keys("PFC_WD|*")
    if not wd_keys:
        return {}
    ports: dict[str, dict[str, str]] = {k[7:]: {} for k in wd_keys if "GLOBAL" not in k and "global" not in k}
    qos_keys = config.keys("PORT_QOS_MAP*")
    if not qos_keys:
        return {}
    qos_key = next((k for k in qos_keys if "GLOBAL" not in k and "global" not in k), "")
    priorities = config.hget_or_nil(qos_key, "pfc_enable")
    to_queue = config.hgetall("MAP_PFC_PRIORITY_TO_QUEUE|AZURE")
    indices = [to_queue[p] for p in priorities.split(",") if p in to_queue]
    if not queues:
        return {}
    for port, port_queues in ports.items():
        for index in indices:
            queue_key = f"{port}:{index}"
            if queue_key not in queues:
                raise GoError(f"key {queue_key} not exists in COUNTERS_QUEUE_NAME_MAP")
            port_queues[queue_key] = queues[queue_key]
    return ports


KEY, FIELD = 2, 3  # virtual_db.go KeyIdx, FieldIdx in [DB, TABLE, KEY, FIELD]


def _counter(paths: list[str], oid: str, field: str = "", json_key: str = "", json_field: str = "") -> TablePath:
    """A tablePath on `paths`' own table of COUNTERS_DB."""
    return TablePath(db=paths[0], table=paths[1], key=oid, sep=":", field=field, json_key=json_key,
                     json_field=json_field)


def _namespace(maps: VirtualMaps, port: str, message: str = "{} does not have namespace associated") -> None:
    if port not in maps.port2ns:
        raise GoError(message.format(port))


def v2r_eth_port_stats(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rEthPortStats: COUNTERS/Ethernet* keyed by vendor alias, or one port (name or alias)."""
    if paths[KEY].endswith("*"):
        out = []
        for port, oid in maps.port.items():
            _namespace(maps, port)
            out.append(_counter(paths, oid, json_key=maps.name2alias.get(port, port)))
        return out
    alias = paths[KEY]
    name = maps.alias2name.get(alias, alias)
    if name not in maps.port:
        raise GoError(f"{name} not a valid sonic interface. Vendor alias is {alias}")
    _namespace(maps, name)
    return [_counter(paths, maps.port[name])]


def v2r_interface_counters(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rInterfaceCountersStats: INTERFACE_COUNTERS is COUNTERS keyed by SONiC port name."""
    out = []
    for port, oid in maps.port.items():
        _namespace(maps, port)
        out.append(TablePath(db=paths[0], table="COUNTERS", key=oid, sep=":", json_key=port))
    return out


def v2r_eth_port_field_stats(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rEthPortFieldStats: one field of every port (keyed by alias), or of one port."""
    name_field = paths[FIELD]
    if paths[KEY].endswith("*"):
        out = []
        for port, oid in maps.port.items():
            _namespace(maps, port)
            out.append(_counter(paths, oid, field=name_field, json_key=maps.name2alias.get(port, port),
                                json_field=name_field))
        return out
    alias = paths[KEY]
    name = maps.alias2name.get(alias, alias)
    if name not in maps.port:
        raise GoError(f" {name} not a valid sonic interface. Vendor alias is {alias} ")
    _namespace(maps, name)
    return [_counter(paths, maps.port[name], field=name_field)]


def v2r_eth_port_queue_stats(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rEthPortQueStats: each queue `port:i` of COUNTERS plus `port:i:periodic`, the shared
    watermark of PERIODIC_WATERMARKS."""
    wildcard = paths[KEY].endswith("*")
    alias = paths[KEY]
    name = maps.alias2name.get(alias, alias)
    if not wildcard:
        _namespace(maps, name)
    out = []
    for queue_name, oid in maps.queue.items():
        names = queue_name.split(":")
        if len(names) < 2 or (not wildcard and names[0] != name):
            continue
        if wildcard:
            _namespace(maps, names[0])
        shown = f"{maps.name2alias.get(names[0], names[0]) if wildcard else alias}:{names[1]}"
        out.append(_counter(paths, oid, json_key=shown))
        out.append(TablePath(db=paths[0], table="PERIODIC_WATERMARKS", key=oid, sep=":", field=QUEUE_WATERMARK_FIELD,
                             json_table=paths[1], json_key=f"{shown}:periodic", json_field=QUEUE_WATERMARK_FIELD))
    return out


def v2r_eth_port_pfcwd_stats(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rEthPortPfcwdStats: the PFC-WD queues of every port (by alias) or of one port."""
    out = []
    if paths[KEY].endswith("*"):
        for port, queues in maps.pfcwd.items():
            _namespace(maps, port)
            for queue_name, oid in queues.items():
                names = queue_name.split(":")
                out.append(_counter(paths, oid, json_key=f"{maps.name2alias.get(names[0], names[0])}:{names[1]}"))
        return out
    alias = paths[KEY]
    name = maps.alias2name.get(alias, alias)
    _namespace(maps, name)
    if name not in maps.port:
        raise GoError(f"{name} not a valid SONiC interface. Vendor alias is {alias}")
    for queue_name, oid in maps.pfcwd.get(name, {}).items():
        out.append(_counter(paths, oid, json_key=f"{alias}:{queue_name.split(':')[1]}"))
    return out


def _by_name(maps_of: Callable[[VirtualMaps], dict[str, str]], error: str) -> Callable[
        [VirtualMaps, list[str]], list[TablePath]]:
    """v2rFabricPortStats, v2rSwitchPacketIntegrityDrop: `X*` keyed by name, or one name."""
    def translate(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
        names = maps_of(maps)
        if paths[KEY].endswith("*"):
            return [_counter(paths, oid, json_key=name) for name, oid in names.items()]
        if paths[KEY] not in names:
            raise GoError(error.format(paths[KEY]))
        return [_counter(paths, names[paths[KEY]])]
    return translate


def _by_prefixed_name(maps_of: Callable[[VirtualMaps], dict[str, str]], prefix: str, bad_format: str,
                      missing: str) -> Callable[[VirtualMaps, list[str]], list[TablePath]]:
    """v2rSRv6SidStats (`SID:<sid>`), v2rAclRuleStats (`ACL_RULE:<table>:<rule>`)."""
    def translate(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
        names = maps_of(maps)
        if paths[KEY].endswith("*"):
            return [_counter(paths, oid, json_key=name) for name, oid in names.items()]
        if not paths[KEY].startswith(prefix):
            raise GoError(bad_format.format(paths[KEY]))
        name = paths[KEY][len(prefix):]
        if name not in names:
            raise GoError(missing.format(name))
        return [_counter(paths, names[name])]
    return translate


def v2r_port_phy_attr(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rPortPhyAttrStats / v2rPortPhyAttrFieldStats: as Ethernet*, with no alias translation."""
    name_field = paths[FIELD] if len(paths) > FIELD else ""
    if paths[KEY].endswith("*"):
        out = []
        for port, oid in maps.port.items():
            _namespace(maps, port)
            out.append(_counter(paths, oid, field=name_field, json_key=port, json_field=name_field))
        return out
    name = paths[KEY]
    if name not in maps.port:
        raise GoError(f"{name} not a valid sonic interface")
    _namespace(maps, name)
    return [_counter(paths, maps.port[name], field=name_field)]


def v2r_pg_periodic_watermarks(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rEthPortPGPeriodicWMs: PERIODIC_WATERMARKS of each priority group, `port:index`."""
    missing_ns = "{} does not have an associated namespace"
    out: list[TablePath] = []
    if paths[KEY].endswith("*"):
        for port, groups in maps.pg.items():
            _namespace(maps, port, missing_ns)
            shown = maps.name2alias.get(port, port)
            out.extend(_counter(paths, oid, json_key=f"{shown}:{index}") for index, oid in groups.items())
        return out
    port = maps.alias2name.get(paths[KEY], paths[KEY])
    _namespace(maps, port, missing_ns)
    if port not in maps.pg:
        raise GoError(f"No priority groups associated with {port}")
    return [_counter(paths, oid, json_key=f"{paths[KEY]}:{index}") for index, oid in maps.pg[port].items()]


def v2r_voq_stats(maps: VirtualMaps, paths: list[str]) -> list[TablePath]:
    """v2rSystemPortVoQStats: `switch|asic|port:voq` entries of COUNTERS_VOQ_NAME_MAP whose oid
    has counters, for every switch (`X*`), one system port (`a|b|c`) or one switch name."""
    wanted = paths[KEY]
    out = []
    for voq_name, oid in maps.voq.items():
        if wanted.endswith("*"):
            pass
        elif "|" in wanted:
            if not voq_name.startswith(wanted + ":"):
                continue
        elif not voq_name.startswith(wanted + "|"):
            continue
        parts = voq_name.split("|")
        if len(parts) != 3 or len(parts[2].split(":")) != 2 or oid not in maps.voq_oid_ns:
            continue
        out.append(_counter(paths, oid, json_key=voq_name))
    return out


V2rTranslate = Callable[[VirtualMaps, list[str]], list[TablePath]]

# virtual_db.go pathTransFuncTbl, in its order.
PATH_TRANSLATIONS: list[tuple[tuple[str, ...], V2rTranslate]] = [
    ((COUNTERS_DB, "COUNTERS", "Ethernet*"), v2r_eth_port_stats),
    ((COUNTERS_DB, "INTERFACE_COUNTERS"), v2r_interface_counters),
    ((COUNTERS_DB, "COUNTERS", "Ethernet*", "*"), v2r_eth_port_field_stats),
    ((COUNTERS_DB, "COUNTERS", "Ethernet*", "Queues"), v2r_eth_port_queue_stats),
    ((COUNTERS_DB, "COUNTERS", "*", "VoQs"), v2r_voq_stats),
    ((COUNTERS_DB, "COUNTERS", "Ethernet*", "Pfcwd"), v2r_eth_port_pfcwd_stats),
    ((COUNTERS_DB, "COUNTERS", "PORT*"), _by_name(lambda m: m.fabric, "{} not a valid sonic fabric interface.")),
    ((COUNTERS_DB, "PERIODIC_WATERMARKS", "Ethernet*", "PriorityGroups"), v2r_pg_periodic_watermarks),
    ((COUNTERS_DB, "RATES", "Ethernet*"), v2r_eth_port_stats),
    ((COUNTERS_DB, "RATES", "Ethernet*", "*"), v2r_eth_port_field_stats),
    ((COUNTERS_DB, "COUNTERS", "SWITCH*"), _by_name(lambda m: m.switch_stat, "{} not a valid sonic SWITCH ID.")),
    ((COUNTERS_DB, "COUNTERS", "SID*"), _by_prefixed_name(
        lambda m: m.sid, "SID:", "Key {} is not a valid SRv6 SID format!", "SID:{} doesn't exist in counter oid map!")),
    ((COUNTERS_DB, "COUNTERS", "ACL_RULE*"), _by_prefixed_name(
        lambda m: m.acl_rule, "ACL_RULE:", "Key {} is not a valid ACL rule format!",
        "ACL_RULE:{} doesn't exist in counter oid map!")),
    ((COUNTERS_DB, "PORT_PHY_ATTR", "Ethernet*"), v2r_port_phy_attr),
    ((COUNTERS_DB, "PORT_PHY_ATTR", "Ethernet*", "*"), v2r_port_phy_attr),
]


@dataclass
class _Node:
    """trie.go Node: exact children, and the ones whose name ends in `*` (prefix wildcards)."""

    children: dict[str, _Node] = field(default_factory=dict)
    translate: V2rTranslate | None = None


def _build_trie() -> _Node:
    root = _Node()
    for names, translate in PATH_TRANSLATIONS:
        node = root
        for name in names:
            node = node.children.setdefault(name, _Node())
        node.translate = translate
    return root


V2R_TRIE = _build_trie()


def _find(node: _Node, names: list[str]) -> V2rTranslate | None:
    """trie.go findNode: an exact child first, then each matching wildcard, backtracking."""
    if not names:
        return node.translate
    exact = node.children.get(names[0])
    if exact is not None and (found := _find(exact, names[1:])) is not None:
        return found
    for name, child in node.children.items():
        wildcard = name.endswith("*") and names[0].startswith(name[:-1])
        if wildcard and (found := _find(child, names[1:])) is not None:
            return found
    return None


def lookup_v2r(maps: VirtualMaps, names: list[str]) -> list[TablePath] | None:
    """lookupV2R: the real paths of a virtual one; None when it is not virtual or its
    translation failed (parsePath then treats it as a plain path and only logs why)."""
    translate = _find(V2R_TRIE, names)
    if translate is None:
        return None
    try:
        return [replace(t, virtual=True) for t in translate(maps, names)]
    except GoError:
        return None


# -- reading redis into JSON (TableData2Msi) ---------------------------------------------------

def table_data_to_msi(rdb: _Redis, tp: TablePath, use_key: bool, msi: Msi) -> None:
    """TableData2Msi: add `tp`'s data to `msi`.

    A whole table is `{key: {field: value}}` (keys after the first separator); one key (unless
    `use_key`) is its fields merged flat; a virtual path puts its data under `json_key` (one
    field only, when it has `json_field`; a missing field is skipped). Empty hashes are skipped."""
    if not tp.key:
        flat = tp.db == COUNTERS_DB and not counters_keyed(tp.db, tp.table)
        keys = rdb.keys(tp.table if flat else f"{tp.table}{tp.sep}*")
    else:
        keys = [f"{tp.table}{tp.sep}{tp.key}"]
    if tp.json_field and tp.json_key:
        value = rdb.hget(keys[0], tp.field) if keys else None
        if value is not None:
            msi[tp.json_key] = {tp.json_field: value}
        return
    for key in keys:
        fields = rdb.hgetall(key)
        if not fields:
            continue
        if tp.json_key:
            msi[tp.json_key] = fields
        elif (tp.key and not use_key) or tp.table == key:
            msi.update(fields)
        else:
            parts = key.split(tp.sep, 1) if tp.sep else [key]
            if len(parts) < 2:
                raise GoError(f"dbkey: {key}, failed split from delimitor {tp.sep}")
            msi[parts[1]] = fields


# -- the client --------------------------------------------------------------------------------

@dataclass
class _Entry:
    """One requested path (as the client sent it) and where its data lives."""

    path: Any
    tables: list[TablePath]


class LegacyClient:
    """sdc.DbClient: Get and Subscribe for a prefix whose target is a database.

    The constructor is NewDbClient (parsePath + probePathElements for every path); its errors
    are GnmiStatus NOT_FOUND, as server.go Get and client_subscribe.go Run return them."""

    def __init__(self, db: SonicRedis, prefix: Any, paths: list[Any]) -> None:
        self.db = db
        self.prefix = prefix
        self.target = prefix.target if prefix is not None else ""
        self._maps: VirtualMaps | None = None
        self._prev_updates: dict[bytes, bool] = {}  # PollRun prevUpdates
        self._poll_broken = False
        try:
            self.entries = [_Entry(p, self._parse(p)) for p in paths]
            for entry in self.entries:
                entry.tables = [self._probe(t) for t in entry.tables]
        except GoError as e:
            raise GnmiStatus(e.code or grpc.StatusCode.NOT_FOUND, e.message) from None

    # -- resolving paths (parsePath, probePathElements) ----------------------------------------

    def redis(self, db_name: str) -> _Redis:
        """Target2RedisDb[ns][db]; a Target the switch's redis does not configure has no client."""
        if db_name not in DATABASES:
            raise GoError(f"Redis Client not present for dbName {db_name} dbNamespace ")
        return _Redis(self.db.client(db_name))

    def _virtual_maps(self) -> VirtualMaps:
        if self._maps is None:
            self._maps = VirtualMaps.load(self.redis(COUNTERS_DB), self.redis("CONFIG_DB"))
        return self._maps

    def _parse(self, path: Any) -> list[TablePath]:
        """parsePath: `[DB, elem names...]` -> a virtual path's tables, or one tablePath where
        the 3rd and 4th names are a key (`a`, `a<sep>b`) until probing says otherwise."""
        db_name, valid = is_target_db(self.target)
        if not valid:
            raise GoError(f"Invalid target dbName {db_name}")
        maps = self._virtual_maps() if db_name == COUNTERS_DB else VirtualMaps()
        names = [db_name]
        if len(path.elem):  # gnmiFullPath: the prefix's elems count only when the path has elems
            prefix_elems = list(self.prefix.elem) if self.prefix is not None else []
            names += [e.name for e in prefix_elems] + [e.name for e in path.elem]
        virtual = lookup_v2r(maps, names) if db_name == COUNTERS_DB else None
        if virtual is not None:
            return virtual
        sep = separator(db_name)
        if not 2 <= len(names) <= 5:
            raise GoError(f"Invalid db table Path {go_path_list(names)}")
        if db_name not in DATABASES:  # probePathElements / TableData2Msi have no client for it
            raise GoError(f"Redis Client not present for dbName {db_name} dbNamespace ")
        key = sep.join(names[2:4])
        return [TablePath(db=db_name, table=names[1], key=key, sep=sep, field=names[4] if len(names) == 5 else "")]

    def _probe(self, tp: TablePath) -> TablePath:
        """probePathElements: `TABLE/x` is a field of the flat hash TABLE when `TABLE<sep>x` does
        not exist and TABLE has field x; `TABLE/a/b` is key a, field b when `TABLE<sep>a<sep>b`
        does not exist and key a has field b. Otherwise a key, which may appear later."""
        if tp.virtual or tp.field or not tp.key:
            return tp
        rdb = self.redis(tp.db)
        if rdb.exists(tp.redis_key):
            return tp
        if tp.sep and tp.sep in tp.key:
            first, second = tp.key.split(tp.sep, 1)
            return replace(tp, key=first, field=second) if rdb.hexists(f"{tp.table}{tp.sep}{first}", second) else tp
        return replace(tp, key="", field=tp.key) if rdb.hexists(tp.table, tp.key) else tp

    def validate_paths(self) -> None:
        """ValidatePaths (ensureKeysExistInRedis), which server.go runs for Get only: every
        non-virtual key must exist, else NOT_FOUND `No valid entry found on DB with key K`."""
        try:
            for entry in self.entries:
                for tp in entry.tables:
                    if tp.key and not tp.virtual and not self.redis(tp.db).exists(tp.redis_key):
                        raise GoError(f"No valid entry found on {tp.db} with key {tp.redis_key}")
        except GoError as e:
            raise GnmiStatus(e.code or grpc.StatusCode.NOT_FOUND, e.message) from None

    # -- Get -----------------------------------------------------------------------------------

    def get(self) -> list[Any]:
        """Get: one notification per path (prefix = the request's); a field is a string_val and
        its absence `redis: nil`, anything else JSON_IETF (`{}` when nothing is there). Errors
        are NOT_FOUND (server.go Get)."""
        ts = time.time_ns()
        out = []
        for entry in self.entries:
            try:
                value = self._get_value(entry.tables)
            except GoError as e:
                raise GnmiStatus(e.code or grpc.StatusCode.NOT_FOUND, e.message) from None
            out.append(self.notification(ts, entry.path, value))
        return out

    def _get_value(self, tables: list[TablePath]) -> Any:
        """tableData2TypedValue."""
        msi: Msi = {}
        for tp in tables:
            if not tp.json_field and tp.field:
                return string_value(self.redis(tp.db).hget_or_nil(tp.redis_key, tp.field))
            table_data_to_msi(self.redis(tp.db), tp, False, msi)
        return msi_to_typed_value(msi)

    def notification(self, ts: int, path: Any, value: Any) -> Any:
        note = gnmi_pb2.Notification(timestamp=ts, update=[gnmi_pb2.Update(path=path, val=value)])
        if self.prefix is not None:
            note.prefix.CopyFrom(self.prefix)
        return note

    def _delete(self, path: Any) -> Any:
        note = gnmi_pb2.Notification(timestamp=time.time_ns(), delete=[path])
        if self.prefix is not None:
            note.prefix.CopyFrom(self.prefix)
        return note

    # -- ONCE and POLL -------------------------------------------------------------------------

    def subscribe_value(self, tables: list[TablePath]) -> Any | None:
        """subscribeTableData2TypedValue: the value, or None when there is nothing to send (a
        missing field, a key or table with no data)."""
        msi: Msi = {}
        for tp in tables:
            if not tp.json_field and tp.field:
                value = self.redis(tp.db).hget(tp.redis_key, tp.field)
                if value is None:
                    continue
                return string_value(value)
            table_data_to_msi(self.redis(tp.db), tp, False, msi)
        return msi_to_typed_value(msi) if msi else None

    def once(self, sink: Sink) -> None:
        """OnceRun: every path that has data, then sync; an error is fatal `OnceRun error: ...`."""
        for entry in self.entries:
            try:
                value = self.subscribe_value(entry.tables)
            except GoError as e:
                sink.fatal(f"OnceRun error: {e.message}", e.code or grpc.StatusCode.INVALID_ARGUMENT)
                return
            if value is not None:
                sink.notify(self.notification(time.time_ns(), entry.path, value))
        sink.sync()

    def poll(self, sink: Sink) -> None:
        """One PollRun round: as ONCE, plus a delete of each path that had data the round before
        and has none now. A redis error ends PollRun silently: no sync, no further rounds."""
        if self._poll_broken:
            return
        for entry in self.entries:
            key = entry.path.SerializeToString(deterministic=True)  # prevUpdates["%v" of the path]
            try:
                value = self.subscribe_value(entry.tables)
            except GoError:
                self._poll_broken = True
                return
            if value is None:
                if self._prev_updates.get(key):
                    sink.notify(self._delete(entry.path))
                    self._prev_updates[key] = False
            else:
                sink.notify(self.notification(time.time_ns(), entry.path, value))
                self._prev_updates[key] = True
        sink.sync()

    # -- STREAM --------------------------------------------------------------------------------

    def _tables_for(self, path: Any) -> list[TablePath]:
        """c.pathG2S[sub.GetPath()]: the tables resolved for this subscription's path."""
        for entry in self.entries:
            if entry.path == path:
                return entry.tables
        tables = [self._probe(t) for t in self._parse(path)]
        self.entries.append(_Entry(path, tables))
        return tables

    def stream(self, subscriptions: Any, sink: Sink, stop: threading.Event) -> None:
        """StreamRun: one worker per subscription; sync once each has sent its first value.

        ON_CHANGE on a field polls it every 200 ms (dbField*Subscribe), on anything else it
        follows redis keyspace notifications (dbTableKeySubscribe); SAMPLE reads every interval
        (validateSampleInterval: 0 means MinSampleInterval, below it is fatal). Any other mode is
        fatal `unsupported subscription mode, MODE` and StreamRun sends no sync."""
        synced: list[threading.Event] = []
        for sub in subscriptions.subscription:
            done = threading.Event()
            if sub.mode == gnmi_pb2.SubscriptionMode.SAMPLE:
                target = partial(self._sample, sub, bool(subscriptions.updates_only), sink, stop, done)
            elif sub.mode == gnmi_pb2.SubscriptionMode.ON_CHANGE:
                target = partial(self._on_change, sub.path, sink, stop, done)
            else:
                sink.fatal(f"unsupported subscription mode, {gnmi_pb2.SubscriptionMode.Name(sub.mode)}")
                return
            synced.append(done)
            _start(target)
        _start(lambda: _sync_when(synced, sink, stop))

    def _on_change(self, path: Any, sink: Sink, stop: threading.Event, synced: threading.Event) -> None:
        """streamOnChangeSubscription: fields are polled every 200 ms (dbField*Subscribe with
        updateOnly false), tables follow keyspace events (dbTableKeySubscribe, interval 0)."""
        self._run_worker(path, sink, stop, synced, on_change=True, interval_ns=0, updates_only=False)

    def _sample(self, sub: Any, updates_only: bool, sink: Sink, stop: threading.Event,
                synced: threading.Event) -> None:
        """streamSampleSubscription."""
        try:
            interval_ns = validate_sample_interval(sub.sample_interval)
        except GoError as e:
            sink.fatal(e.message)
            synced.set()
            return
        self._run_worker(sub.path, sink, stop, synced, on_change=False, interval_ns=interval_ns,
                         updates_only=updates_only)

    def _run_worker(self, path: Any, sink: Sink, stop: threading.Event, synced: threading.Event, *,
                    on_change: bool, interval_ns: int, updates_only: bool) -> None:
        try:
            tables = self._tables_for(path)
        except GoError as e:
            sink.fatal(e.message)
            synced.set()
            return
        worker = _Worker(self, path, tables, sink, stop, synced)
        if tables and tables[0].field:
            poll_ns = FIELD_ON_CHANGE_POLL_NS if on_change else interval_ns
            if len(tables) > 1:
                worker.field_multi(on_change, poll_ns, updates_only)
            else:
                worker.field_single(on_change, poll_ns)
        else:
            worker.table_keys(0 if on_change else interval_ns, updates_only)


def validate_sample_interval(sample_interval: int) -> int:
    """validateSampleInterval (twin.switch.sonic_gnmi.golang), its error as a Go error."""
    try:
        return sample_interval_ns(sample_interval)
    except ValueError as exc:
        raise GoError(str(exc)) from None


def _start(target: Callable[[], None]) -> None:
    threading.Thread(target=target, daemon=True, name="gnmi-legacy").start()


def _sync_when(synced: list[threading.Event], sink: Sink, stop: threading.Event) -> None:
    """StreamRun: `c.synced.Wait()`, then the sync_response."""
    for event in synced:
        while not event.wait(0.1):
            if stop.is_set():
                return
    if not stop.is_set():
        sink.sync()


def keyspace_pattern(tp: TablePath) -> tuple[str, int]:
    """dbTableKeySubscribe's psubscribe pattern and the length of the channel before a key:
    `__keyspace@6__:NEIGH_STATE_TABLE|*`, `__keyspace@2__:COUNTERS:oid:0x...` (flat COUNTERS_DB
    tables have no separator: `__keyspace@2__:COUNTERS_PORT_NAME_MAP*`)."""
    pattern = f"__keyspace@{DATABASES[tp.db].id}__:{tp.table}"
    if not (tp.db == COUNTERS_DB and not counters_keyed(tp.db, tp.table)):
        pattern += tp.sep
    if tp.key:
        pattern += tp.key
        return pattern, len(pattern)
    return pattern + "*", len(pattern)


class _Worker:
    """One STREAM subscription's worker (the goroutines of db_client.go)."""

    def __init__(self, client: LegacyClient, path: Any, tables: list[TablePath], sink: Sink,
                 stop: threading.Event, synced: threading.Event) -> None:
        self.client, self.path, self.tables = client, path, tables
        self.sink, self.stop, self.synced = sink, stop, synced

    def send(self, value: Any) -> None:
        self.sink.notify(self.client.notification(time.time_ns(), self.path, value))

    def fatal(self, message: str, code: grpc.StatusCode | None = None) -> None:
        self.sink.fatal(message, code or grpc.StatusCode.INVALID_ARGUMENT)
        self.synced.set()

    def _hget(self, tp: TablePath) -> str | None:
        """HGET of the field; errors read as a missing field (dbField*Subscribe log them)."""
        try:
            return self.client.redis(tp.db).hget(tp.redis_key, tp.field)
        except GoError:
            return None

    def field_single(self, on_change: bool, interval_ns: int) -> None:
        """dbFieldSubscribe: the field's value ("" when missing) now, then every interval; for
        ON_CHANGE only when it differs from the last sent."""
        tp = self.tables[0]
        value = self._hget(tp) or ""
        self.send(string_value(value))
        self.synced.set()
        while not self.stop.wait(interval_ns / SECOND_NS):
            new = self._hget(tp) or ""
            if not on_change or new != value:
                self.send(string_value(new))
                value = new

    def field_multi(self, on_change: bool, interval_ns: int, updates_only: bool) -> None:
        """dbFieldMultiSubscribe: `{json_key: {field: value}}` of every port now, then every
        interval; ON_CHANGE (and SAMPLE with updates_only) keeps only values that changed, and
        ON_CHANGE sends nothing when none did (SAMPLE sends `{}`)."""
        last: dict[TablePath, str] = {}

        def read() -> Msi:
            msi: Msi = {}
            for tp in self.tables:
                value = self._hget(tp)
                if value is None:
                    if tp.json_field:
                        continue
                    value = ""
                if (on_change or updates_only) and tp in last and last[tp] == value:
                    continue
                last[tp] = value
                msi[tp.json_key] = {tp.json_field: value}
            return msi

        self.send(msi_to_typed_value(read()))
        self.synced.set()
        while not self.stop.wait(interval_ns / SECOND_NS):
            msi = read()
            if not on_change or msi:
                self.send(msi_to_typed_value(msi))

    def table_keys(self, interval_ns: int, updates_only: bool) -> None:
        """dbTableKeySubscribe: psubscribe to each table's keyspace, send what is there now (`{}`
        when nothing), then each change (interval 0, ON_CHANGE) or, every interval (SAMPLE), all
        data with the changes merged in (only the changes, with updates_only)."""
        pubsubs: list[Any] = []
        try:
            msi_all: Msi = {}
            listeners = []
            for tp in self.tables:
                pattern, prefix_len = keyspace_pattern(tp)
                pubsub = cast(Any, self.client.redis(tp.db).client).pubsub()
                pubsubs.append(pubsub)
                if not _psubscribed(pubsub, pattern):
                    self.fatal(f"psubscribe to {pattern} failed for {tp.go_repr()}")
                    return
                table_data_to_msi(self.client.redis(tp.db), tp, False, msi_all)
                listeners.append((tp, pubsub, prefix_len))
            self.send(msi_to_typed_value(msi_all))
            self.synced.set()
            if updates_only:
                msi_all = {}
            updates: queue.Queue[Msi] = queue.Queue()
            for tp, pubsub, prefix_len in listeners:
                _start(partial(self._listen, tp, pubsub, prefix_len, updates))
            self._forward(updates, msi_all, interval_ns, updates_only)
        except GoError as e:
            self.fatal(e.message, e.code)
        except ClientsExhausted as e:   # a psubscribe found no connection for it
            self.fatal(str(e), grpc.StatusCode.RESOURCE_EXHAUSTED)
        finally:  # Go: defer pubsub.Close()
            for pubsub in pubsubs:
                pubsub.close()

    def _forward(self, updates: queue.Queue[Msi], msi_all: Msi, interval_ns: int, updates_only: bool) -> None:
        """dbTableKeySubscribe's select loop over the listeners' updates and the interval."""
        interval = interval_ns / SECOND_NS
        deadline = time.monotonic() + interval if interval_ns else None
        while not self.stop.is_set():
            wait = PUBSUB_RECEIVE_S
            if deadline is not None:
                wait = max(0.0, min(PUBSUB_RECEIVE_S, deadline - time.monotonic()))
            try:
                update: Msi | None = updates.get(timeout=wait)
            except queue.Empty:
                update = None
            if update is not None:
                if deadline is None:
                    self.send(msi_to_typed_value(update))
                else:
                    msi_all.update(update)
            if deadline is not None and time.monotonic() >= deadline:
                self.send(msi_to_typed_value(msi_all))
                if updates_only:
                    msi_all = {}
                deadline = time.monotonic() + interval

    def _listen(self, tp: TablePath, pubsub: Any, prefix_len: int, updates: queue.Queue[Msi]) -> None:
        """dbSingleTableKeySubscribe: on `hset`, the key's data again (skipped when the same as
        the last read); on `del`/`hdel` in a whole-table subscription `{key: {}}` (nothing for a
        key subscription); other events are ignored."""
        last: Msi = {}
        while not self.stop.is_set():
            try:
                message = pubsub.get_message(ignore_subscribe_messages=True, timeout=PUBSUB_RECEIVE_S)
            except (redis.RedisError, OSError, ValueError):
                self.stop.wait(PUBSUB_RECEIVE_S)
                continue
            if not message or message.get("type") != "pmessage":
                continue
            channel, event = str(message["channel"]), str(message["data"])
            if tp.key == "" and len(channel) < prefix_len:
                continue
            new: Msi = {}
            if event in ("del", "hdel"):
                if not tp.key:
                    new[channel[prefix_len:]] = {}
            elif event == "hset":
                try:
                    if tp.key:
                        table_data_to_msi(self.client.redis(tp.db), tp, False, new)
                    else:
                        table_data_to_msi(self.client.redis(tp.db), replace(tp, key=channel[prefix_len:]), True, new)
                except GoError as e:
                    self.sink.fatal(e.message, e.code or grpc.StatusCode.INVALID_ARGUMENT)
                    return
                if new == last:
                    continue
                last = new
            else:
                continue
            if new:
                updates.put(new)


def _psubscribed(pubsub: Any, pattern: str) -> bool:
    """PSubscribe and its confirmation within a second, for exactly `pattern`."""
    try:
        pubsub.psubscribe(pattern)
        deadline = time.monotonic() + PSUBSCRIBE_CONFIRM_S
        while time.monotonic() < deadline:
            message = pubsub.get_message(timeout=max(0.0, deadline - time.monotonic()))
            if message is not None:
                return bool(message.get("type") == "psubscribe" and message.get("channel") == pattern)
    except ClientsExhausted:
        raise
    except redis.RedisError:
        return False
    return False
