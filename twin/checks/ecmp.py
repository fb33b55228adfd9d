"""Every leaf reaches every other leaf's prefixes over the planned number of equal-cost paths."""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.results import ItemResult


class EcmpInput(CheckInput):
    expected: dict[str, dict[str, int]]  # leaf -> prefix -> expected path count


def fib_widths(routes: list[dict[str, Any]]) -> dict[str, int]:
    """Prefix -> number of next hops in the kernel FIB (`ip -j route` output)."""
    widths = {}
    for r in routes:
        dst = r.get("dst", "")
        if dst == "default":
            continue
        if "/" not in dst:
            dst += "/32"
        widths[dst] = len(r["nexthops"]) if "nexthops" in r else 1
    return widths


class EcmpWidth(Check[EcmpInput]):
    name = "ecmp-width"
    description = "every leaf has full ECMP to every other leaf's loopback and server subnets"
    needs = ("fib",)
    per_node = "expected"

    def nodes(self) -> list[str]:
        return sorted(self.inputs.expected)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for leaf, prefixes in sorted(self.inputs.expected.items()):
            widths = fib_widths(outputs.get(leaf, {}).get("fib") or [])
            bad = [(p, want, widths.get(p, 0)) for p, want in sorted(prefixes.items())
                   if widths.get(p, 0) != want]
            if not bad:
                items.append(ItemResult(subject=leaf, status="success",
                                        message=f"{len(prefixes)} prefixes at full width"))
            for prefix, want, seen in bad:
                items.append(ItemResult(subject=f"{leaf} {prefix}", status="failure",
                                        message=f"expected {want} paths, seen {seen}"))
        return items


def ecmp_summary(expected: dict[str, dict[str, int]], outputs: Outputs) -> dict[str, dict[str, int]]:
    """Per leaf: min and max path count towards the other leaves' prefixes."""
    out = {}
    for leaf, prefixes in sorted(expected.items()):
        widths = fib_widths(outputs.get(leaf, {}).get("fib") or [])
        seen = [widths.get(p, 0) for p in prefixes]
        out[leaf] = {"min": min(seen, default=0), "max": max(seen, default=0)}
    return out
