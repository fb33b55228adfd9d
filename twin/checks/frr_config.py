"""Every switch's FRR runs what its CONFIG_DB renders: no line missing, none beyond it
(twin.switch.frr.frr_drift), each difference named in CONFIG_DB's words where a field renders it,
e.g. "BGP_NEIGHBOR|default|10.0.0.64 admin_status=down but FRR has no 'neighbor 10.0.0.64 shutdown'".

The collector (twin.checks.collect_frr) reads, per switch and at one moment, CONFIG_DB, what it
renders (with the lab's SONiC templates when it has them) and FRR's running config; this check
only compares them."""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.results import ItemResult
from twin.switch.frr.frr_drift import describe, drift

SHOWN = 20  # differences listed per switch; the rest are counted


class FrrConfigInput(CheckInput):
    switches: list[str]


class FrrRunsConfigDb(Check[FrrConfigInput]):
    name = "frr-config"
    description = "every switch's FRR runs what its CONFIG_DB renders, line for line"
    needs = ("frr_config",)

    def nodes(self) -> list[str]:
        return self.inputs.switches

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items: list[ItemResult] = []
        for switch in self.nodes():
            items += switch_items(switch, outputs.get(switch, {}).get("frr_config"))
        return items


def switch_items(switch: str, facts: dict[str, Any] | None) -> list[ItemResult]:
    """One switch's verdict from what was read of it: {"config_db", "rendered", "running"}."""
    if not facts or facts.get("running") is None:
        why = (facts or {}).get("why") or "not read"
        return [ItemResult(subject=switch, status="skipped", message=f"FRR's running config not compared: {why}")]
    found = drift(facts["rendered"], facts["running"])
    if not found:
        return [ItemResult(subject=switch, status="success", message="FRR runs what CONFIG_DB renders")]
    items = [ItemResult(subject=switch, status="failure", message=describe(d, facts["config_db"]))
             for d in found[:SHOWN]]
    if len(found) > SHOWN:
        items.append(ItemResult(subject=switch, status="failure",
                                message=f"... and {len(found) - SHOWN} more lines differ"))
    return items
