"""session-reset: BGP_NEIGHBOR admin_status down on the near end, the way a bad change would arrive at a
switch (`config bgp shutdown neighbor`, or a gNMI Set without save-on-set, sonic-gnmi's default); the restore
puts back what admin_status was (removing it if it was not set).

The change is written to the switch's running CONFIG_DB only, never to config_db.json (running_config.py):
a drill that is killed cannot leave the session down in the saved config."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind, LabAccess
from twin.drills.faults.running_config import RunningChanges
from twin.model.drill import Slo, Step
from twin.model.errors import DrillError

HOW = "BGP_NEIGHBOR admin_status in the running CONFIG_DB (as `config bgp shutdown neighbor`; not saved)"


class SessionReset(FaultKind):
    kind = "session-reset"
    slo: ClassVar[Slo | None] = Slo(loss_ms=200, cycle_s=20)

    def __init__(self, lab: LabAccess) -> None:
        super().__init__(lab)
        self._changes = RunningChanges(lab)

    def inject(self, fault: Fault, step: Step) -> str:
        node, key = self._neighbor(fault)
        self._changes.change(fault.target, node, "BGP_NEIGHBOR", key, "admin_status", "down")
        return HOW

    def restore(self, fault: Fault, step: Step) -> str:
        done = self._changes.restore(fault.target)
        return "nothing to restore" if done is None else HOW + done

    @staticmethod
    def _neighbor(fault: Fault) -> tuple[str, str]:
        node, _ = fault.target.split(":")
        mine = [s for s in fault.sessions if s.node == node]
        if not mine:
            raise DrillError(f"{fault.target} carries no BGP session of {node}")
        return node, f"default|{mine[0].peer_ip}"
