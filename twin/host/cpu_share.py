"""A process's share of the CPU against the rest of the machine, lowered and given back.

Debian's kernel groups processes by session for scheduling (autogroup, kernel.sched_autogroup_enabled):
each session gets a fair share whatever its threads' nice values, which weigh only among that
session's own threads, and every daemonized FRR daemon is a session of its own. So a process that
must yield to them lowers its session's weight (/proc/self/autogroup takes a nice value); without
autogroup, every thread's own nice value is what counts. A process still in init's session is in the
root group, whose weight cannot be changed (its /proc/<pid>/autogroup reads empty): there too, its
threads' nice values are what counts.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

NORMAL, LOWEST = 0, 19
PROC = Path("/proc")
AUTOGROUP_ENABLED = PROC / "sys/kernel/sched_autogroup_enabled"


def autogroup_enabled(flag: Path = AUTOGROUP_ENABLED) -> bool:
    try:
        return flag.read_text().strip() == "1"
    except OSError:
        return False


def own_autogroup(pid: int) -> str:
    """Process `pid`'s autogroup as the kernel shows it ("/autogroup-<id> nice <n>"), or "" where there
    is none to weigh: autogroup off, or the process in the root group."""
    if not autogroup_enabled():
        return ""
    return (PROC / str(pid) / "autogroup").read_text().strip()


def set_cpu_share(nice: int, pid: int | None = None) -> str:
    """Weigh process `pid` (this one by default) as nice `nice` against the machine's other processes;
    returns how: "autogroup" (its session's weight) or "threads" (each thread's nice value)."""
    pid = os.getpid() if pid is None else pid
    if own_autogroup(pid):
        (PROC / str(pid) / "autogroup").write_text(str(nice))
        return "autogroup"
    for tid in os.listdir(PROC / str(pid) / "task"):
        with contextlib.suppress(ProcessLookupError):   # a thread that ended meanwhile
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
    return "threads"


def cpu_share(pid: int | None = None) -> int:
    """The nice value `set_cpu_share` last gave process `pid`, read back as the kernel weighs it."""
    pid = os.getpid() if pid is None else pid
    if group := own_autogroup(pid):
        return int(group.split()[-1])
    return os.getpriority(os.PRIO_PROCESS, pid)
