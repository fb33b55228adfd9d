"""A persistent connection to one FRR daemon's vty socket, as vtysh talks to it.

vtysh sends a command ending in NUL; the daemon answers with the output followed by three NULs
and a status byte (0 = success). Asking bgpd for `show bgp summary json` this way costs about
0.2 ms, with no vtysh process started: cheap enough to ask on every event.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

TERMINATOR = b"\0\0\0"


class VtyError(Exception):
    """The daemon is not reachable or refused the command."""


class Vty:
    def __init__(self, rundir: Path, daemon: str, timeout: float = 5) -> None:
        self.path = rundir / f"{daemon}.vty"
        self.timeout = timeout
        self._sock: socket.socket | None = None

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self.path))
        except OSError as exc:
            sock.close()
            raise VtyError(f"{self.path}: {exc}") from None
        self._sock = sock
        self._exchange("enable")  # the vtysh socket starts in view mode, as vtysh's does
        return sock

    def _exchange(self, command: str) -> str:
        assert self._sock is not None
        self._sock.sendall(command.encode() + b"\0")
        buf = bytearray()
        while not (len(buf) >= 4 and buf[-4:-1] == TERMINATOR):
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise VtyError(f"{self.path}: connection closed")
            buf += chunk
        status = buf[-1]
        text = buf[:-4].decode(errors="replace")
        if status != 0:
            raise VtyError(f"{self.path}: '{command}' failed: {text.strip()}")
        return text

    def run(self, command: str) -> str:
        """The daemon's answer to `command`; reconnects once when the daemon restarted."""
        for attempt in (1, 2):
            try:
                if self._sock is None:
                    self._connect()
                return self._exchange(command)
            except (OSError, VtyError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def json(self, command: str) -> Any:
        """The JSON answer of a `... json` show command; VtyError when it is not JSON."""
        text = self.run(command)
        try:
            return json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            raise VtyError(f"{self.path}: '{command}' did not answer JSON: {exc}") from None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def ask_json(rundir: Path, daemon: str, command: str, timeout: float = 30) -> Any:
    """One question on a connection of its own: the JSON answer, or None when the daemon cannot
    answer (not running, refused, not JSON)."""
    vty = Vty(rundir, daemon, timeout)
    try:
        return vty.json(command)
    except VtyError:
        return None
    finally:
        vty.close()


CONFIG_DAEMONS = ("zebra", "bgpd", "staticd", "bfdd", "ospfd")   # whose running config a switch's FRR is made of


def running_config_parts(rundir: Path, timeout: float = 30) -> dict[str, str] | None:
    """Each daemon's own part of FRR's running config (asked on its vty socket, as vtysh asks them for
    `show running-config`, without a vtysh process), one after the other. None when a daemon whose
    socket is there does not answer, or when there is none (FRR is not running)."""
    parts: dict[str, str] = {}
    for daemon in CONFIG_DAEMONS:
        if not (rundir / f"{daemon}.vty").exists():
            continue
        vty = Vty(rundir, daemon, timeout)
        try:
            parts[daemon] = vty.run("show running-config")
        except VtyError:
            return None
        finally:
            vty.close()
    return parts or None


def running_config(rundir: Path, timeout: float = 30) -> str | None:
    """FRR's running config: every daemon's part (running_config_parts) as one text."""
    parts = running_config_parts(rundir, timeout)
    return None if parts is None else "\n".join(parts.values())
