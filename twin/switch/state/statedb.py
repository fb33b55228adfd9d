"""A switch's live BFD and port state read straight from FRR and the kernel, for readers without
the switch's databases: the checks of nodes no agent serves and the SSH shell's `show interfaces
status`. The databases themselves are written by twin.switch.state.producers.

- BFD_SESSION_TABLE|default|<if>|<peer> {state, local_addr, ...} (twin.switch.state.producers.bfd_rows)
- PORT_TABLE|<port>                  {oper_status, admin_status, mtu, state}
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twin.switch.frr.frr_vty import ask_json
from twin.switch.state.producers import bfd_rows

Table = dict[str, Any]  # key -> fields


@dataclass(frozen=True)
class SwitchState:
    """Where one switch's live state is: its namespace and its FRR run directory."""

    netns: str
    rundir: Path

    def _frr_json(self, daemon: str, command: str) -> Any:
        """The daemon's JSON answer on its vty socket (what vtysh relays), {} when it has none."""
        answer = ask_json(self.rundir, daemon, command)
        return {} if answer is None else answer

    def _ip_json(self, *args: str) -> Any:
        proc = subprocess.run(["ip", "-n", self.netns, "-j", *args], capture_output=True, text=True, timeout=30)
        try:
            return json.loads(proc.stdout or "[]")
        except json.JSONDecodeError:
            return []

    # -- STATE_DB ---------------------------------------------------------------------------

    def bfd_sessions(self) -> Table:
        return dict(bfd_rows(self._frr_json("bfdd", "show bfd peers json")))

    def _ports(self) -> list[dict[str, Any]]:
        links = self._ip_json("-s", "link", "show")
        return [link for link in links if str(link.get("ifname", "")).startswith("Ethernet")]

    def port_table(self) -> Table:
        out: Table = {}
        for link in self._ports():
            flags = link.get("flags", [])
            out[link["ifname"]] = {
                "oper_status": "up" if "LOWER_UP" in flags and "UP" in flags else "down",
                "admin_status": "up" if "UP" in flags else "down",
                "mtu": str(link.get("mtu", "")), "state": "ok",
            }
        return out
