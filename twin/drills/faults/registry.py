"""Every fault kind by name. model.drill.KINDS is the list of valid names (what scenarios and the CLI
accept); tests/unit/test_drill_faults.py checks that each has exactly one class here."""

from __future__ import annotations

from twin.drills.faults.base import FaultKind
from twin.drills.faults.leaf_loss import LeafLoss
from twin.drills.faults.link_down import LinkDown
from twin.drills.faults.link_flap import LinkFlap
from twin.drills.faults.link_gray import LinkGray
from twin.drills.faults.mtu_mismatch import MtuMismatch
from twin.drills.faults.session_reset import SessionReset
from twin.drills.faults.spine_loss import SpineLoss
from twin.drills.faults.spine_silent import SpineSilent
from twin.drills.faults.warm_reboot import WarmReboot
from twin.model.errors import DrillError

FAULT_KINDS: dict[str, type[FaultKind]] = {cls.kind: cls for cls in (
    SpineLoss, SpineSilent, LeafLoss, LinkDown, LinkFlap, LinkGray, SessionReset, MtuMismatch, WarmReboot,
)}


def fault_kind(kind: str) -> type[FaultKind]:
    """The class of the fault kind called `kind`."""
    try:
        return FAULT_KINDS[kind]
    except KeyError:
        raise DrillError(f"unknown drill kind {kind}; kinds: {', '.join(FAULT_KINDS)}") from None
