"""What a node kind without quirks answers: interfaces keep the plan's kernel names inside containers
too, the kind can run any plan, and the gNMI agent serves it (if it is a switch) through the databases
twin runs itself. A kind's class adds how it is started (`prepare`, `clab_exec`: twin.kinds.protocol)."""

from __future__ import annotations

from pathlib import Path

from twin.kinds.facts import KindFacts
from twin.model.plan import InterfacePlan, Plan


class PlainKind:
    def __init__(self, facts: KindFacts) -> None:
        self.facts = facts

    def container_iface(self, iface: InterfacePlan) -> str:
        return iface.kernel

    def plan_problems(self, plan: Plan) -> list[str]:
        return []

    def agent_backend(self, rundir: Path) -> dict[str, str]:
        return {}
