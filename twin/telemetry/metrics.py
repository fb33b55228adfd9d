"""The metrics the collector serves: their names, types, labels and where each comes from (pure).

What a switch's gNMI subscriptions last said (`SwitchTables`: per subscribed table, key -> fields, as
sonic-gnmi sends them) becomes Prometheus samples here, labelled with what the lab's plan knows of the
switch and its ports. docs/telemetry.md lists the same catalog; a unit test keeps the two equal.

Labels: `switch`, `role` (leaf, spine, ...), `rail` (a rail-optimized leaf's rail, else ""), and per
port `port` (SONiC's name), `peer` (the node at its far end) and `peer_port`; per queue `queue` (its
index); per BGP session `peer_ip` and `peer`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from twin.model.plan import Plan

Kind = Literal["counter", "gauge"]


@dataclass(frozen=True)
class Metric:
    name: str          # a counter's name without the `_total` prometheus_client appends
    kind: Kind
    help: str
    labels: tuple[str, ...]
    source: str        # where it is read: database, table, field


PORT_LABELS = ("switch", "role", "rail", "port", "peer", "peer_port")
QUEUE_LABELS = (*PORT_LABELS, "queue")
SESSION_LABELS = ("switch", "role", "rail", "peer_ip", "peer")

# COUNTERS_DB COUNTERS:<port oid>, as SONiC's flex counters write them (subscribed as COUNTERS/Ethernet*)
PORT_COUNTERS: dict[str, tuple[str, str]] = {
    "SAI_PORT_STAT_IF_IN_OCTETS": ("sonic_port_in_octets", "bytes received"),
    "SAI_PORT_STAT_IF_OUT_OCTETS": ("sonic_port_out_octets", "bytes sent"),
    "SAI_PORT_STAT_IF_IN_UCAST_PKTS": ("sonic_port_in_unicast_packets", "unicast packets received"),
    "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": ("sonic_port_out_unicast_packets", "unicast packets sent"),
    "SAI_PORT_STAT_IF_IN_ERRORS": ("sonic_port_in_errors", "packets received with errors"),
    "SAI_PORT_STAT_IF_OUT_ERRORS": ("sonic_port_out_errors", "packets not sent for errors"),
    "SAI_PORT_STAT_IF_IN_DISCARDS": ("sonic_port_in_discards", "packets received and discarded"),
    "SAI_PORT_STAT_IF_OUT_DISCARDS": ("sonic_port_out_discards", "packets discarded before sending"),
}
# COUNTERS_DB COUNTERS:<queue oid> (subscribed as COUNTERS/Ethernet*/Queues)
QUEUE_COUNTERS: dict[str, tuple[str, str]] = {
    "SAI_QUEUE_STAT_PACKETS": ("sonic_queue_packets", "packets sent from the queue"),
    "SAI_QUEUE_STAT_BYTES": ("sonic_queue_bytes", "bytes sent from the queue"),
    "SAI_QUEUE_STAT_DROPPED_PACKETS": ("sonic_queue_dropped_packets", "packets the queue dropped"),
}
QUEUE_GAUGES: dict[str, tuple[str, str]] = {
    "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": ("sonic_queue_watermark_bytes", "the queue's peak occupancy"),
}


def catalog() -> list[Metric]:
    """Every metric the collector can serve."""
    out = [Metric(name, "counter", text, PORT_LABELS, f"COUNTERS_DB COUNTERS:<port> {sai}")
           for sai, (name, text) in PORT_COUNTERS.items()]
    out += [Metric(name, "counter", text, QUEUE_LABELS, f"COUNTERS_DB COUNTERS:<queue> {sai}")
            for sai, (name, text) in QUEUE_COUNTERS.items()]
    out += [Metric(name, "gauge", text, QUEUE_LABELS, f"COUNTERS_DB COUNTERS:<queue> {sai}")
            for sai, (name, text) in QUEUE_GAUGES.items()]
    out += [
        Metric("sonic_port_oper_status", "gauge", "1 when the port is operationally up, 0 when down",
               PORT_LABELS, "STATE_DB PORT_TABLE netdev_oper_status"),
        Metric("sonic_port_admin_status", "gauge", "1 when the port is admin up, 0 when admin down",
               PORT_LABELS, "STATE_DB PORT_TABLE admin_status"),
        Metric("sonic_port_flap_count", "gauge", "changes of the port's oper status since the switch started",
               PORT_LABELS, "APPL_DB PORT_TABLE flap_count"),
        Metric("sonic_port_mtu_bytes", "gauge", "the port's MTU", PORT_LABELS, "STATE_DB PORT_TABLE mtu"),
        Metric("sonic_bgp_session_established", "gauge", "1 when the BGP session is Established, else 0",
               SESSION_LABELS, "STATE_DB NEIGH_STATE_TABLE state"),
        Metric("sonic_route_nexthops", "gauge", "next hops of the route (its ECMP width)",
               ("switch", "role", "rail", "prefix"), "APPL_DB ROUTE_TABLE nexthop"),
        Metric("twin_telemetry_switch_up", "gauge", "1 while the collector's gNMI subscriptions to the switch run",
               ("switch", "role", "rail"), "the collector"),
        Metric("twin_event_timestamp_seconds", "gauge",
               "when a drill's or a traffic run's instant happened (inject, detect, converge, restore, start, end)",
               ("source", "name", "target", "phase", "run"), "the lab's events.jsonl"),
        Metric("twin_drill_active", "gauge", "1 while a drill's fault is in place, 0 after",
               ("name", "target", "run"), "the lab's events.jsonl"),
    ]
    return out


@dataclass
class SwitchTables:
    """What one switch's subscriptions last said: (database, table) -> key -> fields."""

    tables: dict[tuple[str, str], dict[str, dict[str, str]]] = field(default_factory=dict)
    up: bool = False

    def table(self, db: str, table: str) -> dict[str, dict[str, str]]:
        return self.tables.get((db, table), {})


