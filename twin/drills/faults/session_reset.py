"""session-reset: a gNMI Set of BGP_NEIGHBOR admin_status down on the near end, the way a bad change
would arrive; the restore sets it up again."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind
from twin.gnmi.client import SwitchClient
from twin.model.drill import Slo, Step
from twin.model.errors import DrillError


class SessionReset(FaultKind):
    kind = "session-reset"
    slo: ClassVar[Slo | None] = Slo(loss_ms=200, cycle_s=20)

    def inject(self, fault: Fault, step: Step) -> str:
        return self._admin(fault, "down")

    def restore(self, fault: Fault, step: Step) -> str:
        return self._admin(fault, "up")

    def _admin(self, fault: Fault, status: str) -> str:
        node, _ = fault.target.split(":")
        mine = [s for s in fault.sessions if s.node == node]
        if not mine:
            raise DrillError(f"{fault.target} carries no BGP session of {node}")
        with SwitchClient.of(self.lab.running, node) as sw:
            sw.set_field("BGP_NEIGHBOR", f"default|{mine[0].peer_ip}", "admin_status", status)
        return "gNMI Set of BGP_NEIGHBOR admin_status"
