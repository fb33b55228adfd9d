"""A ping as large as the link's MTU, with Don't Fragment set, crosses every server port: from each
server NIC to the address of the switch port it is attached to.

RoCE sends full-MTU frames that may not be fragmented; a port whose MTU is below its server's NIC
drops them silently while small pings (server-reachability's) still pass. The MTU check compares the
two numbers; this one sends the frame.
"""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check, CheckInput, Outputs, Source
from twin.model.results import ItemResult

IP_ICMP_HEADERS = 28  # an echo request's IPv4 (20) and ICMP (8) headers: `ping -s MTU-28` fills the MTU


class DfProbe(CheckInput):
    switch: str
    port: str
    server: str
    nic: str
    address: str   # the switch port's
    mtu: int       # the link's, as planned (the fabric MTU)

    @property
    def subject(self) -> str:
        return f"{self.switch}:{self.port} - {self.server}:{self.nic}"

    @property
    def payload(self) -> int:
        return self.mtu - IP_ICMP_HEADERS


class DfPingInput(CheckInput):
    probes: list[DfProbe]


class ServerPortsCarryFullFrames(Check[DfPingInput]):
    name = "server-port-df-ping"
    description = "a ping of the link's MTU with Don't Fragment set crosses every server port"
    needs = ("df_ping",)

    def nodes(self) -> list[str]:
        return sorted({p.server for p in self.inputs.probes})

    def argument(self, node: str, source: Source) -> Any:
        """The switch port addresses `node` pings, each with its ICMP data size."""
        return {p.address: p.payload for p in self.inputs.probes if p.server == node}

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for p in self.inputs.probes:
            answered = outputs.get(p.server, {}).get("df_ping") or []
            if p.address in answered:
                items.append(ItemResult(subject=p.subject, status="success",
                                        message=f"{p.mtu}-byte DF ping answered by {p.address}"))
            else:
                items.append(ItemResult(subject=p.subject, status="failure", message=(
                    f"no reply from {p.switch} {p.port} ({p.address}) to a {p.mtu}-byte ping with Don't "
                    f"Fragment ({p.payload} bytes of ICMP data) from {p.server} {p.nic}: an MTU below {p.mtu} "
                    "on this link drops full RoCE frames")))
        return items
