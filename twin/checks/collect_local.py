"""Read what checks need from a running netns lab: FRR JSON, kernel FIBs, pings. I/O only."""

from __future__ import annotations

import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from twin.checks.base import Check, Outputs
from twin.checks.collect_processes import agent_facts, daemon_facts
from twin.host.rundir import node_dir
from twin.host.shell import netns_argv, run
from twin.lab.running import RunningLab
from twin.model.state import LabState
from twin.switch.frr_daemons import vtysh
from twin.switch.statedb import SwitchState

WORKERS = 8


def _vtysh_json(state: LabState, node: str, command: str) -> Any:
    proc = run(vtysh(node_dir(state.lab, node), "-c", command), check=False, timeout=30)
    try:
        return json.loads(proc.stdout) if proc.returncode == 0 else None
    except json.JSONDecodeError:
        return None


def _fib(state: LabState, node: str) -> Any:
    proc = run(["ip", "-n", state.node(node).netns, "-j", "-4", "route", "show", "proto", "bgp"],
               check=False, timeout=30)
    try:
        return json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        return None


def _ping(state: LabState, node: str, probes: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    alive: dict[str, list[str]] = {}
    ns = state.node(node).netns
    for src, targets in probes.items():
        proc = run(netns_argv(ns, ["fping", "-a", "-r", "1", "-t", "300", "-S", src, *sorted(targets)]),
                   check=False, timeout=60)
        alive[src] = proc.stdout.split()
    return alive


def collect_local(lab: RunningLab, checks: Iterable[Check[Any]]) -> Outputs:
    """What the checks need, read locally: FRR JSON through vtysh, kernel FIBs, pings, processes."""
    state = lab.state
    jobs: list[tuple[str, str, Any]] = []
    for check in checks:
        probes: dict[str, Any] = getattr(check.inputs, "probes", {})
        for need in check.needs:
            for name in check.nodes():
                jobs.append((name, need, probes.get(name) if need == "ping" else None))

    def one(job: tuple[str, str, Any]) -> tuple[str, str, Any]:
        node, source, arg = job
        if source == "bgp_summary":
            return node, source, _vtysh_json(state, node, "show bgp summary json")
        if source == "bfd_sessions":
            return node, source, SwitchState(state.node(node).netns, node_dir(state.lab, node)).bfd_sessions()
        if source == "port_table":
            return node, source, SwitchState(state.node(node).netns, node_dir(state.lab, node)).port_table()
        if source == "daemons":
            return node, source, daemon_facts(state, node)
        if source == "agent":
            return node, source, agent_facts(lab, node)
        if source == "ospf_neighbors":
            return node, source, _vtysh_json(state, node, "show ip ospf neighbor json")
        if source == "fib":
            return node, source, _fib(state, node)
        return node, source, _ping(state, node, arg)

    outputs: Outputs = {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for node, source, value in pool.map(one, jobs):
            outputs.setdefault(node, {})[source] = value
    return outputs
