"""What a switch's kernel holds, in CONFIG_DB's words: the tables twin.switch.config.kernel programs (PORT
admin_status and mtu, addresses, VLAN bridges and members, PortChannel bridges and members), read back
from `ip -j addr show`. A PortChannel's min_links is not read back (the bridge's alias is not in that
output): it is taken as CONFIG_DB says.

twin.switch.config.kernel.kernel_changes(observed(...), config) then gives the `ip -b` lines that turn the
kernel as it is into the kernel CONFIG_DB asks for, whatever was programmed before. The management
port (eth0), link-local addresses and lo's 127.0.0.1 and ::1 are not CONFIG_DB's and are left out.

The egress queues (twin.switch.config.qdisc) are read back only as far as reconciling them needs: which
devices carry the htb root a port's queues hang from (`read_rooted`, from `tc -j qdisc show`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from ipaddress import ip_interface
from typing import Any

from twin.switch.config.portchannel import is_portchannel

ConfigTables = dict[str, dict[str, Any]]


def read_links(netns: str) -> list[dict[str, Any]] | None:
    """`ip -j addr show` in the switch's namespace (None when it cannot be read)."""
    try:
        proc = subprocess.run(["ip", "-n", netns, "-j", "addr", "show"], capture_output=True, text=True, timeout=30)
        links = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return links if isinstance(links, list) else None


def read_rooted(netns: str) -> set[str] | None:
    """The devices of the switch's namespace whose root qdisc is htb `1:` (None when it cannot be read)."""
    try:
        proc = subprocess.run(["tc", "-n", netns, "-j", "qdisc", "show"], capture_output=True, text=True, timeout=30)
        qdiscs = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(qdiscs, list):
        return None
    return {str(q.get("dev")) for q in qdiscs
            if isinstance(q, dict) and q.get("root") and q.get("kind") == "htb" and q.get("handle") == "1:"}


def _is_vlan(dev: str) -> bool:
    return dev.startswith("Vlan") and dev[4:].isdigit()


def _loopback_key(desired: Mapping[str, Any], prefix: str) -> str:
    """The LOOPBACK_INTERFACE key CONFIG_DB gives an address lo carries (Loopback0 when it gives none)."""
    return next((k for k in desired if k.split("|", 1)[-1] == prefix and "|" in k), f"Loopback0|{prefix}")


def observed(links: list[dict[str, Any]], desired: Mapping[str, Mapping[str, Any]],
             ifmap: Mapping[str, str] | None = None) -> ConfigTables:
    """The kernel's `links` as the CONFIG_DB tables that would have programmed them; `desired` (the
    CONFIG_DB to converge on) says which ports are CONFIG_DB's and what lo's addresses are called."""
    ifmap = ifmap or {}
    sonic = {v: k for k, v in ifmap.items()}
    ports = {ifmap.get(p, p): p for p in desired.get("PORT", {})}
    by_dev = {str(link.get("ifname")): link for link in links}
    out: ConfigTables = {}
    for dev, port in ports.items():
        link = by_dev.get(dev)
        row = dict(desired["PORT"][port]) if link is None else {   # an absent port cannot be set: no line for it
            "admin_status": "up" if "UP" in link.get("flags", []) else "down", "mtu": str(link.get("mtu"))}
        out.setdefault("PORT", {})[port] = row
    for dev, link in by_dev.items():
        if _is_vlan(dev):
            out.setdefault("VLAN", {})[dev] = {}
        if is_portchannel(dev):
            out.setdefault("PORTCHANNEL", {})[dev] = _portchannel_row(link, desired.get("PORTCHANNEL", {}).get(dev, {}))
        master = link.get("master")
        if isinstance(master, str) and is_portchannel(master):
            out.setdefault("PORTCHANNEL_MEMBER", {})[f"{master}|{sonic.get(dev, dev)}"] = {}
        if isinstance(master, str) and _is_vlan(master):
            base, _, vid = dev.partition(".")
            tagged = bool(vid) and vid == master[4:]
            port = sonic.get(base if tagged else dev, base if tagged else dev)
            out.setdefault("VLAN_MEMBER", {})[f"{master}|{port}"] = {"tagging_mode": "tagged" if tagged else "untagged"}
        for addr in link.get("addr_info", []):
            if addr.get("scope") == "link" or "local" not in addr:
                continue
            prefix = f"{addr['local']}/{addr['prefixlen']}"
            if dev == "lo":
                if ip_interface(prefix).is_loopback:
                    continue
                key = _loopback_key(desired.get("LOOPBACK_INTERFACE", {}), prefix)
                out.setdefault("LOOPBACK_INTERFACE", {})[key] = {}
            elif _is_vlan(dev):
                out.setdefault("VLAN_INTERFACE", {})[f"{dev}|{prefix}"] = {}
            elif is_portchannel(dev):
                out.setdefault("PORTCHANNEL_INTERFACE", {})[f"{dev}|{prefix}"] = {}
            elif dev in ports:
                out.setdefault("INTERFACE", {})[f"{ports[dev]}|{prefix}"] = {}
    return out


def _portchannel_row(link: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """A PortChannel bridge as the PORTCHANNEL row that programmed it (min_links: `desired`'s)."""
    row = {"admin_status": "up" if "UP" in link.get("flags", []) else "down", "mtu": str(link.get("mtu")),
           "system_mac": str(link.get("address", ""))}
    if "min_links" in desired:
        row["min_links"] = desired["min_links"]
    return row
