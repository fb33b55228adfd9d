"""`twin traffic`'s RoCE what-ifs on hand-made paths through the default lab, judged by the configs twin
generates for it (configs/default): RoCE's class on every hop (twin.traffic.roce) and a 2:1 incast
(twin.traffic.incast)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from twin.model.plan import Plan
from twin.model.traffic import Gpu, TrafficReport
from twin.report.traffic import traffic_markdown
from twin.stages.lab_file import load_lab
from twin.stages.roce_class import SwitchClass
from twin.traffic import patterns
from twin.traffic.collectives import schedule
from twin.traffic.gpus import lab_gpus
from twin.traffic.incast import incast_queues
from twin.traffic.resolve import Hop
from twin.traffic.resolve import Path as FlowPath
from twin.traffic.roce import lossless_breaks, roce_what_if

REPO = Path(__file__).resolve().parents[2]
MIB = 2**20


@pytest.fixture(scope="module")
def clos() -> Plan:
    return load_lab(REPO / "labs" / "default.yaml").plan


@pytest.fixture(scope="module")
def configs() -> dict[str, dict[str, Any]]:
    files = sorted((REPO / "configs" / "default").glob("*/config_db.json"))
    return {p.parent.name: json.loads(p.read_text()) for p in files}


def _via(plan: Plan, src: Gpu, spine: str, dst: Gpu) -> FlowPath:
    """src's NIC -> its leaf -> `spine` -> dst's leaf -> dst's NIC, over the plan's cabling."""
    def link(a: str, b: str) -> tuple[str, str, str, str]:
        iface = next(i for i in plan.node(a).interfaces if i.peer_node == b)
        return (a, iface.kernel, b, plan.node(b).iface(iface.peer_iface).kernel)
    hops = [(src.server, src.nic, src.leaf, src.leaf_port), link(src.leaf, spine), link(spine, dst.leaf),
            (dst.leaf, dst.leaf_port, dst.server, dst.nic)]
    return FlowPath(hops=[Hop(*h) for h in hops], complete=True)


def _incast(clos: Plan, size: int) -> tuple[list[Any], dict[str, Gpu], list[FlowPath], Any]:
    """server1/0 and server2/0 (both on leaf1) each send `size` bytes to server3/0 (leaf2) over one QP,
    through spine1 and spine2: two 400G flows into leaf2's 400G port facing server3."""
    gpus = {g.name: g for g in lab_gpus(clos)}
    a, b, c = gpus["server1/0"], gpus["server2/0"], gpus["server3/0"]
    flows = patterns.flows([(a, c), (b, c)], 1)
    paths = [_via(clos, a, "spine1", c), _via(clos, b, "spine2", c)]
    used = {g.name: g for g in (a, b, c)}
    return flows, used, paths, schedule("pairs", flows, used, size)


def test_a_2_to_1_incast_by_hand(clos: Plan, configs: dict[str, dict[str, Any]]) -> None:
    flows, gpus, paths, sched = _incast(clos, 128 * MIB)
    classes = {name: SwitchClass(db) for name, db in configs.items()}
    queues = incast_queues(clos, flows, gpus, paths, sched, classes, 26)
    assert len(queues) == 1        # leaf1's and the spines' ports carry one 400G flow each: no queue
    q = queues[0]
    facing = clos.node("leaf2").interfaces
    assert (q.switch, q.peer, q.queue, q.flows) == ("leaf2", "server3", 3, 2)
    assert q.port == next(i.name for i in facing if i.peer_node == "server3")
    assert q.ingress_ports == sorted(i.name for i in facing if i.peer_node in ("spine1", "spine2"))
    assert (q.offered_gbps, q.capacity_gbps) == (800, 400)
    # two 128 MiB sends arrive at 800 Gb/s and drain at 400: half of them waits when they have arrived
    assert (q.burst_bytes, q.backlog_bytes) == (256 * MIB, 128 * MIB)
    # ROCE_LOSSLESS marks from 1 MiB. Each spine-facing port's PG 3 (pg_lossless_400000_5m_profile: 18796
    # reserved, dynamic_th 0, so alpha 1) shares the ingress pool's 164505640 - 22010624 = 142495016 shared
    # bytes with the other port filling at once: 18796 + 142495016 x 1 / (1 + 2 x 1) = 47517134 bytes; it
    # holds half the backlog, so it pauses when the queue is 2 x 47517134 = 95034268 deep
    assert (q.ecn_min_bytes, q.ecn_max_bytes, q.pfc_pause_bytes, q.pg_xoff_bytes) == (
        MIB, 2 * MIB, 95034268, 445770)
    assert (q.ecn_marks, q.pfc_pauses, q.first) == (True, True, "ECN")
    smaller = incast_queues(clos, flows, gpus, paths, schedule("pairs", flows, gpus, 64 * MIB), classes, 26)[0]
    assert (smaller.backlog_bytes, smaller.ecn_marks, smaller.pfc_pauses, smaller.first) == (
        64 * MIB, True, False, "ECN")                               # 64 MiB never reaches 95034268
    late = copy.deepcopy(configs["leaf2"])
    late["WRED_PROFILE"]["ROCE_LOSSLESS"].update(green_min_threshold="100000000", green_max_threshold="120000000")
    q = incast_queues(clos, flows, gpus, paths, sched, {**classes, "leaf2": SwitchClass(late)}, 26)[0]
    assert (q.ecn_marks, q.pfc_pauses, q.first) == (True, True, "PFC")   # pauses at 95034268, marks at 1e8
    unread = {k: v for k, v in classes.items() if k != "leaf2"}
    q = incast_queues(clos, flows, gpus, paths, sched, unread, 26)[0]
    assert (q.queue, q.ecn_min_bytes, q.first) == (None, None, "unknown")


