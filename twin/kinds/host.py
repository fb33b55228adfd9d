"""Kernel set-up of GPU servers: one interface per NIC, per-NIC routing tables.

Each NIC gets its own table (100 + NIC number) with a default route via its leaf and a rule
that sends traffic sourced from the NIC's address through it, as multi-NIC GPU servers do;
the main table's default route uses the first NIC.
"""

from __future__ import annotations

from twin.model.plan import NodePlan

HOST_SYSCTLS = {
    "net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv4.conf.all.arp_ignore": "1", "net.ipv4.conf.all.arp_announce": "2",
    "net.ipv4.fib_multipath_hash_policy": "1",
}
# Multipath hash: policy 3 hashes the fields listed (0x37: source and destination address, protocol,
# source and destination port), as a switch ASIC hashes the 5-tuple. Policy 1 would reuse the hash
# the sending socket put on the packet (veth keeps it), making paths random per socket.
SWITCH_SYSCTLS = {
    "net.ipv4.ip_forward": "1", "net.ipv4.fib_multipath_hash_fields": "0x0037",
    "net.ipv4.fib_multipath_hash_policy": "3",
    "net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv4.conf.all.ignore_routes_with_linkdown": "1",
    "net.ipv4.conf.default.ignore_routes_with_linkdown": "1",
    "net.ipv6.conf.all.forwarding": "1",
}


def server_lines(node: NodePlan) -> list[str]:
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
