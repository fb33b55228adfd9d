"""Both ends of every switch-to-switch link have the same MTU (STATE_DB PORT_TABLE)."""

from __future__ import annotations

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.results import ItemResult


class MtuInput(CheckInput):
    links: list[tuple[str, str, str, str]]  # (switch a, port a, switch b, port b)


class MtuConsistent(Check[MtuInput]):
    name = "link-mtu"
    description = "interface MTUs agree on both ends of every fabric link"
    needs = ("port_table",)

    def nodes(self) -> list[str]:
        return sorted({n for a, _, b, _ in self.inputs.links for n in (a, b)})

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for a, pa, b, pb in self.inputs.links:
            ma = (outputs.get(a, {}).get("port_table") or {}).get(pa, {}).get("mtu", "missing")
            mb = (outputs.get(b, {}).get("port_table") or {}).get(pb, {}).get("mtu", "missing")
            ok = ma == mb and ma != "missing"
            items.append(ItemResult(subject=f"{a}:{pa} - {b}:{pb}", status="success" if ok else "failure",
                                    message=f"MTU {ma}" if ok else f"expected equal MTUs, seen {ma} and {mb}"))
        return items
