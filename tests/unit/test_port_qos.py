"""A port's QoS as qosorch resolves CONFIG_DB (twin.stages.port_qos)."""

from __future__ import annotations

from typing import Any

from twin.model.hwsku import load as load_sku
from twin.stages.port_qos import DEFAULT_SCHEDULER, Scheduler, lossy_roce, port_qos, ports_qos
from twin.stages.render.qos import qos_tables

Db = dict[str, dict[str, Any]]


def twin_qos(*ports: str) -> Db:
    """What twin renders for a switch's ports (DSCP 26 -> TC 3, 24 -> 4, 46 -> 5, 48 -> 6, the rest -> 1)."""
    db = qos_tables(dict.fromkeys(ports, "400000"), load_sku("Arista-7060X6-64PE-B-O128"))
    db["PORT"] = {p: {"speed": "400000", "mtu": "9100"} for p in ports}
    return db


def test_twin_s_rendered_maps_resolve_per_dscp_and_per_queue() -> None:
    qos = port_qos(twin_qos("Ethernet0"), "Ethernet0")
    assert qos is not None
    assert [qos.queue_of(d) for d in (26, 24, 46, 48, 0, 63)] == [3, 4, 5, 6, 1, 1]
    assert qos.other_queue == 0             # not IP: traffic class 0, queue 0
    assert qos.lossless == {3, 4}
    assert qos.schedulers[3] == Scheduler("DWRR", 15) and qos.schedulers[0] == Scheduler("DWRR", 14)
    assert qos.schedulers[7] == qos.schedulers[9] == DEFAULT_SCHEDULER   # no QUEUE row: WRR, weight 1


def test_a_port_without_maps_has_no_qos() -> None:
    db = twin_qos("Ethernet0")
    db["PORT"]["Ethernet4"] = {"speed": "400000"}
    assert port_qos(db, "Ethernet4") is None
    assert list(ports_qos(db)) == ["Ethernet0"]
    db["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] = "MISSING"     # a map that does not exist is not applied
    qos = port_qos(db, "Ethernet0")
    assert qos is not None and set(qos.dscp_queue) == {0}            # TC_TO_QUEUE_MAP alone: everything TC 0


def test_unmapped_dscps_and_tcs_take_the_sai_s_defaults() -> None:
    db: Db = {"PORT": {"Ethernet0": {}}, "DSCP_TO_TC_MAP": {"M": {"10": "5", "11": "12"}},
              "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "M"}}}
    qos = port_qos(db, "Ethernet0")
    assert qos is not None
    assert qos.queue_of(10) == 5       # no TC_TO_QUEUE_MAP: TC n -> queue n
    assert qos.queue_of(11) == 0       # TC 12 has no queue 12 (queues are 0-9)
    assert qos.queue_of(12) == 0       # not in the map: TC 0


def test_global_map_comma_keys_and_queue_ranges() -> None:
    db: Db = {"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
              "DSCP_TO_TC_MAP": {"G": {"26": "3"}, "P": {"26": "2"}},
              "TC_TO_QUEUE_MAP": {"T": {"3": "7"}},
              "SCHEDULER": {"strict": {"type": "STRICT"}, "w": {"type": "DWRR", "weight": "40", "pir": "1000"}},
              "QUEUE": {"Ethernet0,Ethernet4|6-7": {"scheduler": "strict"}, "Ethernet4|0": {"scheduler": "w"}},
              "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "G"},
                               "Ethernet0,Ethernet4": {"tc_to_queue_map": "T", "pfc_enable": "3"},
                               "Ethernet8": {"dscp_to_tc_map": "P"}}}
    e0, e4, e8 = (port_qos(db, p) for p in ("Ethernet0", "Ethernet4", "Ethernet8"))
    assert e0 is not None and e4 is not None and e8 is not None
    assert e0.queue_of(26) == e4.queue_of(26) == 7      # the global DSCP map, the port's TC map
    assert e8.queue_of(26) == 2                         # the port's own DSCP map wins
    assert e0.schedulers[6] == e0.schedulers[7] == Scheduler("STRICT") and e0.schedulers[5] == DEFAULT_SCHEDULER
    assert e4.schedulers[0] == Scheduler("DWRR", 40, pir=1000)
    assert e0.lossless == {3}                           # no pfc_to_queue_map: priority 3 is queue 3


def test_pfc_priorities_reach_their_queues_through_the_pfc_map() -> None:
    db = twin_qos("Ethernet0")
    db["MAP_PFC_PRIORITY_TO_QUEUE"]["ROCE"] = {"3": "5", "4": "4"}
    qos = port_qos(db, "Ethernet0")
    assert qos is not None and qos.lossless == {5, 4}


def test_roce_in_a_lossy_queue_is_found_per_port() -> None:
    db = twin_qos("Ethernet0", "Ethernet4")
    assert lossy_roce(db, 26) == []
    db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"
    found = lossy_roce(db, 26)
    assert [(f.port, f.tc, f.queue, sorted(f.lossless)) for f in found] == [
        ("Ethernet0", 1, 1, [3, 4]), ("Ethernet4", 1, 1, [3, 4])]
    db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "3"
    db["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = "4"
    assert [(f.port, f.queue) for f in lossy_roce(db, 26)] == [("Ethernet4", 3)]


def test_traffic_classes_reach_their_priority_groups_and_queues() -> None:
    qos = port_qos(twin_qos("Ethernet0"), "Ethernet0")
    assert qos is not None
    assert [qos.tc_of(d) for d in (26, 24, 48, 0)] == [3, 4, 6, 1]
    assert [qos.pg_of_tc(t) for t in range(8)] == [0, 0, 0, 3, 4, 0, 0, 0]   # only the lossless TCs own a PG
    assert [qos.queue_of_tc(t) for t in (3, 4, 15, 16)] == [3, 4, 0, 0]      # TC 15 has no queue 15; 16 is none
    assert qos.pfc == {3, 4}
    db: Db = {"PORT": {"Ethernet0": {}}, "DSCP_TO_TC_MAP": {"M": {"26": "3"}},
              "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "M", "pfc_enable": "3"}}}
    bare = port_qos(db, "Ethernet0")
    assert bare is not None and bare.pg_of_tc(3) == 0 and bare.queue_of_tc(3) == 3   # no PG map: PG 0
