"""The collector's metrics: names and labels from what a switch's subscriptions said, and how a gNMI
notification lands in its tables (twin.telemetry.metrics, subscriber.apply_update)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2

from twin.lab.events import LabEvent
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology
from twin.telemetry.collector import event_samples
from twin.telemetry.metrics import PortLabels, SwitchTables, catalog, switch_samples
from twin.telemetry.subscriber import Subscription, apply_update

PLAN = plan_topology(load_topology(Path(__file__).resolve().parents[1] / "integration" / "data" / "mini.yaml"))


def _notification(path: str, value: Any, deletes: tuple[tuple[str, ...], ...] = ()) -> gnmi_pb2.Notification:
    return gnmi_pb2.Notification(
        update=[gnmi_pb2.Update(path=gnmi_path_generator(path), val=gnmi_pb2.TypedValue(
            json_ietf_val=json.dumps(value).encode()))] if value is not None else [],
        delete=[gnmi_pb2.Path(elem=[gnmi_pb2.PathElem(name=n) for n in d]) for d in deletes])


def test_every_metric_is_named_as_prometheus_wants_with_its_labels() -> None:
    names = [m.name for m in catalog()]
    assert len(names) == len(set(names))
    for metric in catalog():
        assert metric.name.startswith(("sonic_", "twin_")) and not metric.name.endswith("_total")
    oper = next(m for m in catalog() if "oper_status" in m.name)
    assert {"switch", "port", "peer", "role", "rail"} <= set(oper.labels)
    queue = next(m for m in catalog() if m.name == "sonic_queue_packets")
    assert "queue" in queue.labels and queue.kind == "counter"


def test_a_sample_replaces_the_counters_under_sonic_names_not_aliases() -> None:
    tables = SwitchTables()
    sub = Subscription("COUNTERS_DB", "COUNTERS", "COUNTERS/Ethernet*", "COUNTERS_DB", 5)
    stats = {"SAI_PORT_STAT_IF_IN_OCTETS": "100", "SAI_PORT_STAT_IF_OUT_OCTETS": "7"}
    apply_update(tables, sub, _notification("COUNTERS/Ethernet*", {"etp1": stats, "etp2": stats}),
                 {"etp1": "Ethernet0"})
    apply_update(tables, sub, _notification("COUNTERS/Ethernet*", {"etp1": stats}), {"etp1": "Ethernet0"})
    assert set(tables.table("COUNTERS_DB", "COUNTERS")) == {"Ethernet0"}   # etp2 went with the next sample


def test_on_change_updates_deletes_and_whole_tables() -> None:
    tables = SwitchTables()
    sub = Subscription("APPL_DB", "ROUTE_TABLE", "/sonic-db:APPL_DB/localhost/ROUTE_TABLE")
    root = "/sonic-db:APPL_DB/localhost/ROUTE_TABLE"
    apply_update(tables, sub, _notification(root, {"10.1.0.1": {"nexthop": "10.0.0.64"},
                                                   "10.2.0.0/31": {"nexthop": "10.0.0.64,10.0.0.66"}}), {})
    apply_update(tables, sub, _notification(f"{root}/10.1.0.1", {"nexthop": "10.0.0.66"}), {})
    apply_update(tables, sub, _notification(root, None, deletes=(("APPL_DB", "localhost", "ROUTE_TABLE",
                                                                   "10.2.0.0/31"),)), {})
    assert tables.table("APPL_DB", "ROUTE_TABLE") == {"10.1.0.1": {"nexthop": "10.0.0.66"}}


def test_samples_carry_the_plans_labels() -> None:
    labels = PortLabels.of(PLAN)
    leaf = PLAN.node("leaf1")
    uplink = next(i for i in leaf.interfaces if i.role == "fabric")
    tables = SwitchTables(up=True)
    tables.tables[("COUNTERS_DB", "COUNTERS")] = {uplink.name: {"SAI_PORT_STAT_IF_IN_OCTETS": "42"}}
    tables.tables[("STATE_DB", "PORT_TABLE")] = {uplink.name: {"netdev_oper_status": "down", "flap_count": "9"},
                                                 "PortConfigDone": {"count": "3"}}
    tables.tables[("APPL_DB", "PORT_TABLE")] = {uplink.name: {"oper_status": "down", "flap_count": "3"}}
    tables.tables[("STATE_DB", "NEIGH_STATE_TABLE")] = {"10.0.0.64": {"state": "Active"}}
    tables.tables[("COUNTERS_DB", "Queues")] = {f"{uplink.name}:3": {"SAI_QUEUE_STAT_PACKETS": "9"}}
    samples = {(s.metric, s.labels.get("port", s.labels.get("peer_ip", ""))): s
               for s in switch_samples("leaf1", tables, labels, {"10.0.0.64": "spine1"})}
    octets = samples[("sonic_port_in_octets", uplink.name)]
    assert octets.value == 42 and octets.labels["peer"] == uplink.peer_node and octets.labels["role"] == "leaf"
    assert samples[("sonic_port_oper_status", uplink.name)].value == 0
    assert samples[("sonic_port_flap_count", uplink.name)].value == 3
    assert samples[("sonic_queue_packets", uplink.name)].labels["queue"] == "3"
    session = samples[("sonic_bgp_session_established", "10.0.0.64")]
    assert session.value == 0 and session.labels["peer"] == "spine1"
    assert ("sonic_port_oper_status", "PortConfigDone") not in samples


def test_drill_events_mark_the_fault_active_until_its_restore() -> None:
    run = "link-down@1"
    inject = LabEvent(10.0, "drill", "link-down", "leaf1:Ethernet128", "inject", run)
    restore = LabEvent(12.5, "drill", "link-down", "leaf1:Ethernet128", "restore", run)
    active = [s for s in event_samples([inject]) if s.metric == "twin_drill_active"]
    assert [s.value for s in active] == [1.0]
    samples = event_samples([inject, restore])
    assert [s.value for s in samples if s.metric == "twin_drill_active"] == [0.0]
    assert sorted(s.value for s in samples if s.metric == "twin_event_timestamp_seconds") == [10.0, 12.5]


def test_the_telemetry_page_lists_every_metric() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "telemetry.md").read_text(encoding="utf-8")
    for metric in catalog():
        name = metric.name + ("_total" if metric.kind == "counter" else "")
        assert f"| `{name}` | {metric.kind} |" in page, f"docs/telemetry.md does not list {name}"
