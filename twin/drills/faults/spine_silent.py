"""spine-silent: nftables in the spine drops everything but management; its links stay up, so only
BFD (or the hold timer) notices."""

from __future__ import annotations

from typing import ClassVar

from twin.drills.faults.base import Fault, FaultKind
from twin.model.drill import Slo, Step

SILENT_TABLE = "twin_drill_silent"
SILENT_RULES = f"""table inet {SILENT_TABLE} {{
  chain ingress {{ type filter hook prerouting priority -300; policy accept; iifname != "eth0" drop; }}
  chain egress {{ type filter hook output priority -300; policy accept; oifname != "eth0" drop; }}
}}
"""


class SpineSilent(FaultKind):
    kind = "spine-silent"
    role: ClassVar[str | None] = "spine"
    # only BFD sees a silent spine: SONiC's 300 ms x 3 declares it down ~900 ms in, then BGP withdraws
    slo: ClassVar[Slo | None] = Slo(loss_ms=1500, cycle_s=20)
    tool: ClassVar[tuple[str, str] | None] = ("nft", "nftables")

    def inject(self, fault: Fault, step: Step) -> str:
        self.lab.node_cmd(fault.target, ["nft", "-f", "-"], input=SILENT_RULES)
        return self._how(fault)

    def restore(self, fault: Fault, step: Step) -> str:
        self.lab.node_cmd(fault.target, ["nft", "delete", "table", "inet", SILENT_TABLE])
        return self._how(fault)

    def _how(self, fault: Fault) -> str:
        return f"nftables table {SILENT_TABLE} in {fault.target} drops all but management"
