"""twin's own switch: SONiC's redis databases and config daemons run by twin, FRR configured from
config_db.json as bgpcfgd/frrcfgd would (twin.switch). Facts in frr_switch.yaml; the runtimes start
it (twin.runtime.bringup), the containerlab topology runs it with `exec:` lines (twin.runtime.clab)."""

from __future__ import annotations

from pathlib import Path

from twin.kinds.facts import load_facts
from twin.model.plan import InterfacePlan, Plan

FACTS = load_facts("frr_switch")
SWITCH_SYSCTLS = FACTS.sysctls


class FrrSwitchKind:
    """Ports keep the plan's kernel names (Ethernet0, ...) inside containers too; the agent serves
    the databases twin runs in the switch's run directory."""

    facts = FACTS

    def container_iface(self, iface: InterfacePlan) -> str:
        return iface.kernel

    def plan_problems(self, plan: Plan) -> list[str]:
        return []

    def agent_backend(self, rundir: Path) -> dict[str, str]:
        return {}


KIND = FrrSwitchKind()
