"""The links a pattern's flows cross: their keys, names and line rates, from the plan (pure)."""

from __future__ import annotations

from collections.abc import Iterable

from twin.model.plan import Plan
from twin.model.traffic import Gpu
from twin.traffic.resolve import Hop

LinkId = tuple[str, str, str, str]   # (a, a kernel interface, b, b kernel interface), one direction


def link_id(hop: Hop) -> LinkId:
    return (hop.a, hop.a_if, hop.b, hop.b_if)


def capacities(plan: Plan, gpus: Iterable[Gpu]) -> dict[LinkId, float]:
    """Every cabled direction's line rate (Mb/s): the port's speed, else the fabric's."""
    caps: dict[LinkId, float] = {}
    for node in plan.nodes:
        for iface in node.interfaces:
            try:
                far = plan.node(iface.peer_node).iface(iface.peer_iface)
            except KeyError:
                continue
            caps[(node.name, iface.kernel, iface.peer_node, far.kernel)] = float(
                iface.speed or far.speed or plan.fabric.speed)
    nics = {(g.server, g.nic): float(g.speed_mbps) for g in gpus}   # a NIC runs at its own rate, both ways
    for key in caps:
        rate = nics.get((key[0], key[1])) or nics.get((key[2], key[3]))
        if rate:
            caps[key] = rate
    return caps


def port_name(plan: Plan, node: str, kernel: str) -> str:
    """The port's name as the lab names it (Ethernet0), from the kernel's (a server's eth1 stays eth1)."""
    return next((i.name for i in plan.node(node).interfaces if i.kernel == kernel), kernel)
