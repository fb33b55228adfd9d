"""Inject and restore the faults of one drill, each by the class its kind is registered with."""

from __future__ import annotations

import shutil
from collections.abc import Iterable

from twin.drills.faults.base import Fault, FaultKind, KindCheck, LabAccess
from twin.drills.faults.registry import fault_kind
from twin.lab.running import RunningLab
from twin.model.drill import Step
from twin.model.errors import DrillError
from twin.runtime.registry import Runtime


def check_tools(kinds: Iterable[str]) -> None:
    """A DrillError naming the package to install when a kind's tool is missing on this machine."""
    for kind in kinds:
        tool = fault_kind(kind).tool
        if tool and shutil.which(tool[0]) is None:
            raise DrillError(f"{kind} needs {tool[0]}, which is not installed: apt-get install {tool[1]} "
                             "(make lab-up installs it)")


class Injector:
    """One instance of each kind used in a drill, so that a restore finds what its inject saved."""

    def __init__(self, runtime: Runtime, lab: RunningLab) -> None:
        self.lab = LabAccess(runtime, lab)
        self._kinds: dict[str, FaultKind] = {}

    def _of(self, fault: Fault) -> FaultKind:
        if fault.kind not in self._kinds:
            self._kinds[fault.kind] = fault_kind(fault.kind)(self.lab)
        return self._kinds[fault.kind]

    def apply(self, fault: Fault, step: Step, inject: bool) -> str:
        """Inject or restore one fault; returns how it was done, for the report."""
        kind = self._of(fault)
        return kind.inject(fault, step) if inject else kind.restore(fault, step)

    def verify(self, fault: Fault, injected: bool) -> KindCheck | None:
        """The kind's own check right after an injection or a restore (None: it has none)."""
        return self._of(fault).verify(fault, injected)
