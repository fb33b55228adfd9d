"""Confirmation mode: send each resolved flow's packets for real and count them where they leave
every switch, so the paths `ip route get` gave are shown to be the ones the kernel forwards.

Every switch gets an nftables table (`inet twin_traffic`) with one counter per port for UDP to port
4791 in its forward hook; each source server sends a few packets per flow with the flow's exact
5-tuple (bound source address and port); the counters are then read and the table removed. Other
traffic of the lab (BGP, BFD, probes) is not UDP to 4791 and is not counted.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import defaultdict

from twin.lab.running import RunningLab
from twin.model.errors import TwinError
from twin.model.traffic import ROCE_DPORT, Confirmation, TrafficReport
from twin.runtime.registry import runtime_of
from twin.traffic.gpus import lab_gpus

TABLE = "twin_traffic"
PACKETS = 20
SENDER = r"""
import json, socket, sys, time
for f in json.load(sys.stdin):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((f["src_ip"], f["sport"]))
    for _ in range(f["packets"]):
        s.sendto(b"twin-traffic", (f["dst_ip"], f["dport"]))
    s.close()
"""


def _rules(ports: list[str]) -> str:
    lines = [f"table inet {TABLE} {{", "  chain flows { type filter hook forward priority -10; policy accept;"]
    lines += [f'    oifname "{p}" udp dport {ROCE_DPORT} counter comment "{p}"' for p in ports]
    return "\n".join([*lines, "  }", "}", ""])


def _counters(listing: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in json.loads(listing).get("nftables", []):
        rule = item.get("rule")
        if not rule:
            continue
        packets = next((e["counter"]["packets"] for e in rule.get("expr", []) if "counter" in e), 0)
        out[str(rule.get("comment", ""))] = int(packets)
    return out


def confirm_paths(lab: RunningLab, report: TrafficReport, packets: int = PACKETS) -> Confirmation:
    if lab.state.runtime != "netns":
        raise TwinError("--confirm sends packets from the servers' namespaces with twin's Python: it needs the "
                        f"netns runtime (this lab runs on {lab.state.runtime})")
    runtime = runtime_of(lab.state)
    plan = lab.plan
    switches = [n for n in plan.switches if n.kind == "switch"]
    expected: dict[tuple[str, str], int] = defaultdict(int)
    for hops in report.paths.values():
        for a, b in itertools.pairwise(hops):
            if plan.node(a).kind == "switch":
                expected[(a, b)] += packets
    ports = {n.name: [i.kernel for i in n.interfaces] for n in switches}
    peer_of = {(n.name, i.kernel): i.peer_node for n in switches for i in n.interfaces}
    ips = {g.name: g.ip for g in lab_gpus(plan)}

    def node_run(node: str, cmd: list[str], stdin: str | None = None) -> str:
        proc = subprocess.run(runtime.exec_argv(lab.state, node, cmd), input=stdin, capture_output=True,
                              text=True, timeout=300)
        if proc.returncode != 0:
            raise TwinError(f"{node}: {' '.join(cmd[:3])} failed: {proc.stderr.strip()[-300:]}")
        return proc.stdout

    installed: list[str] = []
    try:
        for n in switches:
            installed.append(n.name)  # first: an install cut short (a signal) may have left the table
            node_run(n.name, ["nft", "-f", "-"], _rules(ports[n.name]))
        by_server: dict[str, list[dict[str, object]]] = defaultdict(list)
        for key in report.paths:
            src, rest = key.split("->", 1)
            dst, _, tail = rest.partition("#")
            _, _, sport = tail.partition(":")
            by_server[src.split("/")[0]].append({"src_ip": ips[src], "dst_ip": ips[dst],
                                                 "sport": int(sport), "dport": ROCE_DPORT, "packets": packets})
        for server, flows in sorted(by_server.items()):
            node_run(server, [sys.executable, "-c", SENDER], json.dumps(flows))
        counted: dict[tuple[str, str], int] = defaultdict(int)
        for n in switches:
            for port, value in _counters(node_run(n.name, ["nft", "-j", "list", "table", "inet", TABLE])).items():
                if value:
                    counted[(n.name, peer_of[(n.name, port)])] += value
    finally:
        for name in installed:
            subprocess.run(runtime.exec_argv(lab.state, name, ["nft", "delete", "table", "inet", TABLE]),
                           capture_output=True, timeout=30)
    keys = sorted(set(expected) | set(counted))
    wrong = [f"{a}->{b}: {counted.get((a, b), 0)} packets, {expected.get((a, b), 0)} predicted"
             for a, b in keys if counted.get((a, b), 0) != expected.get((a, b), 0)]
    return Confirmation(packets_per_flow=packets, links=len(keys), matched=len(keys) - len(wrong), mismatches=wrong)
