"""The virtual paths of COUNTERS_DB (sonic-gnmi sonic_data_client/virtual_db.go and trie.go at 5ec1c20b):
COUNTERS/Ethernet*, Queues, Pfcwd, VoQs, PORT*, SWITCH*, SID*, ACL_RULE*, RATES, PORT_PHY_ATTR,
PERIODIC_WATERMARKS/PriorityGroups, INTERFACE_COUNTERS, resolved through the name maps SONiC keeps in
COUNTERS_DB and the aliases of CONFIG_DB PORT, into the tables the legacy handler reads
(twin.switch.sonic_gnmi.legacy). Trie wildcards are tried in the order virtual_db.go lists them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from twin.switch.sonic_gnmi.legacy_db import COUNTERS_DB, GoError, GoRedis, TablePath

QUEUE_WATERMARK_FIELD = "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"  # v2rEthPortQueStats

T = TypeVar("T")


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
    def load(cls, counters: GoRedis, config: GoRedis) -> VirtualMaps:
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


def _alias_maps(config: GoRedis) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """GetAliasMap: every CONFIG_DB `PORT|<name>` with its `alias` (a PORT without one fails the
    request with `redis: nil`); every such port lives in the default namespace ""."""
    alias2name, name2alias, port2ns = {}, {}, {}
    for key in config.keys("PORT|*"):
        alias, name = config.hget_or_nil(key, "alias"), key[5:]
        alias2name[alias], name2alias[name], port2ns[name] = name, alias, ""
    return alias2name, name2alias, port2ns


def _pfcwd_map(config: GoRedis, queues: dict[str, str]) -> dict[str, dict[str, str]]:
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

