"""A SONiC-like shell for one switch: `show ...` commands, `vtysh`, and bash inside its namespace.

`translate` is pure: it turns one command line into the argv to run (or text to print), so the
mapping is unit-testable without a switch.
"""

from __future__ import annotations

import platform
import shlex
from dataclasses import dataclass
from pathlib import Path

from twin import __version__
from twin.switch import configdb
from twin.switch.sonic_cli import tool_argv
from twin.switch.statedb import SwitchState


@dataclass(frozen=True)
class Command:
    argv: list[str] | None = None  # run this
    text: str | None = None        # or print this
    exit: bool = False


def translate(line: str, netns: str, rundir: Path) -> Command:
    line = line.strip()
    if not line:
        return Command(text="")
    if line in ("exit", "logout", "quit"):
        return Command(exit=True)
    vtysh = ["vtysh", "--vty_socket", str(rundir)]
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return Command(text=f"-bash: {exc}\n")
    if words[0] == "vtysh":
        return Command(argv=[*vtysh, *words[1:]])
    tool = tool_argv(rundir, words)
    if tool is not None:
        return Command(argv=tool)
    if words[0] == "show" and len(words) > 1:
        if words[1:] == ["version"]:
            return Command(text=show_version(rundir))
        if words[1:3] == ["interfaces", "status"]:
            return Command(text=show_interfaces_status(netns, rundir))
        # everything else `show ...` is FRR's, as SONiC's show ip bgp / show ip route call vtysh
        return Command(argv=[*vtysh, "-c", " ".join(words)])
    return Command(argv=["ip", "netns", "exec", netns, "bash", "-c", line])


def show_version(rundir: Path) -> str:
    meta = configdb.load(rundir / "config_db.json").get("DEVICE_METADATA", {}).get("localhost", {})
    return (f"\nSONiC Software Version: SONiC.twin-{__version__}\nSONiC OS Version: 12\n"
            f"Distribution: Debian 12\nKernel: {platform.release()}\nBuild commit: twin\n"
            f"Platform: {meta.get('platform', 'x86_64-kvm_x86_64-r0')}\nHwSKU: {meta.get('hwsku', '')}\n"
            f"ASIC: vs\nASIC Count: 1\nSerial Number: twin-{meta.get('hostname', '')}\n"
            f"Model Number: twin\nHardware Revision: N/A\n\n")


def show_interfaces_status(netns: str, rundir: Path) -> str:
    ports = configdb.load(rundir / "config_db.json").get("PORT", {})
    live = SwitchState(netns, rundir).port_table()
    header = ("Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC")
    rows = []
    for port in sorted(ports, key=lambda p: int(p.removeprefix("Ethernet"))):
        cfg, st = ports[port], live.get(port, {})
        speed = f"{int(cfg.get('speed', '0')) // 1000}G" if cfg.get("speed") else "N/A"
        rows.append((port, cfg.get("lanes", ""), speed, st.get("mtu", cfg.get("mtu", "")), "N/A",
                     cfg.get("alias", ""), "routed", st.get("oper_status", "down"),
                     cfg.get("admin_status", "down"), "N/A", "N/A"))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"
