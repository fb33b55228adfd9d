"""Every planned BGP session is Established."""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.results import ItemResult


class BgpInput(CheckInput):
    sessions: dict[str, dict[str, str]]  # switch -> peer ip -> peer name


class BgpSessionsEstablished(Check[BgpInput]):
    name = "bgp-sessions"
    description = "every planned eBGP session is Established"
    needs = ("bgp_summary",)
    per_node = "sessions"

    def nodes(self) -> list[str]:
        return sorted(self.inputs.sessions)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for switch, peers in sorted(self.inputs.sessions.items()):
            summary = outputs.get(switch, {}).get("bgp_summary")
            if summary is None:
                items.append(ItemResult(subject=switch, status="failure",
                                        message="no BGP summary (is bgpd running?)"))
                continue
            seen = summary.get("ipv4Unicast", {}).get("peers", {})
            for ip, name in sorted(peers.items()):
                state = seen.get(ip, {}).get("state", "missing")
                ok = state == "Established"
                items.append(ItemResult(subject=f"{switch} -> {name} ({ip})",
                                        status="success" if ok else "failure",
                                        message="Established" if ok else f"expected Established, seen {state}"))
        return items

    def measurements(self, outputs: Outputs) -> dict[str, float]:
        counts = established_counts(self.inputs.sessions, outputs)
        return {"established": counts[0], "total": counts[1]}


def established_counts(sessions: dict[str, dict[str, str]], outputs: Outputs) -> tuple[int, int]:
    up = total = 0
    for switch, peers in sessions.items():
        seen = _summary_peers(switch, outputs)
        for ip in peers:
            total += 1
            up += seen.get(ip, {}).get("state") == "Established"
    return up, total


def session_resets(sessions: dict[str, dict[str, str]], outputs: Outputs) -> dict[str, int]:
    """switch -> how many of its planned sessions went down after being Established, as its bgpd
    counts them since it started (`connectionsDropped` of `show bgp summary json`); switches with none
    are left out. A connection collision or a refused OPEN never reached Established and is not counted."""
    resets = {}
    for switch, peers in sessions.items():
        seen = _summary_peers(switch, outputs)
        dropped = sum(1 for ip in peers if int(seen.get(ip, {}).get("connectionsDropped") or 0) > 0)
        if dropped:
            resets[switch] = dropped
    return resets


def _summary_peers(switch: str, outputs: Outputs) -> dict[str, dict[str, Any]]:
    """peer ip -> its row of the switch's `show bgp summary json` (IPv4 unicast); {} when not read."""
    peers: dict[str, dict[str, Any]] = (outputs.get(switch, {}).get("bgp_summary") or {}).get(
        "ipv4Unicast", {}).get("peers", {})
    return peers
