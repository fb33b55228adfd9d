"""SONiC's state databases of one switch, read from FRR and the kernel at request time.

No cache: every read asks vtysh or netlink (through `ip -j`) again, so values cannot go stale.

- STATE_DB  NEIGH_STATE_TABLE|<peer>           {state, peerType}           (bgpmon)
- STATE_DB  BFD_SESSION_TABLE|default|<if>|<peer> {state, local_addr, ...}
- STATE_DB  PORT_TABLE|<port>                  {oper_status, admin_status, mtu, speed}
- APPL_DB   ROUTE_TABLE:<prefix>               {nexthop, ifname} comma-separated ECMP lists
- COUNTERS_DB COUNTERS_PORT_NAME_MAP, COUNTERS:<oid> with SAI_PORT_STAT_* counters
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Table = dict[str, Any]  # key -> fields (COUNTERS_PORT_NAME_MAP is one flat hash: port -> oid)

_COUNTERS = {
    "SAI_PORT_STAT_IF_IN_OCTETS": ("rx", "bytes"), "SAI_PORT_STAT_IF_IN_UCAST_PKTS": ("rx", "packets"),
    "SAI_PORT_STAT_IF_IN_DISCARDS": ("rx", "dropped"), "SAI_PORT_STAT_IF_IN_ERRORS": ("rx", "errors"),
    "SAI_PORT_STAT_IF_OUT_OCTETS": ("tx", "bytes"), "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": ("tx", "packets"),
    "SAI_PORT_STAT_IF_OUT_DISCARDS": ("tx", "dropped"), "SAI_PORT_STAT_IF_OUT_ERRORS": ("tx", "errors"),
}


def port_oid(port: str) -> str:
    number = int(port.removeprefix("Ethernet")) if port.startswith("Ethernet") else 0
    return f"oid:0x1000000{number:06x}"


@dataclass(frozen=True)
class SwitchState:
    """Where one switch's live state is: its namespace and its FRR run directory."""

    netns: str
    rundir: Path

    def _vtysh_json(self, command: str) -> Any:
        proc = subprocess.run(["vtysh", "--vty_socket", str(self.rundir), "-c", command],
                              capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            return {}
        try:
            return json.loads(proc.stdout or "{}")
        except json.JSONDecodeError:
            return {}

    def _ip_json(self, *args: str) -> Any:
        proc = subprocess.run(["ip", "-n", self.netns, "-j", *args], capture_output=True, text=True, timeout=30)
        try:
            return json.loads(proc.stdout or "[]")
        except json.JSONDecodeError:
            return []

    # -- STATE_DB ---------------------------------------------------------------------------

    def neigh_state(self) -> Table:
        summary = self._vtysh_json("show bgp summary json").get("ipv4Unicast", {})
        local_as = summary.get("as")
        out: Table = {}
        for peer, row in summary.get("peers", {}).items():
            out[peer] = {"state": str(row.get("state", "Idle")),
                         "peerType": "i-BGP" if row.get("remoteAs") == local_as else "e-BGP"}
        return out

    def bfd_sessions(self) -> Table:
        peers = self._vtysh_json("show bfd peers json")
        out: Table = {}
        for p in peers if isinstance(peers, list) else []:
            key = f"default|{p.get('interface', 'default')}|{p.get('peer')}"
            out[key] = {
                "state": str(p.get("status", "down")).capitalize(), "local_addr": str(p.get("local", "")),
                "type": "async_active", "multiplier": str(p.get("detect-multiplier", "")),
                "rx_interval": str(p.get("receive-interval", "")), "tx_interval": str(p.get("transmit-interval", "")),
                "uptime": str(p.get("uptime", 0)), "downtime": str(p.get("downtime", 0)),
            }
        return out

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

    # -- APPL_DB ----------------------------------------------------------------------------

    def route_table(self) -> Table:
        out: Table = {}
        for r in self._ip_json("-4", "route", "show"):
            dst = r.get("dst", "")
            if r.get("dev") == "eth0" or r.get("type", "unicast") != "unicast":
                continue
            prefix = "0.0.0.0/0" if dst == "default" else dst if "/" in dst else f"{dst}/32"
            hops = r.get("nexthops") or [{"gateway": r.get("gateway", "0.0.0.0"), "dev": r.get("dev", "")}]
            if any(h.get("dev") == "eth0" for h in hops):
                continue
            out[prefix] = {"nexthop": ",".join(h.get("gateway", "0.0.0.0") for h in hops),
                           "ifname": ",".join(h.get("dev", "") for h in hops),
                           "protocol": str(r.get("protocol", "kernel"))}
        return out

    # -- COUNTERS_DB ------------------------------------------------------------------------

    def counters_name_map(self) -> Table:
        return {link["ifname"]: port_oid(link["ifname"]) for link in self._ports()}

    def counters(self) -> Table:
        out: Table = {}
        for link in self._ports():
            stats = link.get("stats64", {})
            out[port_oid(link["ifname"])] = {sai: str(stats.get(d, {}).get(f, 0)) for sai, (d, f) in _COUNTERS.items()}
        return out

    def tables(self) -> dict[str, dict[str, Callable[[], Table]]]:
        """DB -> table -> reader."""
        return {
            "STATE_DB": {"NEIGH_STATE_TABLE": self.neigh_state, "BFD_SESSION_TABLE": self.bfd_sessions,
                         "PORT_TABLE": self.port_table},
            "APPL_DB": {"ROUTE_TABLE": self.route_table},
            "COUNTERS_DB": {"COUNTERS_PORT_NAME_MAP": self.counters_name_map, "COUNTERS": self.counters},
        }
