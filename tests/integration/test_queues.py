"""SONiC's QoS on a running lab's data plane: RoCE's DSCP is counted in the lossless queue of every port it
leaves by and not in queue 0, a DSCP_TO_TC_MAP Set over gNMI moves it at once (and `twin validate` and
`twin verify` then say RoCE rides a lossy queue), and a link flap counts on both ends, as portsorch counts.

Counters are read over gNMI as sonic-mgmt and gnmic read them (COUNTERS_DB's queue maps, then the queues'
rows); the flex counter poller writes them once a second, so every change is polled for."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import clos_lab_file, netns_exec, queue_maps_written, running_lab, ssh_run, twin_json, until
from pygnmi.client import gNMIclient

pytestmark = pytest.mark.needs_root
ROCE_TOS = 26 << 2        # DSCP 26, the lab's roce.compute_dscp
PACKETS = 200
SENDER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    s.sendto(b"roce" * 64, (sys.argv[1], 4791))
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("queues")
    lab_file = clos_lab_file(folder, "spines: 1, leaves: 2, servers_per_leaf: 1", "roce:\n  compute_dscp: 26\n")
    with running_lab(lab_file, "qos", check_clean=True) as name:
        queue_maps_written(name)
        status = twin_json("status", "--name", name)
        status["lab_file"] = str(lab_file)
        yield status


def client(lab: dict[str, Any], node: str) -> gNMIclient:
    return gNMIclient(**next(n for n in lab["nodes"] if n["name"] == node)["gnmi"])


def get(lab: dict[str, Any], node: str, path: str) -> Any:
    with client(lab, node) as gc:
        answer = gc.get(path=[path], encoding="json_ietf")
    return answer["notification"][0]["update"][0]["val"]


def queue_packets(lab: dict[str, Any], node: str, port: str) -> dict[int, int]:
    """The port's unicast queues' SAI_QUEUE_STAT_PACKETS: COUNTERS_QUEUE_NAME_MAP, then each queue's row."""
    names = get(lab, node, "/sonic-db:COUNTERS_DB/localhost/COUNTERS_QUEUE_NAME_MAP")
    out = {}
    with client(lab, node) as gc:
        for q in range(10):
            row = gc.get(path=[f"/sonic-db:COUNTERS_DB/localhost/COUNTERS/{names[f'{port}:{q}']}"],
                         encoding="json_ietf")
            out[q] = int(row["notification"][0]["update"][0]["val"]["SAI_QUEUE_STAT_PACKETS"])
    return out


def port_to(lab: dict[str, Any], node: str, peer: str) -> str:
    plan = json.loads(Path(f"/run/twin/{lab['lab']}/plan.json").read_text())
    return str(next(i["name"] for n in plan["nodes"] if n["name"] == node for i in n["interfaces"]
                    if i["peer_node"] == peer))


def path_ports(lab: dict[str, Any]) -> list[tuple[str, str]]:
    """The (switch, port) server1's packets to server2 leave by: leaf1 to spine1, spine1 to leaf2, leaf2 to server2."""
    return [(a, port_to(lab, a, b)) for a, b in (("leaf1", "spine1"), ("spine1", "leaf2"), ("leaf2", "server2"))]


def server2_address(lab: dict[str, Any]) -> str:
    out = netns_exec(lab["lab"], "server2", "ip", "-j", "-4", "addr", "show", "dev", "eth1").stdout
    return str(json.loads(out)[0]["addr_info"][0]["local"])


def send(lab: dict[str, Any], tos: int, count: int = PACKETS) -> None:
    proc = netns_exec(lab["lab"], "server1", "python3", "-c", SENDER, server2_address(lab), str(tos), str(count))
    assert proc.returncode == 0, proc.stderr


def grew(lab: dict[str, Any], before: dict[tuple[str, str], dict[int, int]], queue: int) -> bool:
    return all(queue_packets(lab, n, p)[queue] - before[(n, p)][queue] >= PACKETS for n, p in before)


def test_roce_is_counted_in_the_lossless_queue_of_every_port_it_crosses(lab: dict[str, Any]) -> None:
    ports = path_ports(lab)
    before = {(n, p): queue_packets(lab, n, p) for n, p in ports}
    send(lab, ROCE_TOS)
    assert until(lambda: grew(lab, before, 3), timeout=20, every=0.5), before
    after = {(n, p): queue_packets(lab, n, p) for n, p in ports}
    for end in ports:
        assert after[end][0] - before[end][0] < PACKETS // 4, end     # not queue 0 (ARP goes there)
        assert after[end][1] - before[end][1] < PACKETS // 4, end     # nor the lossy default, queue 1
    send(lab, 0)                                                     # DSCP 0: twin's map sends it to queue 1
    assert until(lambda: grew(lab, after, 1), timeout=20, every=0.5)


