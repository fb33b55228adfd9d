"""Imported routers running ospfd have a Full adjacency on every link to another OSPF router."""

from __future__ import annotations

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.results import ItemResult


class OspfInput(CheckInput):
    adjacencies: dict[str, dict[str, str]]  # router -> interface -> peer router


class OspfAdjacencies(Check[OspfInput]):
    name = "ospf-adjacencies"
    description = "every OSPF router link has a Full adjacency"
    needs = ("ospf_neighbors",)
    per_node = "adjacencies"

    def nodes(self) -> list[str]:
        return sorted(self.inputs.adjacencies)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for router, ifaces in sorted(self.inputs.adjacencies.items()):
            raw = outputs.get(router, {}).get("ospf_neighbors") or {}
            full = {n.get("ifaceName", "").split(":")[0] for entries in raw.get("neighbors", {}).values()
                    for n in entries if str(n.get("nbrState", n.get("state", ""))).startswith("Full")}
            for iface, peer in sorted(ifaces.items()):
                ok = iface in full
                items.append(ItemResult(subject=f"{router} {iface} -> {peer}", status="success" if ok else "failure",
                                        message="Full" if ok else "expected a Full adjacency, none seen"))
        return items
