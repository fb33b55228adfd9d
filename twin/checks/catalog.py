"""The health checks a plan implies, with inputs derived from the plan alone."""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check
from twin.checks.bgp import BgpInput, BgpSessionsEstablished
from twin.checks.ecmp import EcmpInput, EcmpWidth
from twin.checks.reachability import PingInput, ServerReachability
from twin.plan.models import Plan


def expected_sessions(plan: Plan) -> dict[str, dict[str, str]]:
    return {n.name: {str(nb.ip): nb.name for nb in n.neighbors}
            for n in plan.nodes if n.kind == "switch" and n.neighbors}


def expected_ecmp(plan: Plan) -> dict[str, dict[str, int]]:
    leaves = [n for n in plan.nodes if n.role == "leaf" and n.kind == "switch"]
    out: dict[str, dict[str, int]] = {}
    for leaf in leaves:
        width = min(len(leaf.neighbors), plan.max_paths)
        out[leaf.name] = {str(net): width for other in leaves if other.name != leaf.name
                          for net in other.networks}
    return out


def expected_pings(plan: Plan) -> dict[str, dict[str, dict[str, str]]]:
    """Per server and NIC address: the NIC addresses of other servers behind another leaf."""
    nics = [(s.name, i.peer_node, str(i.address.ip)) for s in plan.hosts if s.role == "server"
            for i in s.interfaces if i.address is not None]
    out: dict[str, dict[str, dict[str, str]]] = {}
    for server, leaf, src in nics:
        targets = {addr: f"{other}/{addr}" for other, other_leaf, addr in nics
                   if other != server and other_leaf != leaf}
        if targets:
            out.setdefault(server, {})[src] = targets
    return out


def health_checks(plan: Plan) -> list[Check[Any]]:
    checks: list[Check[Any]] = [BgpSessionsEstablished(BgpInput(sessions=expected_sessions(plan)))]
    ecmp = expected_ecmp(plan)
    if ecmp:
        checks.append(EcmpWidth(EcmpInput(expected=ecmp)))
    pings = expected_pings(plan)
    if pings:
        checks.append(ServerReachability(PingInput(probes=pings)))
    return checks
