"""link-flap: link-down, repeated; drills/schedule.py expands a step into its flaps (flaps, period, hold)."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.link_down import LinkDown
from twin.model.drill import Slo


class LinkFlap(LinkDown):
    kind = "link-flap"
    repeated: ClassVar[bool] = True
    slo: ClassVar[Slo | None] = None   # not link-down's: a train of flaps has no built-in limits
