"""Checks on a normalized topology that a schema cannot express. Collects every problem."""

from __future__ import annotations

import re
from collections import Counter

from twin.errors import Problem
from twin.topology.models import NAME_PATTERN, Topology

IFNAMSIZ = 15  # usable characters in a Linux interface name
_SONIC_PORT = re.compile(r"^Ethernet(\d+)$")


def validate_topology(topo: Topology) -> list[Problem]:
    problems: list[Problem] = []

    def add(field: str, message: str, fix: str, line: int | None = None) -> None:
        problems.append(Problem(topo.source, field, message, fix, line))

    names = Counter(n.name for n in topo.nodes)
    for name, count in names.items():
        if count > 1:
            add(f"nodes.{name}", f"node name used {count} times", "give every node its own name")
    for node in topo.nodes:
        if not re.match(NAME_PATTERN, node.name):
            add(f"nodes.{node.name}", "node names start with a letter and use only letters, digits, '-' "
                "and '_'", "rename the node")
        if node.role == "router" and node.user_frr:
            for attr in ("frr_conf", "daemons"):
                path = getattr(node, attr)
                if path is not None and not path.is_file():
                    add(f"nodes.{node.name}.binds", f"bind file {path} does not exist",
                        "create it or fix the path in 'binds:' (paths are relative to the topology file)")
    indexes = Counter((n.role, n.index) for n in topo.nodes)
    for (role, index), count in indexes.items():
        if count > 1:
            add("nodes", f"{count} {role} nodes share index {index}", "give each node of a role its own index")

    roles = {n.name: n for n in topo.nodes}
    used: dict[tuple[str, str], int | None] = {}
    for i, link in enumerate(topo.links):
        field = f"links.{i}"
        if link.a.node == link.b.node:
            add(field, f"self-loop: both ends are on {link.a.node}",
                "connect two different nodes", link.line)
        for end in (link.a, link.b):
            end_node = roles.get(end.node)
            if end_node is None:
                add(field, f"link to unknown node '{end.node}'",
                    f"define '{end.node}' under nodes: or fix the name", link.line)
                continue
            if end.iface is None:
                continue
            if len(end.iface) > IFNAMSIZ:
                add(field, f"interface name '{end.iface}' on {end.node} is {len(end.iface)} characters; "
                    f"Linux interface names hold at most {IFNAMSIZ}", "use a shorter interface name",
                    link.line)
            if end_node.is_switch and not end_node.user_frr:
                m = _SONIC_PORT.match(end.iface)
                if not m or int(m.group(1)) % 4:
                    add(field, f"switch port '{end.iface}' on {end.node} is not a SONiC port name",
                        "use Ethernet0, Ethernet4, Ethernet8, ... (4 lanes per port)", link.line)
                elif int(m.group(1)) // 4 >= topo.fabric.radix:
                    add(field, f"port {end.iface} on {end.node} is beyond fabric.radix={topo.fabric.radix}",
                        "raise fabric.radix or use a lower port", link.line)
            key = (end.node, end.iface)
            if key in used:
                where = f" (first used on line {used[key]})" if used[key] else ""
                add(field, f"interface {end.node}:{end.iface} is used by two links{where}",
                    "give each link its own interface", link.line)
            used[key] = link.line
    return problems
