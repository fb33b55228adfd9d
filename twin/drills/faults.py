"""Inject and restore each kind of fault, through the runtime or over gNMI as an operator would.

- loss of a node or link: the link ends go down (the far ends lose carrier, as on a real cut);
- spine-silent: nftables in the spine drops everything but management, links stay up;
- link-gray: iptables' `statistic` match drops a share of packets on one link, both ways;
- session-reset and mtu-mismatch: a gNMI Set on the switch, the way a bad change would arrive.
"""

from __future__ import annotations

from typing import Any

from twin.drills.targets import Fault
from twin.gnmi.client import SwitchClient
from twin.host.shell import run
from twin.lab.running import RunningLab
from twin.model.drill import Step
from twin.model.errors import DrillError
from twin.runtime.registry import Runtime

SILENT_TABLE = "twin_drill_silent"
SILENT_RULES = f"""table inet {SILENT_TABLE} {{
  chain ingress {{ type filter hook prerouting priority -300; policy accept; iifname != "eth0" drop; }}
  chain egress {{ type filter hook output priority -300; policy accept; oifname != "eth0" drop; }}
}}
"""
CONFIG = "/sonic-db:CONFIG_DB/localhost"


def gray_rules(iface: str, probability: float) -> list[list[str]]:
    """iptables rules dropping `probability` of packets entering and leaving `iface`."""
    p = f"{probability:.6f}"
    match = ["-m", "statistic", "--mode", "random", "--probability", p, "-j", "DROP"]
    return [["-t", "raw", "PREROUTING", "-i", iface, *match],
            ["-t", "mangle", "POSTROUTING", "-o", iface, *match]]


class Injector:
    def __init__(self, runtime: Runtime, lab: RunningLab) -> None:
        self.runtime, self.lab, self.state, self.plan = runtime, lab, lab.state, lab.plan
        self._saved: dict[str, Any] = {}

    def _node_cmd(self, node: str, cmd: list[str], input: str | None = None) -> None:
        proc = run(self.runtime.exec_argv(self.state, node, cmd), input=input, check=False)
        if proc.returncode != 0:
            raise DrillError(f"{node}: {' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")

    def _end(self, fault: Fault) -> tuple[str, str]:
        node, port = fault.target.split(":")
        return node, self.plan.node(node).iface(port).kernel

    def _node_links(self, node: str) -> list[str]:
        return [i.kernel for i in self.plan.node(node).interfaces]

    def apply(self, fault: Fault, step: Step, inject: bool) -> str:
        """Inject or restore one fault; returns how it was done, for the report."""
        kind = fault.kind
        if kind in ("spine-loss", "leaf-loss"):
            return self.runtime.node_loss(self.state, fault.target, self._node_links(fault.target), inject)
        if kind == "spine-silent":
            if inject:
                self._node_cmd(fault.target, ["nft", "-f", "-"], input=SILENT_RULES)
            else:
                self._node_cmd(fault.target, ["nft", "delete", "table", "inet", SILENT_TABLE])
            return f"nftables table {SILENT_TABLE} in {fault.target} drops all but management"
        if kind in ("link-down", "link-flap"):
            node, iface = self._end(fault)
            self.runtime.set_link_state(self.state, node, [iface], not inject)
            return f"{node} {iface} administratively down"
        if kind == "link-gray":
            node, iface = self._end(fault)
            for rule in gray_rules(iface, step.loss_pct / 100):
                table, chain, rest = rule[:2], rule[2], rule[3:]
                self._node_cmd(node, ["iptables", *table, "-I" if inject else "-D", chain, *rest])
            return f"iptables statistic drop of {step.loss_pct:g} % both ways on {node} {iface}"
        if kind == "session-reset":
            self._session(fault, inject)
            return "gNMI Set of BGP_NEIGHBOR admin_status"
        if kind == "mtu-mismatch":
            self._mtu(fault, step, inject)
            return "gNMI Set of PORT mtu"
        raise DrillError(f"unknown drill kind {kind}")  # pragma: no cover - Kind is a closed Literal

    def _session(self, fault: Fault, inject: bool) -> None:
        node, _ = fault.target.split(":")
        mine = [s for s in fault.sessions if s.node == node]
        if not mine:
            raise DrillError(f"{fault.target} carries no BGP session of {node}")
        with SwitchClient.of(self.lab, node) as sw:
            sw.set_field("BGP_NEIGHBOR", f"default|{mine[0].peer_ip}", "admin_status", "down" if inject else "up")

    def _mtu(self, fault: Fault, step: Step, inject: bool) -> None:
        node, port = fault.target.split(":")
        with SwitchClient.of(self.lab, node) as sw:
            if inject:
                row = sw.get(f"{CONFIG}/PORT/{port}") or {}
                self._saved[fault.target] = str(row.get("mtu", self.plan.fabric.mtu))
                sw.set_field("PORT", port, "mtu", str(step.mtu))
            else:
                sw.set_field("PORT", port, "mtu", self._saved.pop(fault.target, str(self.plan.fabric.mtu)))

    def jumbo_ping(self, fault: Fault) -> bool:
        """A DF ping at the fabric MTU from the far end of the link towards the near end."""
        assert fault.link is not None
        node, port = fault.target.split(":")
        near = self.plan.node(node).iface(port)
        far = fault.link.b_node if fault.link.a_node == node else fault.link.a_node
        assert near.address is not None
        size = self.plan.fabric.mtu - 28
        proc = run(self.runtime.exec_argv(self.state, far, ["ping", "-M", "do", "-s", str(size), "-c", "2",
                                                               "-i", "0.2", "-W", "1", str(near.address.ip)]),
                   check=False)
        return proc.returncode == 0
