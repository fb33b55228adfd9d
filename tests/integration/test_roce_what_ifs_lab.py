"""`twin traffic`'s RoCE what-ifs on a running lab, from the switches' running config read over gNMI: a
2:1 incast (two GPUs of leaf1 into one GPU of leaf2, through leaf1's one uplink) is found on leaf1's
uplink with the backlog its own JSON's flows and links give, marked by ECN well before any priority group
pauses; and a DSCP_TO_TC_MAP Set on the spine breaks RoCE's class on both flows' paths at the spine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from labtools import clos_lab_file, running_lab, twin_json
from pygnmi.client import gNMIclient

pytestmark = pytest.mark.needs_root
MIB = 2**20


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("roce")
    lab_file = clos_lab_file(folder, "spines: 1, leaves: 2, servers_per_leaf: 2", "roce:\n  compute_dscp: 26\n")
    (folder / "pairs.yaml").write_text("pairs:\n  - [server1/0, server3/0]\n  - [server2/0, server3/0]\n")
    with running_lab(lab_file, "rw", check_clean=True) as name:
        status = twin_json("status", "--name", name)
        status["pairs"] = str(folder / "pairs.yaml")
        yield status


def incast(lab: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = twin_json("traffic", "pairs", lab["pairs"], "--name", lab["lab"], "--message-size", "64M")
    return doc


def test_a_2_to_1_incast_marks_before_it_pauses(lab: dict[str, Any]) -> None:
    doc = incast(lab)
    roce = doc["roce"]
    assert (roce["dscp"], roce["dscp_from"], roce["flows"], roce["lossless_flows"], roce["breaks"]) == (
        26, "lab", 2, 2, [])
    [queue] = roce["incast"]        # spine1 -> leaf2 gets one 400G port's worth: only leaf1's uplink is over
    assert (queue["switch"], queue["peer"], queue["queue"], queue["flows"]) == ("leaf1", "spine1", 3, 2)
    # recomputed from the JSON's own links and sends: two NIC links bring 2 x 400 into one 400G uplink
    uplink = next(lk for lk in doc["links"] if (lk["a"], lk["b"]) == ("leaf1", "spine1"))
    nics = [lk for lk in doc["links"] if lk["b"] == "leaf1"]
    offered = sum(lk["capacity_gbps"] for lk in nics)
    burst = sum(row["bytes"] for row in doc["flow_table"] if ["leaf1", "spine1"] in row["path"] and not row["after"])
    assert (queue["offered_gbps"], queue["capacity_gbps"], queue["burst_bytes"]) == (
        offered, uplink["capacity_gbps"], burst) == (800, 400, 128 * MIB)
    assert queue["backlog_bytes"] == int(burst * (1 - uplink["capacity_gbps"] / offered)) == 64 * MIB
    assert queue["ecn_min_bytes"] == MIB and queue["pfc_pause_bytes"] > queue["backlog_bytes"]
    assert (queue["ecn_marks"], queue["pfc_pauses"], queue["first"]) == (True, False, "ECN")


def test_a_spine_sending_roce_to_a_lossy_class_breaks_both_paths_there(lab: dict[str, Any]) -> None:
    target = next(n for n in lab["nodes"] if n["name"] == "spine1")["gnmi"]
    path = "/sonic-db:CONFIG_DB/localhost/DSCP_TO_TC_MAP/ROCE/26"
    with gNMIclient(**target) as gc:
        gc.set(update=[(path, json.dumps("1"))], encoding="json_ietf")
    try:
        roce = incast(lab)["roce"]
    finally:
        with gNMIclient(**target) as gc:
            gc.set(update=[(path, json.dumps("3"))], encoding="json_ietf")
    assert roce["lossless_flows"] == 0
    assert {(b["switch"], b["side"], b["where"].split("|")[0], b["flows"]) for b in roce["breaks"]} == {
        ("spine1", "ingress", "TC_TO_PRIORITY_GROUP_MAP", 2), ("spine1", "ingress", "PORT_QOS_MAP", 2),
        ("spine1", "egress", "TC_TO_QUEUE_MAP", 2), ("spine1", "egress", "PORT_QOS_MAP", 2)}
    assert incast(lab)["roce"]["lossless_flows"] == 2     # put back
