"""warm-reboot: a leaf is warm-rebooted as an operator does it, over gNOI (System.Reboot WARM): its
control plane restarts (zebra and bgpd killed, FRR started again; twin.switch.restart.reboot) while
its forwarding is kept. What SONiC's warm reboot promises is no data-plane loss, so the kind's limit
is none; the drill also reports the control plane's downtime: from the request until every BGP
session of the leaf is Established again, and how long its management address was silent.

Nothing is taken out of the fabric: the routes must not change (a graceful-restart helper keeps the
leaf's routes while its bgpd restarts), and there is nothing to restore afterwards."""

from __future__ import annotations

import json
import time
from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind, KindCheck, LabAccess
from twin.gnmi.gnoi import SystemClient, await_reboot
from twin.host.poll import poll_until
from twin.host.shell import run
from twin.model.drill import Slo, Step
from twin.model.errors import DrillError, GnmiError

MESSAGE = "twin drill warm-reboot"
SESSIONS_BACK_S = 120   # after the switch answers again: its sessions' restart and graceful-restart exchange


class WarmReboot(FaultKind):
    kind = "warm-reboot"
    role: ClassVar[str | None] = "leaf"
    changes_topology: ClassVar[bool] = False
    slo: ClassVar[Slo | None] = Slo(loss_ms=0)

    def __init__(self, lab: LabAccess) -> None:
        super().__init__(lab)
        self._requested: dict[str, float] = {}

    def _client(self, node: str) -> SystemClient:
        target = self.lab.running.gnmi_target(node)
        if target is None:
            raise DrillError(f"{node} has no gNMI agent to take a gNOI Reboot")
        return SystemClient(node, target)

    def inject(self, fault: Fault, step: Step) -> str:
        try:
            self._client(fault.target).reboot("WARM", MESSAGE)
        except GnmiError as exc:
            raise DrillError(str(exc)) from None
        self._requested[fault.target] = time.time()
        return "gNOI System.Reboot WARM (control plane restarted, forwarding kept)"

    def restore(self, fault: Fault, step: Step) -> str:
        return "nothing to restore: the switch has rebooted"

    def verify(self, fault: Fault, injected: bool) -> KindCheck | None:
        """After the request: until the reboot is over and the leaf's sessions are back, with the
        control plane's downtime and the management address's silence in the note."""
        if not injected:
            return None
        lab, node = self.lab, fault.target
        agent = lab.running.agent
        bound = (agent.reboot.shutdown_s + agent.reboot.boot_s if agent is not None else 0) + 120
        watch = await_reboot(self._client(node), bound)
        back = watch.done_at is not None and poll_until(lambda: self._established(node), SESSIONS_BACK_S, 0.1)
        began = self._requested.get(node, time.time())
        control_ms = round((time.time() - began) * 1000) if back else None
        silent = f"{watch.silent_s:.1f} s" if watch.silent_s is not None else "never seen"
        note = (f"warm reboot of {node}: management silent {silent}; " +
                (f"BGP sessions all Established again {control_ms} ms after the request" if back else
                 "its reboot did not finish" if watch.done_at is None else
                 f"its BGP sessions were not all Established {SESSIONS_BACK_S} s after the reboot"))
        figures = {"control_plane_down_ms": float(control_ms)} if control_ms is not None else {}
        if watch.silent_s is not None:
            figures["management_silent_ms"] = round(watch.silent_s * 1000.0, 1)
        return KindCheck({"warm_reboot_completed": watch.done_at is not None, "bgp_back_after_warm_reboot": back},
                         note, figures=figures)

    def _established(self, node: str) -> bool:
        lab = self.lab
        proc = run(lab.runtime.exec_argv(lab.state, node, ["vtysh", "-c", "show bgp summary json"]), check=False)
        try:
            summary = json.loads(proc.stdout)
        except json.JSONDecodeError:
            return False
        peers = [p for family in summary.values() if isinstance(family, dict)
                 for p in (family.get("peers") or {}).values()]
        return bool(peers) and all(p.get("state") == "Established" for p in peers)
