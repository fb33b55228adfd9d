"""What a node kind without quirks answers: interfaces keep the plan's kernel names inside containers
too, the kind can run any plan, and the gNMI agent serves it (if it is a switch) through the databases
twin runs itself; nothing is written before its container is made, and it does not boot whole in a
container (the runtime runs its processes). A kind's class adds how it is started (`prepare`,
`clab_exec`: twin.kinds.protocol)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from twin.kinds.facts import KindFacts
from twin.kinds.protocol import NodeLaunch, NodeStart
from twin.model.plan import InterfacePlan, NodePlan, Plan


class PlainKind:
    def __init__(self, facts: KindFacts) -> None:
        self.facts = facts

    def container_iface(self, iface: InterfacePlan) -> str:
        return iface.kernel

    def plan_problems(self, plan: Plan) -> list[str]:
        return []

    def agent_backend(self, rundir: Path) -> dict[str, str]:
        return {}

    def before_container(self, lab: str, plan: Plan, node: NodePlan) -> None:
        return None

    def boot_in_container(self, start: NodeStart, container: str, run_in: Callable[[list[str]], str],
                          supervisord: bool) -> NodeLaunch | None:
        return None
