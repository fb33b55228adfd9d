"""Kernel set-up of GPU servers: one interface per NIC, per-NIC routing tables.

Each NIC gets its own table (100 + NIC number) with a default route via its leaf and a rule
that sends traffic sourced from the NIC's address through it, as multi-NIC GPU servers do;
the main table's default route uses the first NIC. Facts (sysctls, no management) in host.yaml.

A host imported from containerlab with `exec:` lines sets itself up instead: its links come up
and its lines run, in order, each once (its launch). Under containerlab the same set-up runs as the
node's `exec:` lines.
"""

from __future__ import annotations

from pathlib import Path

from twin.host.shell import ip_batch, sysctl
from twin.kinds.facts import load_facts
from twin.kinds.linux_start import ip_commands, links_up, sysctl_commands
from twin.kinds.plain import PlainKind
from twin.kinds.protocol import NodeLaunch, NodeProcesses, NodeStart
from twin.model.plan import NodePlan, Plan

FACTS = load_facts("host")
HOST_SYSCTLS = FACTS.sysctls


class HostKind(PlainKind):
    def prepare(self, start: NodeStart, procs: NodeProcesses, rundir: Path) -> NodeLaunch:
        """A server's addresses and routes; its `exec:` lines (in order, each once) are its launch."""
        node = start.node
        sysctl(start.netns, self.facts.sysctls)
        if not node.exec:
            ip_batch(server_lines(node), netns=start.netns)
            return lambda: []
        ip_batch(links_up(node), netns=start.netns)
        return lambda: [procs.exec_line(start.lab, node, line) for line in node.exec]

    def clab_exec(self, plan: Plan, node: NodePlan) -> list[str]:
        """twin's per-NIC addressing, or the links up and the `exec:` lines it was imported with."""
        if node.exec:
            return [*sysctl_commands(self.facts.sysctls), *ip_commands(links_up(node)), *node.exec]
        return [*sysctl_commands(self.facts.sysctls), *ip_commands(server_lines(node))]


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


KIND = HostKind(FACTS)
