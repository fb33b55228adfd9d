"""FRR's check of a node's config before anything of it starts (`vtysh -C`), several nodes' configs
in one vtysh run.

vtysh's dry run spends about 28 ms of CPU building its command tree before it reads a line, twice
what it spends reading a 64 x 128 spine's 811 lines (14 ms): one run per switch was 5.4 of the
6.2 CPU-seconds the 192 switches' checks took. The nodes a bring-up prepares in parallel
(twin.runtime.wiring.WORKERS at a time) ask at about the same moment, so the check is a group
commit: a node that asks while no run is under way runs vtysh for every config asked for so far,
its own included; the others wait for that run and go on with its verdict, or run the next batch.

A batch is the configs one after the other on vtysh's standard input, each after SEPARATOR. vtysh
looks for a command it does not find in the current node in the nodes above it and stays where it
found it; a top-level command therefore brings it back to the top of the configuration, where a
file's first line is read (`end` and `exit` do not, in a file). So no config is read in a node an
earlier one left open: a line that fails alone fails in the batch. A batch that fails is checked
again config by config, so each node gets the verdict and the message of its own check.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# A top-level command every config twin renders carries (vtysh's own; see the module's doc).
SEPARATOR = "service integrated-vtysh-config"
TIMEOUT_S = 60.0


def vtysh_check(text: str, vty_socket: Path, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """`vtysh -C` over `text`: exit 0 when FRR would accept every line of it."""
    return subprocess.run(["vtysh", "--vty_socket", str(vty_socket), "-C", "-f", "/dev/stdin"], input=text,
                          capture_output=True, text=True, timeout=timeout)


def rejection(path: Path, proc: subprocess.CompletedProcess[str]) -> str | None:
    """Why FRR refused the config in `path` (the end of vtysh's output); None when it accepted it."""
    if proc.returncode == 0:
        return None
    return f"FRR rejected {path}: {(proc.stdout + proc.stderr).strip()[-800:]}"


@dataclass
class _Ask:
    path: Path
    done: bool = False
    refused: str | None = None
    failed: BaseException | None = None


class FrrCheck:
    """Checks node configs, batching those asked for while a check runs (see the module's doc).
    Thread-safe; `runs` counts the vtysh runs made."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: list[_Ask] = []
        self._running = False
        self.runs = 0

    def refused(self, path: Path) -> str | None:
        """Why FRR refuses the config in `path` (a node's frr.conf), or None when it accepts it.
        Raises what running vtysh raised (OSError, subprocess.TimeoutExpired)."""
        ask = _Ask(path)
        with self._cond:
            self._pending.append(ask)
            while not ask.done:
                if self._running:
                    self._cond.wait()
                    continue
                batch, self._pending = self._pending, []
                self._running = True
                self._cond.release()
                checked = False
                try:
                    self._check(batch)
                    checked = True
                finally:
                    self._cond.acquire()
                    self._running = False
                    for a in batch:
                        a.done = True
                        if not checked and a.failed is None:  # this thread was stopped: no verdict
                            a.failed = RuntimeError(f"the check of {a.path} was interrupted")
                    self._cond.notify_all()
        if ask.failed is not None:
            raise ask.failed
        return ask.refused

    def _check(self, batch: Sequence[_Ask]) -> None:
        try:
            texts = [a.path.read_text() for a in batch]
            if len(batch) > 1 and self._run(batch[0].path.parent, "".join(
                    f"{SEPARATOR}\n{text}\n" for text in texts)).returncode == 0:
                return
            for a, text in zip(batch, texts, strict=True):  # alone, or again one by one: each its own verdict
                a.refused = rejection(a.path, self._run(a.path.parent, text))
        except Exception as exc:  # vtysh could not tell (not run, timed out): no node of the batch goes on
            for a in batch:
                a.failed = exc

    def _run(self, vty_socket: Path, text: str) -> subprocess.CompletedProcess[str]:
        with self._cond:
            self.runs += 1
        return vtysh_check(text, vty_socket)


CHECK = FrrCheck()  # the process's: every node a bring-up prepares asks it
