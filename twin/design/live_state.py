"""A running lab's state as the drawing colours it: links up or down, BGP sessions, nodes. The model and the
pure mapping from what the collectors read (twin.design.live does the reading)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from twin.design.fabric_graph import link_key
from twin.model.plan import Plan

LinkState = Literal["up", "down", "unknown"]
NodeState = Literal["ok", "failed", "unknown"]
ESTABLISHED = "Established"


class LiveState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lab: str
    runtime: str
    taken_at: float                     # seconds since the epoch
    healthy: bool
    bgp: dict[str, int]                 # established, total (as `twin status`)
    links: dict[str, LinkState]         # link key (fabric_graph.link_key) -> state
    sessions: dict[str, str]            # "switch:port" -> the BGP state of the session over that port
    nodes: dict[str, NodeState]
    problems: list[str]                 # what the failing health checks say, item by item


def session_states(plan: Plan, outputs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Per switch port that carries a planned session: FRR's state of it ("Established", "Active", ...),
    "no BGP" when the switch's bgpd did not answer."""
    out = {}
    for node in plan.nodes:
        if not node.neighbors:
            continue
        summary = (outputs.get(node.name) or {}).get("bgp_summary")
        peers = summary.get("ipv4Unicast", {}).get("peers", {}) if isinstance(summary, dict) else None
        for nb in node.neighbors:
            if not nb.iface:
                continue
            state = "no BGP" if peers is None else str(peers.get(str(nb.ip), {}).get("state", "missing"))
            out[f"{node.name}:{nb.iface}"] = state
    return out


def link_states(plan: Plan, operstates: Mapping[str, Mapping[str, str] | None]) -> dict[str, LinkState]:
    """A link is up when the kernel says UP at both ends, down when either end is DOWN or LOWERLAYERDOWN
    (a link set down on one side shows LOWERLAYERDOWN on the other), unknown otherwise."""
    kernel = {(n.name, i.name): i.kernel for n in plan.nodes for i in n.interfaces}
    out: dict[str, LinkState] = {}
    for lk in plan.links:
        ends = []
        for node, iface in ((lk.a_node, lk.a_iface), (lk.b_node, lk.b_iface)):
            seen = operstates.get(node)
            name = kernel.get((node, iface), iface)
            ends.append(None if seen is None else seen.get(name))
        if any(e in ("DOWN", "LOWERLAYERDOWN", "NOTPRESENT") for e in ends):
            state: LinkState = "down"
        elif all(e == "UP" for e in ends):
            state = "up"
        else:
            state = "unknown"
        out[link_key(lk.a_node, lk.a_iface, lk.b_node, lk.b_iface)] = state
    return out


def operstates_of(ip_link_json: Any) -> dict[str, str] | None:
    """`ip -j link show` output -> interface -> operstate; None when it is not that."""
    if not isinstance(ip_link_json, list):
        return None
    return {str(i["ifname"]): str(i.get("operstate", "UNKNOWN")) for i in ip_link_json
            if isinstance(i, dict) and "ifname" in i}


def node_states(plan: Plan, daemons: Mapping[str, Mapping[str, Mapping[str, Any]]],
                operstates: Mapping[str, Mapping[str, str] | None]) -> dict[str, NodeState]:
    """failed: a switch daemon is not running, or the node's interfaces cannot be read; ok otherwise."""
    out: dict[str, NodeState] = {}
    for n in plan.nodes:
        procs = daemons.get(n.name, {})
        if operstates.get(n.name) is None or any(not p.get("running", False) for p in procs.values()):
            out[n.name] = "failed"
        else:
            out[n.name] = "ok"
    return out
