"""The `tc -b` lines a switch's egress queues are programmed with, from CONFIG_DB (twin.switch.config.qdisc)."""

from __future__ import annotations

import copy
from typing import Any

from test_port_qos import twin_qos

from twin.stages.port_qos import port_qos
from twin.switch.config.qdisc import egress, qdisc_changes, qdisc_lines, qdisc_reconcile, queue_of_leaf

Db = dict[str, dict[str, Any]]
SHARED = "rate 8bit ceil 4000000000bit cburst 500000b prio 0"


def test_a_port_s_whole_tree_from_twin_s_rendered_qos() -> None:
    lines = qdisc_lines(twin_qos("Ethernet0"), {"Ethernet0": "Ethernet0"})
    dev = "dev Ethernet0"
    assert lines == [
        f"qdisc add {dev} root handle 1: htb default 10",
        f"class replace {dev} parent 1: classid 1:1 htb rate 4000000000bit ceil 4000000000bit burst 500000b "
        "cburst 500000b quantum 500000",
        # DWRR 14 for queues 0-2 and 5-6, 15 for the lossless 3-4, quantum = weight x MTU; 7-9 WRR 1
        *(f"class replace {dev} parent 1:1 classid 1:1{q} htb {SHARED} quantum {w * 9100}"
          for q, w in enumerate((14, 14, 14, 15, 15, 14, 14, 1, 1, 1))),
        *(f"qdisc replace {dev} parent 1:1{q} handle 1{q}: pfifo limit 1000" for q in range(10)),
        f"filter add {dev} parent 1: protocol ip prio 1 u32 match ip dsfield 0x68 0xfc flowid 1:13",   # 26
        f"filter add {dev} parent 1: protocol ip prio 1 u32 match ip dsfield 0x60 0xfc flowid 1:14",   # 24
        f"filter add {dev} parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 1:15",   # 46
        f"filter add {dev} parent 1: protocol ip prio 1 u32 match ip dsfield 0xc0 0xfc flowid 1:16",   # 48
        f"filter add {dev} parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0x68 0xfc flowid 1:13",
        f"filter add {dev} parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0x60 0xfc flowid 1:14",
        f"filter add {dev} parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0xb8 0xfc flowid 1:15",
        f"filter add {dev} parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0xc0 0xfc flowid 1:16",
        # every other DSCP is TC 1, queue 1; what is not IP stays in htb's default, queue 0
        f"filter add {dev} parent 1: protocol ip prio 3 u32 match u32 0 0 flowid 1:11",
        f"filter add {dev} parent 1: protocol ipv6 prio 4 u32 match u32 0 0 flowid 1:11",
    ]


def test_the_kernel_names_of_wired_ports_only() -> None:
    db = twin_qos("Ethernet0", "Ethernet4")
    lines = qdisc_lines(db, {"Ethernet4": "eth4"})
    assert {line.split()[3] for line in lines} == {"eth4"}


