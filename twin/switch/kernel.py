"""Apply a config_db to the kernel of a switch namespace: ports, MTUs, addresses, loopback.

Pure: produces `ip -b` lines. There are no dummy interfaces here, so Loopback0's address
goes on `lo`, as SONiC-VS does with its Loopback0 on a real kernel.
"""

from __future__ import annotations

from typing import Any


def kernel_lines(db: dict[str, dict[str, Any]], ifmap: dict[str, str] | None = None) -> list[str]:
    """`ifmap` maps SONiC port names to kernel names (identity when absent)."""
    kname = (ifmap or {}).get
    lines = ["link set dev lo up"]
    for port, row in db.get("PORT", {}).items():
        dev = kname(port, port)
        state = "up" if row.get("admin_status", "down") == "up" else "down"
        mtu = f" mtu {row['mtu']}" if "mtu" in row else ""
        lines.append(f"link set dev {dev}{mtu} {state}")
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            port, prefix = key.split("|", 1)
            lines.append(f"address add {prefix} dev {kname(port, port)}")
    for key in db.get("LOOPBACK_INTERFACE", {}):
        if "|" in key:
            lines.append(f"address add {key.split('|', 1)[1]} dev lo")
    return lines
