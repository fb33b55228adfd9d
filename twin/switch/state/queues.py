"""The flex counter poller's queues and priority groups: COUNTERS_DB's queue and PG maps, their counters,
and the queues' watermarks, as portsorch and syncd's flex counters write them on SONiC 202505. Pure but
for `QueuePoller`, which keeps what the queues last showed and their peaks.

The maps, per port of COUNTERS_PORT_NAME_MAP, for the queues and priority groups SONiC-VS's SAI gives a
port (sonic-sairedis vslib: 10 unicast queues, 10 multicast, 8 priority groups):
- COUNTERS_QUEUE_NAME_MAP `Ethernet0:3` -> the queue's oid; COUNTERS_QUEUE_TYPE_MAP oid ->
  SAI_QUEUE_TYPE_UNICAST (0-9) or SAI_QUEUE_TYPE_MULTICAST (10-19); COUNTERS_QUEUE_INDEX_MAP oid -> its
  index; COUNTERS_QUEUE_PORT_MAP oid -> the port's oid;
- COUNTERS_PG_NAME_MAP, COUNTERS_PG_INDEX_MAP, COUNTERS_PG_PORT_MAP the same for the priority groups.
With DEVICE_METADATA|localhost `create_only_config_db_buffers` "true", only the queues BUFFER_QUEUE names
(and the PGs BUFFER_PG names) are in the maps, as flexcounterorch's getQueueConfigurations and
getPgConfigurations build them; otherwise every one is.

The counters, `COUNTERS:<oid>` (the QUEUE_STAT and QUEUE_WATERMARK_STAT groups; PG_DROP and
PG_WATERMARK):
- a unicast queue of a port with QoS maps is its pfifo in the port's htb tree (twin.switch.config.qdisc):
  SAI_QUEUE_STAT_PACKETS and _BYTES what the pfifo sent, _DROPPED_PACKETS what it dropped, and
  SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES the bytes waiting in it when it is read (a read-and-clear peak
  on an ASIC; here what is waiting at each poll). The kernel keeps no count of dropped bytes:
  SAI_QUEUE_STAT_DROPPED_BYTES is not written, as a SAI without the stat does not;
- a port without QoS maps has no tree: every packet it sends is queue 0's (its kernel tx packets,
  bytes and drops), as on a SONiC switch without maps (traffic class 0, queue 0);
- multicast queues and priority groups count nothing (every packet is unicast here; no ingress buffer
  exists to hold a PG's packets): their counters are written as 0 once.
USER_WATERMARKS, PERSISTENT_WATERMARKS and PERIODIC_WATERMARKS `:<oid>` keep the largest watermark
seen, as watermark_queue.lua does; PERIODIC_WATERMARKS starts again every PERIODIC_S (watermarkorch's
default telemetry interval). Nothing clears USER_WATERMARKS here (there is no `sonic-clear queue
watermark`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from twin.stages.port_qos import QUEUES
from twin.switch.config.qdisc import queue_of_leaf
from twin.switch.state.rtnl import QdiscStats

Row = dict[str, str]
UNICAST_QUEUES = QUEUES
MULTICAST_QUEUES = 10
QUEUES_PER_PORT = UNICAST_QUEUES + MULTICAST_QUEUES
PRIORITY_GROUPS = 8
QUEUE_TYPE, PG_TYPE = 0x15, 0x1A   # SAI_OBJECT_TYPE_QUEUE, SAI_OBJECT_TYPE_INGRESS_PRIORITY_GROUP
UNICAST, MULTICAST = "SAI_QUEUE_TYPE_UNICAST", "SAI_QUEUE_TYPE_MULTICAST"
PACKETS, BYTES, DROPPED = "SAI_QUEUE_STAT_PACKETS", "SAI_QUEUE_STAT_BYTES", "SAI_QUEUE_STAT_DROPPED_PACKETS"
WATERMARK = "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"
PG_DROPS = "SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS"
PG_WATERMARKS = ("SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES",
                 "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES")
USER, PERSISTENT, PERIODIC = "USER_WATERMARKS", "PERSISTENT_WATERMARKS", "PERIODIC_WATERMARKS"
WATERMARK_TABLES = (USER, PERSISTENT, PERIODIC)
PERIODIC_S = 120.0
MAPS = ("COUNTERS_QUEUE_NAME_MAP", "COUNTERS_QUEUE_TYPE_MAP", "COUNTERS_QUEUE_INDEX_MAP", "COUNTERS_QUEUE_PORT_MAP",
        "COUNTERS_PG_NAME_MAP", "COUNTERS_PG_INDEX_MAP", "COUNTERS_PG_PORT_MAP")


def _port_number(port: str) -> int:
    number = port.removeprefix("Ethernet")
    return int(number) if number.isdigit() else 0


def queue_oid(port: str, index: int) -> str:
    """The SAI object id twin gives a port's queue (the form syncd's are in: type 0x15, then the index)."""
    return f"oid:0x{QUEUE_TYPE:x}{_port_number(port):06x}{index:06x}"


def pg_oid(port: str, index: int) -> str:
    return f"oid:0x{PG_TYPE:x}{_port_number(port):06x}{index:06x}"


# -- which queues and PGs the maps hold ---------------------------------------------------------

Enabled = dict[str, frozenset[int]] | None   # port -> indexes; None: every queue (or PG) of every port


def _indexes(text: str, count: int) -> set[int]:
    first, _, last = text.partition("-")
    if not first.isdigit() or not (last or first).isdigit():
        return set()
    return set(range(int(first), min(count - 1, int(last or first)) + 1))


def enabled(create_only: bool, buffer_keys: Iterable[str], count: int) -> Enabled:
    """The indexes of each port the maps hold: every one unless `create_only`
    (create_only_config_db_buffers), then those of BUFFER_QUEUE's or BUFFER_PG's keys (`ports|index` or
    `ports|first-last`)."""
    if not create_only:
        return None
    out: dict[str, set[int]] = {}
    for key in buffer_keys:
        ports, _, indexes = key.rpartition("|")
        for port in ports.split(","):
            out.setdefault(port, set()).update(_indexes(indexes, count))
    return {port: frozenset(ixs) for port, ixs in out.items()}


def _on(which: Enabled, port: str, index: int) -> bool:
    return which is None or index in which.get(port, frozenset())


def queue_maps(port_oids: Mapping[str, str], queues: Enabled = None, pgs: Enabled = None) -> dict[str, Row]:
    """The seven maps (MAPS) for the ports {name: oid}."""
    maps: dict[str, Row] = {name: {} for name in MAPS}
    for port, oid in port_oids.items():
        for index in range(QUEUES_PER_PORT):
            if not _on(queues, port, index):
                continue
            q = queue_oid(port, index)
            maps["COUNTERS_QUEUE_NAME_MAP"][f"{port}:{index}"] = q
            maps["COUNTERS_QUEUE_TYPE_MAP"][q] = UNICAST if index < UNICAST_QUEUES else MULTICAST
            maps["COUNTERS_QUEUE_INDEX_MAP"][q] = str(index)
            maps["COUNTERS_QUEUE_PORT_MAP"][q] = oid
        for index in range(PRIORITY_GROUPS):
            if not _on(pgs, port, index):
                continue
            pg = pg_oid(port, index)
            maps["COUNTERS_PG_NAME_MAP"][f"{port}:{index}"] = pg
            maps["COUNTERS_PG_INDEX_MAP"][pg] = str(index)
            maps["COUNTERS_PG_PORT_MAP"][pg] = oid
    return maps


# -- counters -------------------------------------------------------------------------------------

Stats = tuple[int, int, int, int]     # packets, bytes, dropped packets, backlog bytes
IDLE: Stats = (0, 0, 0, 0)
def leaf_stats(qdiscs: Iterable[QdiscStats], ifnames: Mapping[int, str]) -> dict[str, dict[int, Stats]]:
    """{device: {queue: stats}} of a qdisc dump (rtnl.qdisc_stats): each queue's pfifo; `ifnames`
    names the devices by index."""
    out: dict[str, dict[int, Stats]] = {}
    for q in qdiscs:
        queue = queue_of_leaf(q.parent)
        if q.kind != "pfifo" or queue is None:
            continue
        out.setdefault(ifnames.get(q.ifindex, ""), {})[queue] = (q.packets, q.bytes, q.drops, q.backlog)
    return out


def port_queue_stats(port_stats: Mapping[str, int] | None, tree: Mapping[int, Stats] | None) -> tuple[Stats, ...]:
    """A port's unicast queues' stats: its tree's pfifos, or without a tree everything it sent in queue 0
    (`port_stats`: its kernel statistics, rtnl's STATS64 names)."""
    if tree is not None:
        return tuple(tree.get(q, IDLE) for q in range(UNICAST_QUEUES))
    stats = port_stats or {}
    sent = (stats.get("tx_packets", 0), stats.get("tx_bytes", 0), stats.get("tx_dropped", 0), 0)
    return (sent, *(IDLE,) * (UNICAST_QUEUES - 1))


def counter_row(stats: Stats) -> Row:
    """`COUNTERS:<queue oid>`."""
    return {PACKETS: str(stats[0]), BYTES: str(stats[1]), DROPPED: str(stats[2]), WATERMARK: str(stats[3])}


def idle_rows(maps: Mapping[str, Row]) -> dict[str, Row]:
    """`COUNTERS:<oid>` of the multicast queues and the priority groups, which count nothing here."""
    out = {oid: counter_row(IDLE) for oid, index in maps["COUNTERS_QUEUE_INDEX_MAP"].items()
           if int(index) >= UNICAST_QUEUES}
    out.update({oid: {PG_DROPS: "0", **dict.fromkeys(PG_WATERMARKS, "0")} for oid in maps["COUNTERS_PG_INDEX_MAP"]})
    return out


def idle_watermarks(maps: Mapping[str, Row]) -> dict[str, Row]:
    """The watermark tables' rows of every queue and priority group before any was seen: 0."""
    out = {oid: {WATERMARK: "0"} for oid in maps["COUNTERS_QUEUE_INDEX_MAP"]}
    out.update({oid: dict.fromkeys(PG_WATERMARKS, "0") for oid in maps["COUNTERS_PG_INDEX_MAP"]})
    return out


@dataclass
class Written:
    """What one poll writes: `COUNTERS:<oid>` rows, and rows of each watermark table."""

    counters: dict[str, Row] = field(default_factory=dict)
    watermarks: dict[str, dict[str, Row]] = field(default_factory=lambda: {t: {} for t in WATERMARK_TABLES})


class QueuePoller:
    """What a switch's queues last showed, kept small (a 64 x 128 fabric has 16,384 ports): per port one
    flat tuple of its unicast queues' stats (mostly zeros, which Python does not allocate), and only the
    watermark peaks that are not 0. `poll` gives the rows that changed; after `reset` (the tables
    written afresh) every row again."""

    def __init__(self, now: float) -> None:
        self.last: dict[str, tuple[int, ...]] = {}
        self.since_start: dict[str, int] = {}     # USER_WATERMARKS and PERSISTENT_WATERMARKS: nothing clears them
        self.periodic: dict[str, int] = {}
        self.period_start = now

    def reset(self) -> None:
        self.last = {}

    def peaks(self) -> dict[str, dict[str, Row]]:
        """The watermark tables' rows of every queue whose peak is not 0 (written again with the tables)."""
        since = {oid: {WATERMARK: str(v)} for oid, v in self.since_start.items()}
        periodic = {oid: {WATERMARK: str(v)} for oid, v in self.periodic.items()}
        return {USER: since, PERSISTENT: dict(since), PERIODIC: periodic}

    def poll(self, ports: Iterable[str], port_stats: Mapping[str, Mapping[str, int] | None],
             leaves: Mapping[str, Mapping[int, Stats]], now: float, queues: Enabled = None) -> Written:
        """The rows that changed since the last poll, of every unicast queue the maps hold (`queues`, as
        `enabled` gave it) of `ports`."""
        out = Written()
        if now - self.period_start >= PERIODIC_S:       # watermarkorch's telemetry interval: PERIODIC starts again
            for oid in self.periodic:
                out.watermarks[PERIODIC][oid] = {WATERMARK: "0"}
            self.periodic, self.period_start = {}, now
        for port in ports:
            stats = port_queue_stats(port_stats.get(port), leaves.get(port))
            flat = tuple(x for s in stats for x in s)
            before = self.last.get(port)
            if flat == before:
                continue
            self.last[port] = flat
            for q, now_q in enumerate(stats):
                if (before is not None and before[4 * q:4 * q + 4] == now_q) or not _on(queues, port, q):
                    continue
                oid = queue_oid(port, q)
                out.counters[oid] = counter_row(now_q)
                backlog = now_q[3]
                for table, peaks in ((USER, self.since_start), (PERIODIC, self.periodic)):
                    if backlog > peaks.get(oid, 0):
                        peaks[oid] = backlog
                        out.watermarks[table][oid] = {WATERMARK: str(backlog)}
                if oid in out.watermarks[USER]:
                    out.watermarks[PERSISTENT][oid] = out.watermarks[USER][oid]
        return out