def test_a_remapped_dscp_moves_roce_and_validate_and_verify_say_so(lab: dict[str, Any], tmp_path: Path) -> None:
    ports = path_ports(lab)
    path = "/sonic-db:CONFIG_DB/localhost/DSCP_TO_TC_MAP/ROCE/26"
    with client(lab, "leaf1") as gc:
        gc.set(update=[(path, json.dumps("1"))], encoding="json_ietf")     # RoCE into TC 1: a lossy queue
    try:
        before = {(n, p): queue_packets(lab, n, p) for n, p in ports}
        send(lab, ROCE_TOS)
        leaf1 = {ports[0]: before[ports[0]]}
        assert until(lambda: grew(lab, leaf1, 1), timeout=20, every=0.5)       # leaf1: queue 1 now
        rest = {end: before[end] for end in ports[1:]}
        assert until(lambda: grew(lab, rest, 3), timeout=20, every=0.5)        # spine1 and leaf2 still 3
        assert queue_packets(lab, *ports[0])[3] - before[ports[0]][3] < PACKETS // 4
        verify = twin_json("verify", "--name", lab["lab"], check=False)
        check = next(c for c in verify["checks"] if c["name"] == "roce-lossless-queue")
        failed = [i for i in check["items"] if i["status"] == "failure"]
        assert [i["subject"] for i in failed] == ["leaf1"] and "queue 1, a lossy queue" in failed[0]["message"]
        nodes = Path(f"/run/twin/{lab['lab']}/nodes")        # the Set saved leaf1's config_db.json
        for switch in ("leaf1", "leaf2", "spine1"):
            (tmp_path / switch).mkdir()
            (tmp_path / switch / "config_db.json").write_text((nodes / switch / "config_db.json").read_text())
        found = twin_json("validate", str(tmp_path), "--lab", lab["lab_file"], "--no-yang", check=False)
        roce = [f for f in found["findings"] if "RoCE" in f["message"]]
        assert [(Path(f["file"]).parent.name, f["where"]) for f in roce] == [("leaf1", "DSCP_TO_TC_MAP|ROCE 26")], found
    finally:
        with client(lab, "leaf1") as gc:
            gc.set(update=[(path, json.dumps("3"))], encoding="json_ietf")
    verify = twin_json("verify", "--name", lab["lab"], check=False)
    assert next(c for c in verify["checks"] if c["name"] == "roce-lossless-queue")["status"] == "success"


def flaps(lab: dict[str, Any], node: str, port: str) -> dict[str, str]:
    row = get(lab, node, f"/sonic-db:APPL_DB/localhost/PORT_TABLE/{port}")
    return {f: row.get(f, "") for f in ("flap_count", "last_down_time", "last_up_time", "oper_status")}


def test_a_link_flap_counts_on_both_ends(lab: dict[str, Any]) -> None:
    leaf, spine = "leaf1", "spine1"
    uplink, downlink = port_to(lab, leaf, spine), port_to(lab, spine, leaf)
    before = {leaf: flaps(lab, leaf, uplink), spine: flaps(lab, spine, downlink)}
    assert all(int(b["flap_count"]) >= 1 for b in before.values())     # each came up once when the lab did
    subprocess.run(["ip", "-n", f"tw.{lab['lab']}.{leaf}", "link", "set", uplink, "down"], check=True)
    assert until(lambda: flaps(lab, spine, downlink)["oper_status"] == "down", timeout=10, every=0.2)
    subprocess.run(["ip", "-n", f"tw.{lab['lab']}.{leaf}", "link", "set", uplink, "up"], check=True)
    ends = ((leaf, uplink), (spine, downlink))
    assert until(lambda: all(flaps(lab, n, p)["oper_status"] == "up" for n, p in ends), timeout=10, every=0.2)
    for node, port in ends:
        after = flaps(lab, node, port)
        assert int(after["flap_count"]) == int(before[node]["flap_count"]) + 2, (node, before[node], after)
        assert after["last_down_time"] and after["last_up_time"] != before[node]["last_up_time"]
    status, out, err = ssh_run(lab, f"show interfaces flap {uplink}", node=leaf)   # the switch's own command
    count = flaps(lab, leaf, uplink)["flap_count"]
    assert status == 0 and out.splitlines()[2].split()[:4] == [uplink, count, "Up", "Up"], (out, err)
    assert until(lambda: twin_json("status", "--name", lab["lab"], check=False)["healthy"], timeout=60)


def test_config_reload_programs_the_queues_again(lab: dict[str, Any]) -> None:
    leaf, uplink = path_ports(lab)[0]
    status, _, err = ssh_run(lab, "sudo config reload -y", node=leaf)   # services stopped, the kernel forgets
    assert status == 0, err
    assert until(lambda: twin_json("status", "--name", lab["lab"], check=False)["healthy"], timeout=90, every=1)
    qdiscs = json.loads(subprocess.run(["tc", "-n", f"tw.{lab['lab']}.{leaf}", "-j", "qdisc", "show", "dev", uplink],
                                       capture_output=True, text=True, check=True).stdout)
    assert qdiscs[0]["kind"] == "htb" and [q["kind"] for q in qdiscs].count("pfifo") == 10
    before = {(leaf, uplink): queue_packets(lab, leaf, uplink)}
    send(lab, ROCE_TOS)
    assert until(lambda: grew(lab, before, 3), timeout=20, every=0.5)
