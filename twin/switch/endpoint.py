"""One emulated switch as its management plane sees it: committed config, live state, commits.

A commit is validated whole, written ahead as `config_db.json.pending`, applied to the kernel
and FRR (only what changed), then made the committed `config_db.json` by an atomic rename.
If the agent dies half-way, `recover()` on the next start rolls the switch back to the
committed config, so it runs the old config or the new one, never a mix.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from pathlib import Path

from twin.render.frr import render_frr
from twin.switch import configdb
from twin.switch.apply import frr_lines, kernel_lines
from twin.switch.configdb import ConfigDb
from twin.switch.statedb import SwitchState


class SetRejected(Exception):
    """A Set that cannot be applied; nothing was changed."""


class Endpoint:
    def __init__(self, name: str, netns: str, rundir: Path, ports: list[str]) -> None:
        self.name, self.netns, self.rundir = name, netns, rundir
        self.ports = set(ports)
        self.state = SwitchState(netns=netns, rundir=rundir)
        self.path = rundir / "config_db.json"
        self.pending = rundir / "config_db.json.pending"
        self.lock = threading.Lock()

    def config(self) -> ConfigDb:
        return configdb.load(self.path)

    def validate(self, new: ConfigDb) -> list[str]:
        errors = configdb.validate(new)
        if not errors:
            missing = sorted(set(new.get("PORT", {})) - self.ports, key=lambda p: int(p.removeprefix("Ethernet")))
            if missing:
                errors.append(f"PORT: {', '.join(missing)} do not exist on {self.name} "
                              f"(it has {len(self.ports)} ports wired in this lab)")
        return errors

    def commit(self, new: ConfigDb) -> None:
        with self.lock:
            errors = self.validate(new)
            if errors:
                raise SetRejected("; ".join(errors))
            old = self.config()
            configdb.save(self.pending, new)
            try:
                self._apply(old, new)
            except SetRejected:
                self._apply(new, old, tolerant=True)  # put back what was applied before the failure
                self.pending.unlink()
                raise
            configdb.save(self.path, new)
            self.pending.unlink()
            (self.rundir / "frr.conf").write_text(render_frr(new))

    def recover(self) -> None:
        """Undo a commit that a crash interrupted (runs before the agent serves anything)."""
        if not self.pending.exists():
            return
        try:
            half = configdb.load(self.pending)
        except ValueError:
            self.pending.unlink()
            return
        self._apply(half, self.config(), tolerant=True)
        self.pending.unlink()

    def _apply(self, old: ConfigDb, new: ConfigDb, tolerant: bool = False) -> None:
        lines = kernel_lines(old, new)
        if lines:
            proc = subprocess.run(["ip", "-n", self.netns, *(["-force"] if tolerant else []), "-b", "-"],
                                  input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
            if proc.returncode != 0 and not tolerant:
                raise SetRejected(f"kernel refused the change: {proc.stderr.strip()}")
        frr = frr_lines(old, new)
        if frr is None:
            self._vtysh(["no router bgp"], tolerant=True)
            frr = render_frr(new).splitlines()
        if frr:
            self._vtysh(frr, tolerant)

    def _vtysh(self, lines: list[str], tolerant: bool) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".conf", dir=self.rundir, delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            proc = subprocess.run(["vtysh", "--vty_socket", str(self.rundir), "-f", f.name],
                                  capture_output=True, text=True, timeout=60)
        finally:
            Path(f.name).unlink(missing_ok=True)
        if proc.returncode != 0 and not tolerant:
            raise SetRejected(f"FRR refused the change: {(proc.stdout + proc.stderr).strip()[-500:]}")
