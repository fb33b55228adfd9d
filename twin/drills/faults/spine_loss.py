"""spine-loss: a spine loses power; every link end of it goes down at once (the far ends lose carrier)."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind
from twin.model.drill import Slo, Step


class SpineLoss(FaultKind):
    kind = "spine-loss"
    role: ClassVar[str | None] = "spine"
    slo: ClassVar[Slo | None] = Slo(loss_ms=200, cycle_s=20)

    def inject(self, fault: Fault, step: Step) -> str:
        return self._lose(fault, True)

    def restore(self, fault: Fault, step: Step) -> str:
        return self._lose(fault, False)

    def _lose(self, fault: Fault, lost: bool) -> str:
        lab = self.lab
        return lab.runtime.node_loss(lab.state, fault.target, lab.node_links(fault.target), lost)
