"""leaf-loss: a leaf loses power, as spine-loss does to a spine (its servers stop sending probe traffic)."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.spine_loss import SpineLoss
from twin.model.drill import Slo


class LeafLoss(SpineLoss):
    kind = "leaf-loss"
    role: ClassVar[str | None] = "leaf"
    slo: ClassVar[Slo | None] = Slo(loss_ms=200, cycle_s=20)
