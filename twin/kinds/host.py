"""Kernel set-up of GPU servers: one interface per NIC, per-NIC routing tables.

Each NIC gets its own table (100 + NIC number) with a default route via its leaf and a rule
that sends traffic sourced from the NIC's address through it, as multi-NIC GPU servers do;
the main table's default route uses the first NIC. Facts (sysctls, no management) in host.yaml.
"""

from __future__ import annotations

from twin.kinds.facts import load_facts
from twin.kinds.plain import PlainKind
from twin.model.plan import NodePlan

FACTS = load_facts("host")
HOST_SYSCTLS = FACTS.sysctls


KIND = PlainKind(FACTS)


def server_lines(node: NodePlan) -> list[str]:
    """`ip -b` lines: every NIC up with its address, its own routing table and rule."""
    lines = ["link set dev lo up"]
    first = True
    for k, iface in enumerate(node.interfaces, start=1):
        lines.append(f"link set dev {iface.kernel} mtu {iface.mtu} up")
        if iface.address is None or iface.peer_address is None:
            continue
        table = 100 + k
        gw = iface.peer_address.ip
        lines += [
            f"address add {iface.address} dev {iface.kernel}",
            f"route add default via {gw} dev {iface.kernel} table {table}",
            f"rule add from {iface.address.ip} table {table} pref {1000 + k}",
        ]
        if first:
            lines.append(f"route add default via {gw} dev {iface.kernel}")
            first = False
    return lines
