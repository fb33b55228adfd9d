"""A port's egress QoS as SONiC's qosorch resolves it from CONFIG_DB (sonic-swss orchagent/qosorch.cpp,
202505, read, not copied): which queue each DSCP goes to, which queue the rest goes to, how each queue
is scheduled, and which queues are lossless. Pure; the switch's kernel programming
(twin.switch.config.qdisc), `twin validate` (twin.stages.validate.qos) and `twin verify`
(twin.checks.roce_queue) all read a port's QoS through it.

- PORT_QOS_MAP keys are a port or a comma-separated list of ports (qosorch tokenizes them); the key
  `global` carries a switch-wide `dscp_to_tc_map` (SAI_SWITCH_ATTR_QOS_DSCP_TO_TC_MAP) that a port's own
  map overrides, and nothing else;
- an IP packet's traffic class is DSCP_TO_TC_MAP's entry for its DSCP, 0 when the map has none (the
  SAI's default); a packet that is not IP has traffic class 0;
- a traffic class goes to TC_TO_QUEUE_MAP's queue, or to the queue of its own number without a map
  entry (the SAI's default: TC n -> queue n); queues are 0-9 (sonic-tc-queue-map.yang's qindex), the
  unicast queues of SONiC-VS's SAI;
- QUEUE keys are `ports|index` or `ports|first-last`, ports comma-separated; its `scheduler` names a
  SCHEDULER row: `type` DWRR, WRR or STRICT (YANG default WRR), `weight` 1-100 (default 1), `cir`/`pir`
  in bytes per second (meter_type bytes, the default). A queue no QUEUE row binds is scheduled as
  sonic-scheduler.yang's defaults say: WRR, weight 1;
- PORT_QOS_MAP `pfc_enable` lists the PFC priorities; each is lossless in the queue MAP_PFC_PRIORITY_TO_QUEUE
  (`pfc_to_queue_map`) gives it, or in the queue of its own number without one. A packet's PFC priority
  is its traffic class (SONiC's qos templates list the lossless traffic classes in `pfc_enable`);
- on ingress, a traffic class fills the priority group TC_TO_PRIORITY_GROUP_MAP (`tc_to_pg_map`) gives
  it, priority group 0 without a map or an entry (the SAI leaves the map unset, and ASICs then count
  every traffic class in PG 0).

A referenced map that does not exist is not applied (qosorch retries until it exists). A port to which
neither a DSCP_TO_TC_MAP nor a TC_TO_QUEUE_MAP applies has no QoS: every packet goes to queue 0, as on a
SONiC switch without QoS maps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

QUEUES = 10          # unicast queues per port (SONiC-VS's SAI; TC_TO_QUEUE_MAP may name 0-9)
DSCPS = 64
TCS = 16             # traffic classes (sonic-types' tc_type: 0-15)
PGS = 8              # ingress priority groups (sonic-tc-priority-group-map.yang: 0-7)
GLOBAL = "global"
SCHEDULER_TYPES = ("DWRR", "WRR", "STRICT")

Tables = Mapping[str, Any]


@dataclass(frozen=True)
class Scheduler:
    """A queue's SCHEDULER: its type, DWRR/WRR weight and rates in bytes per second (None: not set)."""

    type: str = "WRR"
    weight: int = 1
    cir: int | None = None
    pir: int | None = None


DEFAULT_SCHEDULER = Scheduler()


@dataclass(frozen=True)
class PortQos:
    """One port's QoS: `dscp_queue[d]` is the queue of an IP packet with DSCP d, `other_queue` the
    queue of every packet that is not IP, `schedulers[q]` queue q's scheduler, `lossless` the queues PFC
    makes lossless; per traffic class, `dscp_tc[d]` DSCP d's class on ingress, `tc_queue[t]` class t's
    queue on egress, `tc_pg[t]` its ingress priority group, and `pfc` the priorities PFC pauses."""

    dscp_queue: tuple[int, ...]
    other_queue: int
    schedulers: tuple[Scheduler, ...]
    lossless: frozenset[int]
    dscp_tc: tuple[int, ...] = (0,) * DSCPS
    tc_queue: tuple[int, ...] = tuple(range(QUEUES)) + (0,) * (TCS - QUEUES)
    tc_pg: tuple[int, ...] = (0,) * TCS
    pfc: frozenset[int] = frozenset()

    def queue_of(self, dscp: int) -> int:
        return self.dscp_queue[dscp]

    def tc_of(self, dscp: int) -> int:
        return self.dscp_tc[dscp]

    def queue_of_tc(self, tc: int) -> int:
        return self.tc_queue[tc] if 0 <= tc < len(self.tc_queue) else 0

    def pg_of_tc(self, tc: int) -> int:
        return self.tc_pg[tc] if 0 <= tc < len(self.tc_pg) else 0


