"""Every server reaches every server on another leaf (ICMP from each NIC's address)."""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check, CheckInput, Outputs, Source
from twin.model.results import ItemResult


class PingInput(CheckInput):
    # server -> source address -> {target address: target label}
    probes: dict[str, dict[str, dict[str, str]]]


class ServerReachability(Check[PingInput]):
    name = "server-reachability"
    description = "every server pings every server behind another leaf or router"
    needs = ("ping",)

    def nodes(self) -> list[str]:
        return sorted(self.inputs.probes)

    def argument(self, node: str, source: Source) -> Any:
        return self.inputs.probes.get(node)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for server, by_source in sorted(self.inputs.probes.items()):
            alive: dict[str, list[str]] = outputs.get(server, {}).get("ping") or {}
            for src, targets in sorted(by_source.items()):
                answered = set(alive.get(src, []))
                missing = [label for addr, label in sorted(targets.items()) if addr not in answered]
                if missing:
                    items.append(ItemResult(subject=f"{server} ({src})", status="failure",
                                            message=f"no reply from {len(missing)}/{len(targets)}: "
                                            + ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else "")))
                else:
                    items.append(ItemResult(subject=f"{server} ({src})", status="success",
                                            message=f"{len(targets)} servers reached"))
        return items