def test_roce_s_class_on_every_hop(clos: Plan, configs: dict[str, dict[str, Any]]) -> None:
    flows, gpus, paths, sched = _incast(clos, 128 * MIB)
    classes = {name: SwitchClass(db) for name, db in configs.items()}
    assert lossless_breaks(clos, paths, classes, 26) == (2, [])
    lossy = copy.deepcopy(configs["spine1"])
    lossy["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"      # spine1 sends RoCE to a lossy class
    lossless, breaks = lossless_breaks(clos, paths, {**classes, "spine1": SwitchClass(lossy)}, 26)
    assert lossless == 1                             # the flow through spine2 stays lossless
    assert {(b.switch, b.side, b.where, b.flows) for b in breaks} == {
        ("spine1", "ingress", "TC_TO_PRIORITY_GROUP_MAP|ROCE 1", 1),
        ("spine1", "ingress", f"PORT_QOS_MAP|{_port(clos, 'spine1', 'leaf1')} pfc_enable", 1),
        ("spine1", "egress", "TC_TO_QUEUE_MAP|ROCE 1", 1),
        ("spine1", "egress", f"PORT_QOS_MAP|{_port(clos, 'spine1', 'leaf2')} pfc_enable", 1)}
    what = roce_what_if(clos, flows, gpus, paths, sched, configs, None)
    assert (what.dscp, what.dscp_from, what.flows, what.lossless_flows, len(what.incast)) == (26, "twin", 2, 2, 1)
    assert "a model" in what.model
    assert roce_what_if(clos, flows, gpus, paths, sched, configs, 24).dscp_from == "lab"


def _port(plan: Plan, node: str, peer: str) -> str:
    return next(i.name for i in plan.node(node).interfaces if i.peer_node == peer)


def test_the_report_shows_the_what_ifs_as_a_model(clos: Plan, configs: dict[str, dict[str, Any]]) -> None:
    flows, gpus, paths, sched = _incast(clos, 128 * MIB)
    what = roce_what_if(clos, flows, gpus, paths, sched, configs, None)
    report = TrafficReport(lab="x", pattern="pairs", qps=1, gpus=3, flows=2, links=[], mmr=None, jfi=None,
                           idle_uplinks=0, busbw_share=1.0, uplinks=0, roce=what)
    text = traffic_markdown(report)
    assert "RoCE (model): DSCP 26 (twin's RoCE class; the lab names none); 2/2 flows lossless on every hop; " \
           "1 egress queue offered more than line rate" in text
    assert f"| leaf2 {_port(clos, 'leaf2', 'server3')} q3 | 2 | 800/400 | 256.0 MiB | 128.0 MiB | 1.0 MiB | " \
           "90.6 MiB | ECN |" in text
    assert json.loads(report.model_dump_json())["roce"]["incast"][0]["first"] == "ECN"