@dataclass(frozen=True)
class Sample:
    metric: str
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class PortLabels:
    """The labels of each switch and its ports, from the plan."""

    switch: dict[str, dict[str, str]]               # switch -> switch, role, rail
    port: dict[tuple[str, str], dict[str, str]]     # (switch, port) -> + port, peer, peer_port

    @classmethod
    def of(cls, plan: Plan) -> PortLabels:
        switch, port = {}, {}
        for node in plan.switches:
            base = {"switch": node.name, "role": node.role, "rail": "" if node.rail is None else str(node.rail)}
            switch[node.name] = base
            for iface in node.interfaces:
                port[(node.name, iface.name)] = {**base, "port": iface.name, "peer": iface.peer_node,
                                                 "peer_port": iface.peer_iface}
        return cls(switch, port)

    def of_port(self, switch: str, port: str) -> dict[str, str]:
        return self.port.get((switch, port)) or {**self.switch[switch], "port": port, "peer": "", "peer_port": ""}


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


UP_DOWN = {"up": 1.0, "down": 0.0}


def switch_samples(name: str, tables: SwitchTables, labels: PortLabels,
                   peer_names: Mapping[str, str]) -> Iterator[Sample]:
    """Every sample of one switch. `peer_names`: a BGP neighbor's address -> its node's name."""
    base = labels.switch[name]
    yield Sample("twin_telemetry_switch_up", base, 1.0 if tables.up else 0.0)
    for port, stats in tables.table("COUNTERS_DB", "COUNTERS").items():
        for sai, (metric, _) in PORT_COUNTERS.items():
            if (value := _number(stats.get(sai))) is not None:
                yield Sample(metric, labels.of_port(name, port), value)
    for key, stats in tables.table("COUNTERS_DB", "Queues").items():
        port, _, queue = key.rpartition(":")
        for sai, (metric, _) in (QUEUE_COUNTERS | QUEUE_GAUGES).items():
            if (value := _number(stats.get(sai))) is not None:
                yield Sample(metric, {**labels.of_port(name, port), "queue": queue}, value)
    for port, fields in tables.table("STATE_DB", "PORT_TABLE").items():
        if not port.startswith("Ethernet"):
            continue
        port_labels = labels.of_port(name, port)
        if fields.get("netdev_oper_status") in UP_DOWN:
            yield Sample("sonic_port_oper_status", port_labels, UP_DOWN[fields["netdev_oper_status"]])
        if fields.get("admin_status") in UP_DOWN:
            yield Sample("sonic_port_admin_status", port_labels, UP_DOWN[fields["admin_status"]])
        if (value := _number(fields.get("mtu"))) is not None:
            yield Sample("sonic_port_mtu_bytes", port_labels, value)
    for port, fields in tables.table("APPL_DB", "PORT_TABLE").items():   # portsorch's
        if port.startswith("Ethernet") and (value := _number(fields.get("flap_count"))) is not None:
            yield Sample("sonic_port_flap_count", labels.of_port(name, port), value)
    for peer_ip, fields in tables.table("STATE_DB", "NEIGH_STATE_TABLE").items():
        yield Sample("sonic_bgp_session_established",
                     {**base, "peer_ip": peer_ip, "peer": peer_names.get(peer_ip, "")},
                     1.0 if fields.get("state") == "Established" else 0.0)
    for prefix, fields in tables.table("APPL_DB", "ROUTE_TABLE").items():
        hops = [h for h in fields.get("nexthop", "").split(",") if h and h not in ("0.0.0.0", "::")]
        yield Sample("sonic_route_nexthops", {**base, "prefix": prefix}, float(len(hops)))
