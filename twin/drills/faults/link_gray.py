"""link-gray: iptables' `statistic` match drops a share of the packets on one link, both ways. Routing
is not expected to change: a gray link is one the fabric does not see."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind
from twin.model.drill import Step

GRAY_HOLD_MS = 3000   # a gray failure changes no routes, so it has no convergence to wait for


def gray_rules(iface: str, probability: float) -> list[list[str]]:
    """iptables rules dropping `probability` of packets entering and leaving `iface`."""
    p = f"{probability:.6f}"
    match = ["-m", "statistic", "--mode", "random", "--probability", p, "-j", "DROP"]
    return [["-t", "raw", "PREROUTING", "-i", iface, *match],
            ["-t", "mangle", "POSTROUTING", "-o", iface, *match]]


class LinkGray(FaultKind):
    kind = "link-gray"
    changes_topology: ClassVar[bool] = False
    tool: ClassVar[tuple[str, str] | None] = ("iptables", "iptables")
    hold_ms: ClassVar[float | None] = GRAY_HOLD_MS

    def inject(self, fault: Fault, step: Step) -> str:
        return self._rules(fault, step, "-I")

    def restore(self, fault: Fault, step: Step) -> str:
        return self._rules(fault, step, "-D")

    def _rules(self, fault: Fault, step: Step, verb: str) -> str:
        node, iface = self.lab.link_end(fault)
        for rule in gray_rules(iface, step.loss_pct / 100):
            table, chain, rest = rule[:2], rule[2], rule[3:]
            self.lab.node_cmd(node, ["iptables", *table, verb, chain, *rest])
        return f"iptables statistic drop of {step.loss_pct:g} % both ways on {node} {iface}"
