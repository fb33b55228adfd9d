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


class PreloadedAgent:
    """The agent process of the lab whose run directory is `run_dir`, preloading until hand_over
    lets it go on or close ends it."""

    def __init__(self, run_dir: Path) -> None:
        # the run directory in its command line, as any process a lab runs (how `twin down` knows
        # it); nice 19 and a session of its own, as an agent started ahead of the switches
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            ["nice", "-n", "19", sys.executable, "-m", AGENT_MODULE, "--run-dir", str(run_dir), "--preloaded"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

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
