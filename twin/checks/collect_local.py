"""Read what checks need from a running netns lab: FRR JSON, kernel FIBs, pings. I/O only.

FRR is asked on its daemons' vty sockets and the FIB is dumped over rtnetlink, in this process:
`twin up` polls these until the lab converges, and a vtysh or `ip` process per switch per poll
took most of a CPU away from the convergence it was waiting for (0.7 CPU-seconds a poll on the
default lab; now a few hundredths).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from twin.checks.base import Check, Outputs
from twin.checks.collect_frr import frr_config_facts
from twin.checks.collect_processes import agent_facts, daemon_facts
from twin.host.processes import ProcessTable
from twin.host.rundir import node_dir
from twin.host.shell import netns_argv, run
from twin.lab.running import RunningLab
from twin.model.state import LabState
from twin.switch import netlink
from twin.switch.frr_vty import ask_json
from twin.switch.producers import PROTOCOLS, RT_TABLE_MAIN
from twin.switch.statedb import SwitchState

WORKERS = 8


def _frr_json(state: LabState, node: str, daemon: str, command: str) -> Any:
    """`command`'s JSON answer from one daemon, as vtysh would relay it; None when it cannot answer."""
    return ask_json(node_dir(state.lab, node), daemon, command)


def fib_entry(msg: netlink.Message) -> dict[str, Any] | None:
    """One BGP route of the main table as `ip -j route show proto bgp` lists it: dst, and nexthops
    when there are several; None for any other route."""
    if msg["table"] != RT_TABLE_MAIN or PROTOCOLS.get(msg["proto"]) != "bgp":
        return None
    dst = msg.get_attr("RTA_DST")
    entry: dict[str, Any] = {"dst": "default" if dst is None else
                             dst if msg["dst_len"] == 32 else f"{dst}/{msg['dst_len']}"}
    hops = msg.get_attr("RTA_MULTIPATH")
    if hops:
        entry["nexthops"] = [{"gateway": h.get_attr("RTA_GATEWAY")} for h in hops]
    else:
        entry["gateway"] = msg.get_attr("RTA_GATEWAY")
    return entry


def _fib(state: LabState, node: str) -> Any:
    try:
        routes = netlink.dump(state.node(node).netns, netlink.RTM_GETROUTE)
    except OSError:
        return None
    return [e for msg in routes if (e := fib_entry(msg)) is not None]


def _ping(state: LabState, node: str, probes: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """The targets that answer, by source address. fping sends to one target every `-i` ms (10 by
    default: 0.14 s a server on the default lab, more than the replies take); 1 ms here."""
    alive: dict[str, list[str]] = {}
    ns = state.node(node).netns
    for src, targets in probes.items():
        proc = run(netns_argv(ns, ["fping", "-a", "-r", "1", "-t", "300", "-i", "1", "-S", src,
                                        *sorted(targets)]),
                   check=False, timeout=60)
        alive[src] = proc.stdout.split()
    return alive


def collect_local(lab: RunningLab, checks: Iterable[Check[Any]], only: Collection[str] | None = None) -> Outputs:
    """What the checks need, read locally: FRR JSON on the daemons' vty sockets, kernel FIBs, pings,
    processes; of the nodes in `only` when given."""
    state = lab.state
    jobs: list[tuple[str, str, Any]] = []
    for check in checks:
        probes: dict[str, Any] = getattr(check.inputs, "probes", {})
        for need in check.needs:
            for name in check.nodes():
                if only is None or name in only:
                    jobs.append((name, need, probes.get(name) if need == "ping" else None))

    table = ProcessTable() if any(source == "daemons" for _, source, _ in jobs) else None

    def one(job: tuple[str, str, Any]) -> tuple[str, str, Any]:
        node, source, arg = job
        if source == "bgp_summary":
            return node, source, _frr_json(state, node, "bgpd", "show bgp summary json")
        if source == "bfd_sessions":
            return node, source, SwitchState(state.node(node).netns, node_dir(state.lab, node)).bfd_sessions()
        if source == "port_table":
            return node, source, SwitchState(state.node(node).netns, node_dir(state.lab, node)).port_table()
        if source == "daemons":
            return node, source, daemon_facts(state, node, table)
        if source == "agent":
            return node, source, agent_facts(lab, node)
        if source == "ospf_neighbors":
            return node, source, _frr_json(state, node, "ospfd", "show ip ospf neighbor json")
        if source == "fib":
            return node, source, _fib(state, node)
        if source == "frr_config":
            return node, source, frr_config_facts(lab, node)
        return node, source, _ping(state, node, arg)

    outputs: Outputs = {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for node, source, value in pool.map(one, jobs):
            outputs.setdefault(node, {})[source] = value
    return outputs
