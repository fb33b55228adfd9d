"""A lab's gNMI agent started by `twin up` as soon as it knows the lab's name, before the lab exists:
it loads its modules (about 0.45 CPU-s) on the CPU that `twin up` leaves idle while it loads its
own, and waits for a line on its standard input, sent once the lab's run directory exists
(twin.switch.agent.await_go).

Started once the lab existed instead, the loading ran beside the switches' preparation and FRR's
launch, which keep both CPUs busy on the default lab. Only the standard library here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import TracebackType

AGENT_MODULE = "twin.switch.agent"


def agent_argv(run_dir: Path, *flags: str, idle: bool = False) -> list[str]:
    """The command line of a lab's agent, its run directory in it (how `twin down` and the process
    checks know it); `idle`: at nice 19, as an agent started ahead of the switches."""
    argv = [sys.executable, "-m", AGENT_MODULE, "--run-dir", str(run_dir), *flags]
    return ["nice", "-n", "19", *argv] if idle else argv


class PreloadedAgent:
    """The agent process of the lab whose run directory is `run_dir`, preloading until hand_over
    lets it go on or close ends it."""

    def __init__(self, run_dir: Path) -> None:
        # a session of its own, as an agent started ahead of the switches
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            agent_argv(run_dir, "--preloaded", idle=True), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)

    def hand_over(self) -> subprocess.Popen[bytes] | None:
        """The run directory exists: let the agent go on. The process, or None when it is gone
        (then start one the usual way: it reports why in agent.log)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.stdin is None or proc.poll() is not None:
            return None
        try:
            proc.stdin.write(b"go\n")
            proc.stdin.close()
        except BrokenPipeError:
            proc.wait()
            return None
        return proc

    def close(self) -> None:
        """End the process unless it was handed over: nothing of a failed `twin up` stays behind."""
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            if proc.stdin is not None:
                proc.stdin.close()

    def __enter__(self) -> PreloadedAgent:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
