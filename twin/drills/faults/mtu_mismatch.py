"""mtu-mismatch: a gNMI Set of PORT mtu on one end of a link (the restore puts the old value back).

Routing is not expected to change; instead, while the mismatch is in place, `twin verify`'s MTU check
and a DF ping at the fabric MTU must both fail, and after the restore both must pass (`verify`)."""

from __future__ import annotations

import time
from typing import ClassVar

from twin.checks.catalog import fabric_links
from twin.checks.collect_gnmi import collect_gnmi
from twin.checks.mtu import MtuConsistent, MtuInput
from twin.drills.faults.base import Fault, FaultKind, KindCheck, LabAccess
from twin.gnmi.client import SwitchClient
from twin.host.shell import run
from twin.model.drill import Step

CONFIG = "/sonic-db:CONFIG_DB/localhost"


class MtuMismatch(FaultKind):
    kind = "mtu-mismatch"
    changes_topology: ClassVar[bool] = False

    def __init__(self, lab: LabAccess) -> None:
        super().__init__(lab)
        self._saved: dict[str, str] = {}   # target -> the MTU the inject replaced

    def inject(self, fault: Fault, step: Step) -> str:
        node, port = fault.target.split(":")
        with SwitchClient.of(self.lab.running, node) as sw:
            row = sw.get(f"{CONFIG}/PORT/{port}") or {}
            self._saved[fault.target] = str(row.get("mtu", self.lab.plan.fabric.mtu))
            sw.set_field("PORT", port, "mtu", str(step.mtu))
        return "gNMI Set of PORT mtu"

    def restore(self, fault: Fault, step: Step) -> str:
        node, port = fault.target.split(":")
        with SwitchClient.of(self.lab.running, node) as sw:
            sw.set_field("PORT", port, "mtu", self._saved.pop(fault.target, str(self.lab.plan.fabric.mtu)))
        return "gNMI Set of PORT mtu"

    def verify(self, fault: Fault, injected: bool) -> KindCheck:
        plan = self.lab.plan
        t = time.time()
        check = MtuConsistent(MtuInput(links=fabric_links(plan)))
        while True:
            mismatch = check.evaluate(collect_gnmi(self.lab.running, [check])).status == "failure"
            if mismatch == injected or time.time() > t + 5:
                break
            time.sleep(0.05)
        seen_ms = round((time.time() - t) * 1000, 1)
        ping_ok = self.jumbo_ping(fault)
        note = (f"{'during' if injected else 'after'} the mismatch: the MTU check "
                f"{'reports it' if mismatch else 'is clean'}, a {plan.fabric.mtu}-byte DF ping "
                f"{'passes' if ping_ok else 'fails'}")
        if injected:
            return KindCheck({"mtu_check_caught": mismatch, "jumbo_df_ping_caught": not ping_ok}, note,
                           detect_ms=seen_ms if mismatch else None)
        return KindCheck({"mtu_check_clean_after": not mismatch, "jumbo_df_ping_after": ping_ok}, note)

    def jumbo_ping(self, fault: Fault) -> bool:
        """A DF ping at the fabric MTU from the far end of the link towards the near end."""
        assert fault.link is not None
        lab = self.lab
        node, port = fault.target.split(":")
        near = lab.plan.node(node).iface(port)
        far = fault.link.b_node if fault.link.a_node == node else fault.link.a_node
        assert near.address is not None
        size = lab.plan.fabric.mtu - 28
        proc = run(lab.runtime.exec_argv(lab.state, far, ["ping", "-M", "do", "-s", str(size), "-c", "2",
                                                           "-i", "0.2", "-W", "1", str(near.address.ip)]),
                   check=False)
        return proc.returncode == 0
