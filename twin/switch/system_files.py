"""The files of a switch's own system that SONiC's host keeps and its tools read, in its run directory
(which plays the switch's `/`, twin.switch.gnoi.switch_files).

- `/etc/hostname`: SONiC's hostname-config.sh writes DEVICE_METADATA|localhost `hostname` there (`sonic`
  when there is none) at boot, and again whenever hostcfgd sees the hostname change. Here the switch's
  start writes it, and its config daemon on every change of the hostname.
- The boot time: the instant a switch's kernel counts /proc/uptime from. A twin switch shares the host's
  kernel, so the instant it was booted (its start at `twin up`, the boot phase of a gNOI reboot) is kept
  in its run directory (`BOOTED`), and the switch's /proc/uptime, `uptime` and `show uptime` count from it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

HOSTNAME_FILE = "etc/hostname"
BOOTED = "booted_at"            # the boot's Unix time, as text
DEFAULT_HOSTNAME = "sonic"      # hostname-config.sh's, when DEVICE_METADATA|localhost has none


def hostname_of(config: Any) -> str:
    """DEVICE_METADATA|localhost hostname of a CONFIG_DB, or SONiC's default."""
    meta = config.get("DEVICE_METADATA", {}) if isinstance(config, dict) else {}
    name = meta.get("localhost", {}).get("hostname") if isinstance(meta, dict) else None
    return str(name) if name else DEFAULT_HOSTNAME


def _replace(path: Path, text: str) -> None:
    """`path` := `text`, renamed into place; its directory must exist."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o644)
    tmp.replace(path)


def write_hostname(rundir: Path, config: Any) -> None:
    """/etc/hostname := the config's hostname (`echo $HOSTNAME > /etc/hostname`); not rewritten when it
    already says so, so its modification time is the last change's."""
    path, text = rundir / HOSTNAME_FILE, f"{hostname_of(config)}\n"
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    path.parent.mkdir(exist_ok=True)   # etc/ in the run directory, which must exist
    _replace(path, text)


def mark_booted(rundir: Path, at: float | None = None) -> None:
    """The switch booted now (or at `at`, Unix time)."""
    _replace(rundir / BOOTED, f"{time.time() if at is None else at:.3f}\n")


def booted_at(rundir: Path) -> float | None:
    """When the switch booted, or None for a switch without the record (one started by an older twin)."""
    try:
        return float((rundir / BOOTED).read_text().strip())
    except (OSError, ValueError):
        return None


def _host_uptime() -> tuple[float, float]:
    try:
        up, idle = Path("/proc/uptime").read_text().split()[:2]
        return float(up), float(idle)
    except (OSError, ValueError):
        return 0.0, 0.0


def uptime_seconds(rundir: Path, now: float | None = None) -> float:
    """Seconds since the switch booted (the host's uptime for a switch without the record)."""
    booted = booted_at(rundir)
    if booted is None:
        return _host_uptime()[0]
    return max(0.0, (time.time() if now is None else now) - booted)


def proc_uptime(rundir: Path, now: float | None = None) -> str:
    """The switch's /proc/uptime: its uptime and, as the kernel counts it, the CPUs' idle seconds over
    that time (the host's idle share, which the switch shares)."""
    up = uptime_seconds(rundir, now)
    host_up, host_idle = _host_uptime()
    idle = host_idle * up / host_up if host_up > 0 else 0.0
    return f"{up:.2f} {idle:.2f}\n"
