"""BFD is Up for every BGP neighbor that has `bfd: "true"` (STATE_DB BFD_SESSION_TABLE)."""

from __future__ import annotations

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.results import ItemResult


class BfdInput(CheckInput):
    peers: dict[str, list[str]]  # switch -> peer addresses with BFD configured


class BfdSessionsUp(Check[BfdInput]):
    name = "bfd-sessions"
    description = "BFD is Up with every neighbor that has BFD configured"
    needs = ("bfd_sessions",)
    per_node = "peers"

    def nodes(self) -> list[str]:
        return sorted(self.inputs.peers)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for switch, peers in sorted(self.inputs.peers.items()):
            table = outputs.get(switch, {}).get("bfd_sessions") or {}
            by_peer = {key.rsplit("|", 1)[-1]: row for key, row in table.items()}
            for peer in sorted(peers):
                state = by_peer.get(peer, {}).get("state", "missing")
                ok = state == "Up"
                items.append(ItemResult(subject=f"{switch} -> {peer}", status="success" if ok else "failure",
                                        message="Up" if ok else f"expected Up, seen {state}"))
        return items