def _rows(db: Tables, table: str) -> Mapping[str, Any]:
    rows = db.get(table, {})
    return rows if isinstance(rows, Mapping) else {}


def _int(value: Any, default: int | None = None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return default


def port_qos_rows(db: Tables) -> tuple[dict[str, Mapping[str, Any]], Mapping[str, Any]]:
    """({port: its PORT_QOS_MAP row}, the `global` row): comma-separated keys give each port the row."""
    ports: dict[str, Mapping[str, Any]] = {}
    glob: Mapping[str, Any] = {}
    for key, row in _rows(db, "PORT_QOS_MAP").items():
        if not isinstance(row, Mapping):
            continue
        if key == GLOBAL:
            glob = row
            continue
        for port in str(key).split(","):
            if port.strip():
                ports[port.strip()] = row
    return ports, glob


def _map(db: Tables, table: str, name: Any) -> Mapping[str, Any] | None:
    if not name:
        return None
    row = _rows(db, table).get(str(name))
    return row if isinstance(row, Mapping) else None


def _queue_range(text: str) -> range:
    first, _, last = text.partition("-")
    low, high = _int(first), _int(last or first)
    if low is None or high is None or low > high:
        return range(0)
    return range(max(0, low), min(QUEUES - 1, high) + 1)


def queue_schedulers(db: Tables) -> dict[str, dict[int, Scheduler]]:
    """{port: {queue: scheduler}} of every QUEUE row that binds an existing SCHEDULER."""
    profiles = {name: scheduler_of(row) for name, row in _rows(db, "SCHEDULER").items() if isinstance(row, Mapping)}
    out: dict[str, dict[int, Scheduler]] = {}
    for key, row in _rows(db, "QUEUE").items():
        if not isinstance(row, Mapping) or "|" not in str(key) or not row.get("scheduler"):
            continue
        ports, _, indexes = str(key).rpartition("|")
        sched = profiles.get(str(row["scheduler"]))
        if sched is None:
            continue
        for port in ports.split(","):
            for queue in _queue_range(indexes):
                out.setdefault(port.strip(), {})[queue] = sched
    return out


def scheduler_of(row: Mapping[str, Any]) -> Scheduler:
    kind = str(row.get("type", "WRR")).upper()
    weight = _int(row.get("weight"), 1) or 1
    metered_bytes = str(row.get("meter_type", "bytes")) == "bytes"
    cir = _int(row.get("cir")) if metered_bytes else None
    pir = _int(row.get("pir")) if metered_bytes else None
    return Scheduler(type=kind if kind in SCHEDULER_TYPES else "WRR", weight=max(1, min(100, weight)),
                     cir=cir or None, pir=pir or None)


def _queue_of_tc(tc_map: Mapping[str, Any] | None, tc: int) -> int:
    queue = _int(tc_map.get(str(tc))) if tc_map is not None else None
    if queue is None:
        queue = tc
    return queue if 0 <= queue < QUEUES else 0


def pfc_priorities(row: Mapping[str, Any]) -> frozenset[int]:
    """The priorities a PORT_QOS_MAP row's `pfc_enable` lists."""
    return frozenset(p for prio in str(row.get("pfc_enable", "")).split(",") if (p := _int(prio)) is not None)


def lossless_queues(db: Tables, row: Mapping[str, Any]) -> frozenset[int]:
    """The queues a PORT_QOS_MAP row's PFC priorities pause (through its `pfc_to_queue_map`)."""
    pfc_map = _map(db, "MAP_PFC_PRIORITY_TO_QUEUE", row.get("pfc_to_queue_map"))
    out = set()
    for p in pfc_priorities(row):
        queue = _int(pfc_map.get(str(p))) if pfc_map is not None else None
        out.add(p if queue is None else queue)
    return frozenset(q for q in out if 0 <= q < QUEUES)


def _pg_of_tc(pg_map: Mapping[str, Any] | None, tc: int) -> int:
    pg = _int(pg_map.get(str(tc))) if pg_map is not None else None
    return pg if pg is not None and 0 <= pg < PGS else 0


def port_qos(db: Tables, port: str, rows: tuple[dict[str, Mapping[str, Any]], Mapping[str, Any]] | None = None,
             schedulers: Mapping[str, Mapping[int, Scheduler]] | None = None) -> PortQos | None:
    """`port`'s QoS, or None when no DSCP_TO_TC_MAP or TC_TO_QUEUE_MAP applies to it. `rows` and
    `schedulers` (port_qos_rows, queue_schedulers of the same `db`) save reading them again per port."""
    ports, glob = rows if rows is not None else port_qos_rows(db)
    row = ports.get(port, {})
    dscp_map = _map(db, "DSCP_TO_TC_MAP", row.get("dscp_to_tc_map") or glob.get("dscp_to_tc_map"))
    tc_map = _map(db, "TC_TO_QUEUE_MAP", row.get("tc_to_queue_map"))
    if dscp_map is None and tc_map is None:
        return None
    tcs = [(_int(dscp_map.get(str(d)), 0) or 0) if dscp_map is not None else 0 for d in range(DSCPS)]
    own = (schedulers if schedulers is not None else queue_schedulers(db)).get(port, {})
    pg_map = _map(db, "TC_TO_PRIORITY_GROUP_MAP", row.get("tc_to_pg_map"))
    return PortQos(dscp_queue=tuple(_queue_of_tc(tc_map, tc) for tc in tcs), other_queue=_queue_of_tc(tc_map, 0),
                   schedulers=tuple(own.get(q, DEFAULT_SCHEDULER) for q in range(QUEUES)),
                   lossless=lossless_queues(db, row), dscp_tc=tuple(tcs),
                   tc_queue=tuple(_queue_of_tc(tc_map, tc) for tc in range(TCS)),
                   tc_pg=tuple(_pg_of_tc(pg_map, tc) for tc in range(TCS)), pfc=pfc_priorities(row))


def ports_qos(db: Tables, ports: list[str] | None = None) -> dict[str, PortQos]:
    """The QoS of every PORT (or of `ports`) that has one. Ports with the same PORT_QOS_MAP row and
    schedulers (every port of a generated config) are resolved once."""
    rows, schedulers = port_qos_rows(db), queue_schedulers(db)
    names = ports if ports is not None else list(_rows(db, "PORT"))
    seen: dict[tuple[object, ...], PortQos | None] = {}
    out = {}
    for port in names:
        row = rows[0].get(port, {})
        key = (tuple(sorted((str(k), str(v)) for k, v in row.items())), tuple(sorted(schedulers.get(port, {}).items())))
        if key not in seen:
            seen[key] = port_qos(db, port, rows, schedulers)
        if (qos := seen[key]) is not None:
            out[port] = qos
    return out


@dataclass(frozen=True)
class LossyRoce:
    """A port that queues RoCE's DSCP in a queue PFC does not make lossless."""

    port: str
    tc: int
    queue: int
    lossless: frozenset[int]


def lossy_roce(db: Tables, dscp: int) -> list[LossyRoce]:
    """The ports of PORT_QOS_MAP (RoCE's ports: those given QoS) on which DSCP `dscp` goes to a queue that
    is not lossless; a port without QoS maps puts it in queue 0 (traffic class 0)."""
    rows, schedulers = port_qos_rows(db), queue_schedulers(db)
    ports = rows[0]
    out = []
    for port in sorted(ports, key=lambda p: (len(p), p)):
        row = ports[port]
        qos = port_qos(db, port, rows, schedulers)
        dscp_map = _map(db, "DSCP_TO_TC_MAP", row.get("dscp_to_tc_map") or rows[1].get("dscp_to_tc_map"))
        tc = (_int(dscp_map.get(str(dscp)), 0) or 0) if dscp_map is not None else 0
        queue = qos.queue_of(dscp) if qos is not None else 0
        lossless = lossless_queues(db, row)
        if queue not in lossless:
            out.append(LossyRoce(port=port, tc=tc, queue=queue, lossless=lossless))
    return out
