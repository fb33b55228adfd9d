"""Both ends of every link that carries RoCE have the same MTU: switch to switch, and switch to server.

A switch's end is read from STATE_DB PORT_TABLE (over gNMI), a server's from its kernel (`interfaces`):
a leaf port lowered to 9000 while the server's NIC stays at 9100 drops every DF frame over 9000 bytes
from that server, and the fabric links alone would all look fine.
"""

from __future__ import annotations

from pydantic import Field

from twin.checks.base import Check, CheckInput, Outputs, Source
from twin.model.results import ItemResult


class MtuInput(CheckInput):
    links: list[tuple[str, str, str, str]]  # (switch a, port a, switch b, port b)
    server_links: list[tuple[str, str, str, str]] = Field(default_factory=list)  # (switch, port, server, its NIC)


class MtuConsistent(Check[MtuInput]):
    name = "link-mtu"
    description = "interface MTUs agree on both ends of every fabric and server link"
    needs = ("port_table", "interfaces")

    def _servers(self) -> set[str]:
        return {server for _, _, server, _ in self.inputs.server_links}

    def nodes(self) -> list[str]:
        return sorted({n for a, _, b, _ in self.inputs.links + self.inputs.server_links for n in (a, b)})

    def sources(self, node: str) -> tuple[Source, ...]:
        return ("interfaces",) if node in self._servers() else ("port_table",)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        servers = self._servers()

        def mtu(node: str, port: str) -> str:
            table = outputs.get(node, {}).get("interfaces" if node in servers else "port_table") or {}
            return str(table.get(port, {}).get("mtu", "missing"))

        items = []
        for a, pa, b, pb in self.inputs.links + self.inputs.server_links:
            ma, mb = mtu(a, pa), mtu(b, pb)
            ok = ma == mb and ma != "missing"
            items.append(ItemResult(subject=f"{a}:{pa} - {b}:{pb}", status="success" if ok else "failure",
                                    message=f"MTU {ma}" if ok else f"expected equal MTUs, seen {ma} and {mb}"))
        return items
