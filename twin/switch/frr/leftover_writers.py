"""Writers a killed agent left behind: the `vtysh -f`, `ip -b` and frr-reload.py processes its config
daemons started, which live on (and go on programming) after the agent died. A restarted agent waits
for them to end before it reads what the switches run, or it would converge on a state they are
still changing."""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Collection
from pathlib import Path

from twin.host.poll import poll_until

log = logging.getLogger("twin.agent")


def _argv(pid: str) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def is_writer(argv: list[str], rundirs: Collection[str], netns: Collection[str]) -> bool:
    """Whether a process programs one of the switches as the config daemons do: `vtysh -f` or
    frr-reload.py on one of their vty socket directories, or `ip -n NS -b` in one of their
    namespaces (an interactive vtysh or `ip` a user runs is not waited for)."""
    if not argv or not argv[0]:
        return False
    prog = os.path.basename(argv[0])
    if prog == "ip":
        return "-b" in argv and any(a == "-n" and b in netns for a, b in itertools.pairwise(argv))
    if (prog == "vtysh" and "-f" in argv) or any(a.endswith("frr-reload.py") for a in argv[:2]):
        return any(a in rundirs for a in argv)
    return False


def leftover_writers(rundirs: Collection[str], netns: Collection[str]) -> list[int]:
    """Processes (not this one's) programming the switches of `rundirs` and `netns`."""
    me = os.getpid()
    return [int(pid) for pid in os.listdir("/proc")
            if pid.isdigit() and int(pid) != me and is_writer(_argv(pid), rundirs, netns)]


def await_leftover_writers(rundirs: Collection[str], netns: Collection[str], timeout: float = 30) -> list[int]:
    """Wait until the writers found now have ended; the pids still running after `timeout`."""
    pids = leftover_writers(rundirs, netns)
    if pids:
        log.info("waiting for %d programming processes an earlier agent left: %s", len(pids), pids)
    def ended() -> bool:
        nonlocal pids
        pids = [p for p in pids if os.path.exists(f"/proc/{p}")]
        return not pids

    poll_until(ended, timeout, 0.02)
    if pids:
        log.warning("programming processes an earlier agent left still run after %.0f s: %s", timeout, pids)
    return pids