def test_dscp_blocks_share_a_filter_and_other_protocols_follow_tc_0() -> None:
    db: Db = {"PORT": {"Ethernet0": {"speed": "100000"}},
              "DSCP_TO_TC_MAP": {"M": {**{str(d): "2" for d in range(64)}, **{str(d): "5" for d in range(8, 16)},
                                       "17": "5"}},
              "TC_TO_QUEUE_MAP": {"T": {"0": "6", "2": "2", "5": "5"}},
              "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "M", "tc_to_queue_map": "T"}}}
    qos = port_qos(db, "Ethernet0")
    assert qos is not None
    filters = egress(qos, db["PORT"]["Ethernet0"]).filters
    assert filters == (
        "parent 1: protocol ip prio 1 u32 match ip dsfield 0x20 0xe0 flowid 1:15",       # 8-15: one block
        "parent 1: protocol ip prio 1 u32 match ip dsfield 0x44 0xfc flowid 1:15",       # 17
        "parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0x20 0xe0 flowid 1:15",
        "parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0x44 0xfc flowid 1:15",
        "parent 1: protocol ip prio 3 u32 match u32 0 0 flowid 1:12",
        "parent 1: protocol ipv6 prio 4 u32 match u32 0 0 flowid 1:12",
        "parent 1: protocol all prio 5 u32 match u32 0 0 flowid 1:16",                    # not IP: TC 0 -> 6
    )


def test_strict_queues_first_the_higher_before_the_lower_and_shaping_scaled() -> None:
    db = twin_qos("Ethernet0")
    db["SCHEDULER"]["strict"] = {"type": "STRICT"}
    db["SCHEDULER"]["shaped"] = {"type": "DWRR", "weight": "20", "cir": "125000000", "pir": "2500000000"}
    db["QUEUE"]["Ethernet0|6"] = {"scheduler": "strict"}
    db["QUEUE"]["Ethernet0|3"] = {"scheduler": "strict"}
    db["QUEUE"]["Ethernet0|1"] = {"scheduler": "shaped"}
    qos = port_qos(db, "Ethernet0")
    assert qos is not None
    classes = egress(qos, db["PORT"]["Ethernet0"]).classes
    assert (classes[6].prio, classes[3].prio) == (0, 1)           # queue 6 before queue 3
    assert {classes[q].prio for q in (0, 1, 2, 4, 5, 7, 8, 9)} == {2}   # the shared ones after both
    # cir 1 Gbit/s, pir 20 Gbit/s on a 400G port: 10 Mbit/s and 200 Mbit/s at the scale of 1/100
    assert (classes[1].rate, classes[1].ceil, classes[1].quantum) == (10_000_000, 200_000_000, 20 * 9100)
    assert (classes[3].rate, classes[3].ceil, classes[3].quantum) == (8, 4_000_000_000, 9100)


def test_a_remapped_dscp_replaces_the_filters_alone() -> None:
    old = twin_qos("Ethernet0")
    new = copy.deepcopy(old)
    new["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"
    lines = qdisc_changes(old, new)
    assert lines[0] == "filter del dev Ethernet0 parent 1:"
    assert all(line.startswith("filter add dev Ethernet0 ") for line in lines[1:])
    assert not any("0x68" in line for line in lines)      # DSCP 26 now goes with the catch-all, queue 1
    assert len(lines) == 1 + 8
    assert qdisc_changes(new, new) == []


def test_a_scheduler_change_replaces_its_classes_in_place() -> None:
    old = twin_qos("Ethernet0")
    new = copy.deepcopy(old)
    new["SCHEDULER"]["scheduler.1"]["weight"] = "30"       # the lossless queues' scheduler
    assert qdisc_changes(old, new) == [
        f"class replace dev Ethernet0 parent 1:1 classid 1:1{q} htb {SHARED} quantum {30 * 9100}" for q in (3, 4)]


def test_a_port_losing_its_maps_loses_its_tree_and_gaining_them_gets_one() -> None:
    old = twin_qos("Ethernet0", "Ethernet4")
    new = copy.deepcopy(old)
    del new["PORT_QOS_MAP"]["Ethernet4"]
    assert qdisc_changes(old, new) == ["qdisc del dev Ethernet4 root"]
    only4 = {**old, "PORT": {"Ethernet4": old["PORT"]["Ethernet4"]}}
    assert qdisc_changes(new, old) == qdisc_lines(only4)
    assert qdisc_lines({"PORT": old["PORT"]}) == []       # no QoS maps: nothing programmed


def test_reconcile_keeps_existing_roots_and_their_counters() -> None:
    db = twin_qos("Ethernet0", "Ethernet4", "Ethernet8")
    del db["PORT_QOS_MAP"]["Ethernet8"]
    lines = qdisc_reconcile(db, {"Ethernet0", "Ethernet8", "eth0"})
    assert "qdisc del dev Ethernet8 root" in lines and not any("eth0" in line for line in lines)
    assert "qdisc add dev Ethernet4 root handle 1: htb default 10" in lines
    assert not any(line.startswith("qdisc add dev Ethernet0") for line in lines)
    assert "filter del dev Ethernet0 parent 1:" in lines       # its filters made anew, classes replaced
    assert qdisc_reconcile(db, {"Ethernet0"}, refresh=False) == qdisc_lines(
        {**db, "PORT": {"Ethernet4": db["PORT"]["Ethernet4"]}})


def test_leaves_name_their_queue() -> None:
    assert [queue_of_leaf(0x10000 | minor) for minor in (0x10, 0x13, 0x19, 0x1A, 0x1)] == [0, 3, 9, None, None]
    assert queue_of_leaf(0x20013) is None
