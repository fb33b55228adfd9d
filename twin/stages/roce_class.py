"""RoCE's lossless class through one switch: the packet arrives on an ingress port, whose DSCP_TO_TC_MAP
gives its traffic class and whose TC_TO_PRIORITY_GROUP_MAP the priority group its bytes are counted in;
it leaves by an egress port, whose TC_TO_QUEUE_MAP gives its queue (twin.stages.port_qos resolves
the maps as qosorch does). It stays lossless only when

- ingress: the priority group has a lossless BUFFER_PG profile (one with an `xoff`), and PFC is on
  for its priority (the traffic class) in the port's `pfc_enable`, so the switch asks the sender to
  pause before the group overflows;
- egress: the queue is one PFC pauses (twin.stages.port_qos's `lossless`), and PFC is on for the
  priority there too, so the switch obeys its neighbour's pause frames for it.

Each way it breaks is a `Break`: the port, the side, where to look (`TABLE|key field`), what happens
and the fix. Pure; `twin validate` (twin.stages.validate.lossless) judges every port given QoS with
it, `twin traffic` (twin.traffic.roce) every hop of every flow's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from twin.stages import port_buffers
from twin.stages.port_qos import PortQos, lossless_queues, pfc_priorities, port_qos_rows, ports_qos

Side = Literal["ingress", "egress"]


@dataclass(frozen=True)
class Break:
    """One way RoCE's class stops being lossless on a port; `text` names no port, so ports that break
    alike share it."""

    port: str
    side: Side
    where: str
    text: str
    fix: str


@dataclass(frozen=True)
class HopClass:
    """RoCE through one switch: its traffic class, ingress priority group, egress queue, and what breaks."""

    tc: int
    pg: int
    queue: int
    breaks: tuple[Break, ...]


def _list(values: frozenset[int]) -> str:
    return ", ".join(map(str, sorted(values))) or "none"


class SwitchClass:
    """One switch's QoS and ingress buffers, resolved once for every hop through it."""

    def __init__(self, db: Mapping[str, Any]) -> None:
        self.db = db
        self.rows = port_qos_rows(db)
        self.qos: dict[str, PortQos] = ports_qos(db, list(set(self.rows[0]) | set(db.get("PORT", {}) or {})))
        self.pgs = port_buffers.pg_profiles(db)
        self.profiles = port_buffers.profiles(db)

    def _row(self, port: str) -> Mapping[str, Any]:
        return self.rows[0].get(port, {})

    def _map_entry(self, port: str, field: str, table: str, key: int) -> str:
        name = self._row(port).get(field)
        return f"{table}|{name} {key}" if name else f"PORT_QOS_MAP|{port} {field}"

    def _lossy_pg(self, port: str, tc: int, pg: int, bound: tuple[str, str] | None,
                  profile: port_buffers.Profile | None) -> Break:
        """RoCE's priority group is lossy: the map is wrong when the port has a lossless one, else the binding."""
        what = f"its profile {profile.name} has no xoff" if profile is not None else "no BUFFER_PG profile binds it"
        text = f"RoCE (traffic class {tc}) fills priority group {pg}, a lossy one ({what})"
        good = sorted({i for i, (_, name) in self.pgs.get(port, {}).items()
                       if (p := self.profiles.get(name)) is not None and p.lossless})
        if good and self._row(port).get("tc_to_pg_map"):
            return Break(port, "ingress", self._map_entry(port, "tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP", tc), text,
                         f"map traffic class {tc} to a lossless priority group ({', '.join(map(str, good))})")
        key = bound[0] if bound is not None else f"{port}|{pg}"
        return Break(port, "ingress", f"BUFFER_PG|{key} profile", text,
                     f"bind a lossless profile (one with xoff) to priority group {pg}")

    def ingress(self, port: str, dscp: int) -> tuple[int, int, list[Break]]:
        """(traffic class, priority group, breaks) of DSCP `dscp` arriving on `port`."""
        qos = self.qos.get(port)
        tc = qos.tc_of(dscp) if qos is not None else 0
        pg = qos.pg_of_tc(tc) if qos is not None else 0
        out = []
        bound = self.pgs.get(port, {}).get(pg)
        profile = self.profiles.get(bound[1]) if bound is not None else None
        if profile is None or not profile.lossless:
            out.append(self._lossy_pg(port, tc, pg, bound, profile))
        if tc not in (qos.pfc if qos is not None else pfc_priorities(self._row(port))):
            out.append(Break(port, "ingress", f"PORT_QOS_MAP|{port} pfc_enable", f"PFC is off for priority {tc}: "
                             "nothing asks the sender to pause RoCE", f"add {tc} to pfc_enable"))
        return tc, pg, out

    def egress(self, port: str, tc: int) -> tuple[int, list[Break]]:
        """(queue, breaks) of traffic class `tc` leaving by `port`."""
        qos = self.qos.get(port)
        queue = qos.queue_of_tc(tc) if qos is not None else 0
        lossless = qos.lossless if qos is not None else lossless_queues(self.db, self._row(port))
        pfc = qos.pfc if qos is not None else pfc_priorities(self._row(port))
        out = []
        if queue not in lossless:
            out.append(Break(port, "egress", self._map_entry(port, "tc_to_queue_map", "TC_TO_QUEUE_MAP", tc),
                             f"RoCE (traffic class {tc}) leaves by queue {queue}, a lossy one (PFC pauses queues "
                             f"{_list(lossless)})", f"map traffic class {tc} to a queue PFC pauses"))
        if tc not in pfc:
            out.append(Break(port, "egress", f"PORT_QOS_MAP|{port} pfc_enable", f"PFC is off for priority {tc}: "
                             "the neighbour's pause frames for RoCE are not obeyed", f"add {tc} to pfc_enable"))
        return queue, out

    def hop(self, ingress: str, egress: str, dscp: int) -> HopClass:
        tc, pg, breaks = self.ingress(ingress, dscp)
        queue, more = self.egress(egress, tc)
        return HopClass(tc=tc, pg=pg, queue=queue, breaks=tuple(breaks + more))
