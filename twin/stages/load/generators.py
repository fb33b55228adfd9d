"""Expand clos and rail intents into explicit nodes and links with stable port numbers.

Port numbering is a function of node numbers only, so adding a leaf or a spine never moves an
existing link: leaf downlinks count up from port 0, leaf uplinks from radix/2, and spine port
numbers follow the leaf number.
"""

from __future__ import annotations

from twin.model.errors import Problem
from twin.model.topology import ClosSpec, Endpoint, FabricSettings, Link, Node, RailSpec


def sonic_port(number: int, fabric: FabricSettings) -> str:
    """SONiC name of front-panel port `number` (0-based) of the fabric's hwsku, as its
    port_config.ini names it (Ethernet0, Ethernet4, ... on 4-lane ports; Ethernet0, Ethernet8, ... on 8)."""
    sku = fabric.sku
    return sku.port(number).name if number < sku.port_count else f"Ethernet{sku.port_count}+{number}"


def _uplinks(leaf: Node, leaf_no: int, spines: list[Node], parallel: int, fabric: FabricSettings) -> list[Link]:
    links = []
    for j, spine in enumerate(spines):
        for k in range(parallel):
            leaf_port = fabric.radix // 2 + j * parallel + k
            spine_port = (leaf_no - 1) * parallel + k
            links.append(
                Link(a=Endpoint(node=leaf.name, iface=sonic_port(leaf_port, fabric)),
                     b=Endpoint(node=spine.name, iface=sonic_port(spine_port, fabric)))
            )
    return links


def _port_budget(field: str, leaves: int, spines: int, down: int, parallel: int,
                 fabric: FabricSettings) -> list[Problem]:
    problems = []
    half = fabric.radix // 2
    if down > half:
        problems.append(Problem("", field, f"each leaf needs {down} server ports but only {half} "
                                f"(half of fabric.radix={fabric.radix}) are for servers",
                                "raise fabric.radix or use fewer servers/NICs per leaf"))
    if spines * parallel > fabric.radix - half:
        problems.append(Problem("", field, f"each leaf needs {spines * parallel} uplinks but only "
                                f"{fabric.radix - half} (half of fabric.radix={fabric.radix}) are uplinks",
                                "raise fabric.radix or use fewer spines/parallel links"))
    if leaves * parallel > fabric.radix:
        problems.append(Problem("", field, f"each spine needs {leaves * parallel} ports but "
                                f"fabric.radix is {fabric.radix}", "raise fabric.radix or use fewer leaves"))
    return problems


def clos(spec: ClosSpec, fabric: FabricSettings) -> tuple[list[Node], list[Link], list[Problem]]:
    problems = _port_budget("clos", spec.leaves, spec.spines,
                            spec.servers_per_leaf * spec.nics_per_server, spec.links_per_spine, fabric)
    spines = [Node(name=f"spine{j}", role="spine", index=j) for j in range(1, spec.spines + 1)]
    leaves = [Node(name=f"leaf{i}", role="leaf", index=i) for i in range(1, spec.leaves + 1)]
    nodes: list[Node] = [*spines, *leaves]
    links: list[Link] = []
    server_no = 0
    for i, leaf in enumerate(leaves, start=1):
        links += _uplinks(leaf, i, spines, spec.links_per_spine, fabric)
        for s in range(spec.servers_per_leaf):
            server_no += 1
            server = Node(name=f"server{server_no}", role="server", index=server_no)
            nodes.append(server)
            for m in range(spec.nics_per_server):
                port = s * spec.nics_per_server + m
                links.append(Link(a=Endpoint(node=leaf.name, iface=sonic_port(port, fabric)),
                                  b=Endpoint(node=server.name, iface=f"eth{m + 1}")))
    return nodes, links, problems


def rail(spec: RailSpec, fabric: FabricSettings) -> tuple[list[Node], list[Link], list[Problem]]:
    """Rail-optimized pods: NIC r of every server in pod p lands on rail leaf r of pod p."""
    problems = _port_budget("rail", spec.pods * spec.rails, spec.spines, spec.servers_per_pod,
                            spec.links_per_spine, fabric)
    spines = [Node(name=f"spine{j}", role="spine", index=j) for j in range(1, spec.spines + 1)]
    nodes: list[Node] = list(spines)
    links: list[Link] = []
    for p in range(1, spec.pods + 1):
        rail_leaves = []
        for r in range(1, spec.rails + 1):
            number = (p - 1) * spec.rails + r
            leaf = Node(name=f"pod{p}-rail{r}", role="leaf", index=number, pod=p, rail=r)
            rail_leaves.append(leaf)
            nodes.append(leaf)
            links += _uplinks(leaf, number, spines, spec.links_per_spine, fabric)
        for s in range(1, spec.servers_per_pod + 1):
            server = Node(name=f"pod{p}-server{s}", role="server",
                          index=(p - 1) * spec.servers_per_pod + s, pod=p)
            nodes.append(server)
            for r, leaf in enumerate(rail_leaves, start=1):
                links.append(Link(a=Endpoint(node=leaf.name, iface=sonic_port(s - 1, fabric)),
                                  b=Endpoint(node=server.name, iface=f"eth{r}")))
    return nodes, links, problems
