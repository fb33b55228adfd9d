"""A router imported from a .clab.yml (kind linux, /etc/frr bound): it runs the user's own frr.conf
and daemons files (NodePlan.frr_conf, NodePlan.daemons). Facts in frr_router.yaml."""

from __future__ import annotations

from pathlib import Path

from twin.kinds.facts import load_facts
from twin.model.plan import InterfacePlan, Plan

FACTS = load_facts("frr_router")


class FrrRouterKind:
    """Interfaces keep their kernel names; the gNMI agent does not serve it (it is not a switch)."""

    facts = FACTS

    def container_iface(self, iface: InterfacePlan) -> str:
        return iface.kernel

    def plan_problems(self, plan: Plan) -> list[str]:
        return []

    def agent_backend(self, rundir: Path) -> dict[str, str]:
        return {}


KIND = FrrRouterKind()
