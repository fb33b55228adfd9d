"""COUNTERS_DB's queue and PG maps, the queues' counters from a recorded qdisc dump, their watermarks
(twin.switch.state.queues), and the netlink decoding of that dump (twin.switch.state.rtnl)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from twin.switch.state import queues, rtnl
from twin.switch.state.producers import PFC_COUNTERS, counter_row, port_oid

DUMP = json.loads((Path(__file__).parent / "data" / "queues" / "qdisc_dump.json").read_text())


def _recorded() -> tuple[list[rtnl.QdiscStats], dict[str, Any]]:
    msgs = [q for chunk in DUMP["netlink"] for _, _, q in rtnl.qdisc_stats(base64.b64decode(chunk)) if q is not None]
    return msgs, {q.get("parent", "root"): q for q in DUMP["tc"]}


def test_the_netlink_dump_reads_as_tc_reads_it() -> None:
    msgs, by_parent = _recorded()
    ours = [q for q in msgs if q.ifindex == DUMP["ifindex"]["qa"]]
    assert len(ours) == len(by_parent) == 11                      # the htb root and ten queues
    for q in ours:
        tc = by_parent["root" if q.parent == 0xFFFFFFFF else f"{q.parent >> 16:x}:{q.parent & 0xFFFF:x}"]
        assert (q.kind, q.packets, q.bytes, q.drops, q.backlog) == \
            (tc["kind"], tc["packets"], tc["bytes"], tc["drops"], tc["backlog"])
    assert sum(q.drops for q in ours if q.kind == "pfifo") > 0


def _maps(*ports: str) -> dict[str, dict[str, str]]:
    return queues.queue_maps({p: port_oid(p) for p in ports})


def test_the_queue_counters_written_from_the_recorded_dump() -> None:
    msgs, _ = _recorded()
    leaves = queues.leaf_stats(msgs, {v: k for k, v in DUMP["ifindex"].items()})
    by_handle = {q["handle"]: q for q in DUMP["tc"]}
    assert sorted(leaves) == ["qa"] and sorted(leaves["qa"]) == list(range(10))
    maps = queues.queue_maps({"qa": "oid:0x1000000000000"})
    poller = queues.QueuePoller(now=0.0)
    written = poller.poll(["qa"], {}, leaves, 1.0)
    rows = written.counters
    q3 = maps["COUNTERS_QUEUE_NAME_MAP"]["qa:3"]
    lossless = by_handle["13:"]
    assert lossless["drops"] > 0 and lossless["backlog"] > 0          # the burst overflowed RoCE's queue
    assert rows[q3] == {"SAI_QUEUE_STAT_PACKETS": str(lossless["packets"]),
                        "SAI_QUEUE_STAT_BYTES": str(lossless["bytes"]),
                        "SAI_QUEUE_STAT_DROPPED_PACKETS": str(lossless["drops"]),
                        "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": str(lossless["backlog"])}
    for q, handle in ((1, "11:"), (6, "16:"), (0, "10:")):
        oid = maps["COUNTERS_QUEUE_NAME_MAP"][f"qa:{q}"]
        assert rows[oid]["SAI_QUEUE_STAT_PACKETS"] == str(by_handle[handle]["packets"])
        assert rows[oid]["SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"] == str(by_handle[handle]["backlog"])
    assert len(rows) == 10                                              # the unicast queues; not MC10-19
    backlogs = {oid: row["SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"] for oid, row in rows.items() if row[
        "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"] != "0"}
    assert {t: {o: r["SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"] for o, r in w.items()}
            for t, w in written.watermarks.items()} == dict.fromkeys(queues.WATERMARK_TABLES, backlogs)
    assert poller.poll(["qa"], {}, leaves, 2.0).counters == {}          # nothing changed: nothing written


def test_the_maps_name_sonic_vs_s_queues_and_priority_groups() -> None:
    maps = _maps("Ethernet0", "Ethernet128")
    names = maps["COUNTERS_QUEUE_NAME_MAP"]
    assert len(names) == 40 and len(maps["COUNTERS_PG_NAME_MAP"]) == 16
    q3, mc10 = names["Ethernet128:3"], names["Ethernet128:10"]
    assert q3 == "oid:0x15000080000003"
    assert maps["COUNTERS_QUEUE_TYPE_MAP"][q3] == "SAI_QUEUE_TYPE_UNICAST"
    assert maps["COUNTERS_QUEUE_TYPE_MAP"][mc10] == "SAI_QUEUE_TYPE_MULTICAST"
    assert maps["COUNTERS_QUEUE_INDEX_MAP"][mc10] == "10"
    assert maps["COUNTERS_QUEUE_PORT_MAP"][q3] == port_oid("Ethernet128") == "oid:0x1000000000080"
    pg = maps["COUNTERS_PG_NAME_MAP"]["Ethernet0:7"]
    assert pg == "oid:0x1a000000000007" and maps["COUNTERS_PG_INDEX_MAP"][pg] == "7"
    assert len(set(names.values()) | set(maps["COUNTERS_PG_NAME_MAP"].values())) == 56   # every oid its own


def test_create_only_config_db_buffers_keeps_the_configured_queues_alone() -> None:
    keys = ["Ethernet0|0-2", "Ethernet0|3-4", "Ethernet4,Ethernet8|5"]
    which = queues.enabled(True, keys, 20)
    assert which == {"Ethernet0": frozenset(range(5)), "Ethernet4": frozenset({5}), "Ethernet8": frozenset({5})}
    maps = queues.queue_maps({"Ethernet0": "oid:0x1", "Ethernet4": "oid:0x2", "Ethernet12": "oid:0x3"}, which,
                             queues.enabled(True, ["Ethernet0|3-4"], 8))
    assert sorted(maps["COUNTERS_QUEUE_NAME_MAP"]) == [*(f"Ethernet0:{q}" for q in range(5)), "Ethernet4:5"]
    assert sorted(maps["COUNTERS_PG_NAME_MAP"]) == ["Ethernet0:3", "Ethernet0:4"]
    fewer = queues.queue_maps({"Ethernet0": "oid:0x1"}, queues.enabled(True, ["Ethernet0|0-2"], 20))
    assert len(fewer["COUNTERS_QUEUE_NAME_MAP"]) == 3
    assert queues.enabled(False, keys, 20) is None


def test_a_port_without_a_tree_counts_everything_in_queue_0() -> None:
    maps = _maps("Ethernet0")
    rows = queues.QueuePoller(0.0).poll(["Ethernet0"], {"Ethernet0": {"tx_packets": 70, "tx_bytes": 7000,
                                                                     "tx_dropped": 2}}, {}, 1.0).counters
    by_index = {int(maps["COUNTERS_QUEUE_INDEX_MAP"][oid]): row for oid, row in rows.items()}
    assert by_index[0] == {"SAI_QUEUE_STAT_PACKETS": "70", "SAI_QUEUE_STAT_BYTES": "7000",
                           "SAI_QUEUE_STAT_DROPPED_PACKETS": "2", "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "0"}
    assert all(by_index[q]["SAI_QUEUE_STAT_PACKETS"] == "0" for q in range(1, 10))


def test_multicast_queues_and_priority_groups_count_nothing() -> None:
    maps = _maps("Ethernet0")
    idle = queues.idle_rows(maps)
    assert len(idle) == 10 + 8
    pg = maps["COUNTERS_PG_NAME_MAP"]["Ethernet0:3"]
    assert idle[pg] == {"SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS": "0",
                        "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES": "0",
                        "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES": "0"}
    assert queues.idle_watermarks(maps)[maps["COUNTERS_QUEUE_NAME_MAP"]["Ethernet0:15"]] == \
        {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "0"}
    assert len(queues.idle_watermarks(maps)) == 20 + 8                  # every queue starts at 0


def test_pfc_counters_stay_zero_in_the_port_s_row() -> None:
    row = counter_row({"tx_packets": 5})
    assert {f: row[f] for f in PFC_COUNTERS} == dict.fromkeys(PFC_COUNTERS, "0") and len(PFC_COUNTERS) == 16
    assert "SAI_PORT_STAT_PFC_3_RX_PKTS" in row and "SAI_PORT_STAT_PFC_7_TX_PKTS" in row


def test_a_port_s_out_discards_count_its_queues_drops() -> None:
    assert counter_row({"tx_dropped": 2}, queue_drops=37)["SAI_PORT_STAT_IF_OUT_DISCARDS"] == "39"
    assert counter_row({"tx_dropped": 2})["SAI_PORT_STAT_IF_OUT_DISCARDS"] == "2"


def test_watermarks_keep_their_peaks_and_the_periodic_one_starts_again() -> None:
    poller = queues.QueuePoller(now=0.0)
    q3 = queues.queue_oid("Ethernet0", 3)

    def seen(backlog: int, now: float) -> dict[str, str]:
        tree = {3: (10, 10_000, 0, backlog)}
        out = poller.poll(["Ethernet0"], {}, {"Ethernet0": tree}, now)
        return {table: rows[q3][queues.WATERMARK] for table, rows in out.watermarks.items() if q3 in rows}

    assert seen(1500, 1) == dict.fromkeys(queues.WATERMARK_TABLES, "1500")
    assert seen(0, 2) == {}                                   # below the peaks: nothing rewritten
    assert seen(900, queues.PERIODIC_S + 1) == {"PERIODIC_WATERMARKS": "900"}   # the period started again
    assert poller.peaks()["USER_WATERMARKS"] == {q3: {queues.WATERMARK: "1500"}}
    assert poller.peaks()["PERIODIC_WATERMARKS"] == {q3: {queues.WATERMARK: "900"}}


def test_only_the_queues_the_maps_hold_are_written() -> None:
    which = queues.enabled(True, ["Ethernet0|3"], queues.QUEUES_PER_PORT)
    tree = {q: (q + 1, 100, 0, 0) for q in range(10)}
    rows = queues.QueuePoller(0.0).poll(["Ethernet0"], {}, {"Ethernet0": tree}, 1.0, which).counters
    assert list(rows) == [queues.queue_oid("Ethernet0", 3)]
