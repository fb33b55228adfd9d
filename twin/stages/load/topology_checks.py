"""Checks on a normalized topology that a schema cannot express. Collects every problem."""

from __future__ import annotations

import re
from collections import Counter

from twin.model.errors import Problem
from twin.model.topology import NAME_PATTERN, Topology

IFNAMSIZ = 15  # usable characters in a Linux interface name


def _sku_problems(topo: Topology) -> list[Problem]:
    f = topo.fabric
    sku = f.sku
    out = []
    if f.radix > sku.fabric_ports:
        out.append(Problem(topo.source, "fabric.radix", f"fabric.radix={f.radix} but {sku.hwsku} has "
                           f"{sku.fabric_ports} front-panel ports", f"set fabric.radix to at most {sku.fabric_ports} "
                           "or pick an hwsku with more ports"))
    if f.port_speed is not None and f.port_speed != sku.speed:
        out.append(Problem(topo.source, "fabric.port_speed", f"{f.port_speed} is not {sku.hwsku}'s port speed "
                           f"({sku.speed}), the only one SONiC's buffer profile for this SKU covers",
                           "remove fabric.port_speed or pick an hwsku of that speed"))
    if sku.buffers is None and any(n.planned for n in topo.nodes):
        out.append(Problem(topo.source, "fabric.hwsku", f"SONiC ships no buffer defaults for {sku.hwsku} "
                           "(no buffers_defaults_*.j2 or pg_profile_lookup.ini in its device folder), so a switch "
                           "of this SKU builds no lossless priority groups for RoCE",
                           "pick an hwsku with buffer defaults, e.g. Arista-7060X6-64PE-B-O128"))
    return out


def validate_topology(topo: Topology) -> list[Problem]:
    problems: list[Problem] = _sku_problems(topo)
    sku = topo.fabric.sku
    # with more fabric ports than the SKU has, the generated ports beyond it are that one mistake
    ports_checked = topo.fabric.radix <= sku.fabric_ports

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
                if path is not None and not path.exists():  # twin.host.userfile judges what exists
                    add(f"nodes.{node.name}.binds", f"bind file {path} does not exist",
                        "create it or fix the path in 'binds:' (paths are relative to the topology file)")
        if node.config_db is not None:
            problems.extend(_config_db_problems(topo, node.name))
    problems += _mixed_link_problems(topo)
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
            if end_node.planned and ports_checked:  # a switch's own config_db.json lists its own ports
                number = sku.number(end.iface)
                if number is None:
                    first = ", ".join(p.name for p in sku.ports[:3])
                    add(field, f"switch port '{end.iface}' on {end.node} is not a port of {sku.hwsku}",
                        f"use the SKU's port names ({first}, ... as its port_config.ini has them)", link.line)
                elif number >= topo.fabric.radix:
                    add(field, f"port {end.iface} on {end.node} is beyond fabric.radix={topo.fabric.radix}",
                        "raise fabric.radix or use a lower port", link.line)
            key = (end.node, end.iface)
            if key in used:
                where = f" (first used on line {used[key]})" if used[key] else ""
                add(field, f"interface {end.node}:{end.iface} is used by two links{where}",
                    "give each link its own interface", link.line)
            used[key] = link.line
    return problems


def _config_db_problems(topo: Topology, name: str) -> list[Problem]:
    """A switch's own config_db.json: only on a switch, not beside an frr.conf, and it must exist."""
    node = topo.node(name)
    assert node.config_db is not None
    field = f"nodes.{name}.binds" if topo.kind == "clab" else f"nodes.{name}.config_db"
    where = "in 'binds:'" if topo.kind == "clab" else "of 'config_db:'"
    if not node.is_switch:
        return [Problem(topo.source, field, f"{name} is a {node.role}; only a switch (spine, leaf or router) runs a "
                        "SONiC config_db.json", "remove config_db, or make the node a switch")]
    if node.user_frr:
        return [Problem(topo.source, field, f"{name} has both its own frr.conf and its own config_db.json",
                        "keep one: config_db.json for a SONiC switch, frr.conf for a plain FRR router")]
    if not node.config_db.exists():  # twin.host.userfile judges what exists
        return [Problem(topo.source, field, f"config_db.json {node.config_db} does not exist",
                        f"create it or fix the path {where} (paths are relative to the topology file)")]
    return []


def _mixed_link_problems(topo: Topology) -> list[Problem]:
    """A switch that brings its own config_db.json linked to a switch twin plans: twin's /31 for the
    link could not agree with the addresses the user's file gives its end."""
    nodes = {n.name: n for n in topo.nodes}
    out = []
    for i, link in enumerate(topo.links):
        a, b = nodes.get(link.a.node), nodes.get(link.b.node)
        if a is None or b is None:
            continue
        for mine, other in ((a, b), (b, a)):
            if mine.user_config and other.planned:
                out.append(Problem(topo.source, f"links.{i}", f"{mine.name} runs its own config_db.json "
                                   f"({mine.config_db}) but {other.name} has none, so twin would plan {other.name}'s "
                                   f"end of this link without knowing the address {mine.name}'s file gives its end",
                                   f"give {other.name} its own config_db.json as well (every switch linked to one "
                                   "that brings its config must bring one), or remove the one of "
                                   f"{mine.name}", link.line))
                break
    return out
