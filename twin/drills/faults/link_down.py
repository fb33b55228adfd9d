"""link-down: one end of a link administratively down (the far end loses carrier, as on a real cut)."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind
from twin.model.drill import Slo, Step


class LinkDown(FaultKind):
    kind = "link-down"
    slo: ClassVar[Slo | None] = Slo(loss_ms=200, cycle_s=20)

    def inject(self, fault: Fault, step: Step) -> str:
        return self._set(fault, up=False)

    def restore(self, fault: Fault, step: Step) -> str:
        return self._set(fault, up=True)

    def _set(self, fault: Fault, up: bool) -> str:
        node, iface = self.lab.link_end(fault)
        self.lab.runtime.set_link_state(self.lab.state, node, [iface], up)
        return f"{node} {iface} administratively down"
