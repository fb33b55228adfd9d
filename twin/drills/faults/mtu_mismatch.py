"""mtu-mismatch: PORT mtu changed on one end of a link in the switch's running CONFIG_DB (the restore puts
the old value back, or removes the field if there was none).

The change is written as `config interface mtu` writes it: CONFIG_DB only, never config_db.json, so a
drill that is killed cannot leave the mismatch in the switch's saved config (running_config.py).
Routing is not expected to change; instead, while the mismatch is in place, `twin verify`'s MTU check
and a DF ping at the fabric MTU must both fail, and after the restore both must pass (`verify`)."""

from __future__ import annotations

import time
from typing import ClassVar

from twin.checks.catalog import fabric_links
from twin.checks.collect_gnmi import collect_gnmi
from twin.checks.mtu import MtuConsistent, MtuInput
from twin.drills.faults.base import Fault, FaultKind, KindCheck, LabAccess
from twin.drills.faults.running_config import RunningChanges
from twin.host.poll import poll_until
from twin.host.shell import run
from twin.model.drill import Step

HOW = "PORT mtu in the running CONFIG_DB (as `config interface mtu`; not saved)"


class MtuMismatch(FaultKind):
    kind = "mtu-mismatch"
    changes_topology: ClassVar[bool] = False

    def __init__(self, lab: LabAccess) -> None:
        super().__init__(lab)
        self._changes = RunningChanges(lab)

    def inject(self, fault: Fault, step: Step) -> str:
        node, port = fault.target.split(":")
        self._changes.change(fault.target, node, "PORT", port, "mtu", str(step.mtu))
        return HOW

    def restore(self, fault: Fault, step: Step) -> str:
        done = self._changes.restore(fault.target)
        return "nothing to restore" if done is None else HOW + done

    def verify(self, fault: Fault, injected: bool) -> KindCheck:
        plan = self.lab.plan
        t = time.time()
        check = MtuConsistent(MtuInput(links=fabric_links(plan)))
        mismatch = not injected

        def seen() -> bool:
            nonlocal mismatch
            mismatch = check.evaluate(collect_gnmi(self.lab.running, [check])).status == "failure"
            return mismatch == injected

        poll_until(seen, 5.0, 0.05)
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
