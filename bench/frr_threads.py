"""What FRR's daemons spent their event loops' CPU on, from their own accounting (`show thread cpu`),
summed over a lab's switches: above all how much went to answering on their vty, where bgpd and
zebra answer every question asked of them (twin's agent asking `show bgp summary json` as bgpmon
does, the health poll's reads, vtysh). A bring-up's FRR CPU differs between twin's runs and the
floor's; this tells whether twin's questions are the difference.

    frr_threads(vty_dirs(Path("/run/twin/bench0")))
    # {"switches": 12, "bgpd": {"cpu_seconds": ..., "vty_cpu_seconds": ..., "vty_calls": ..., "top": {...}}, ...}

FRR counts only what runs as tasks of its event loops: bgpd's keepalives thread and much of its
I/O thread's time in the kernel are not in `cpu_seconds`, which is therefore less than the
processes' CPU (/proc); the vty's share is counted whole, as it runs as tasks of the main loop.
The question that reads the figures is in them too (a vtysh_accept and a vtysh_read a daemon):
that is most of the floor's share, since nothing else asks the floor's FRR anything.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

DAEMONS = ("bgpd", "zebra")
# The tasks that read a vty's commands (and run them: FRR executes a command in the task that read
# it), write the answers, and accept connections: vtysh's (vtysh_*) and a telnet-style vty's (vty_*).
VTY_TASKS = frozenset({"vtysh_accept", "vtysh_read", "vtysh_write", "vty_accept", "vty_read", "vty_write",
                       "vty_flush"})
TOP = 6
WORKERS = 8

Tasks = dict[str, tuple[float, int]]   # task -> (CPU milliseconds, times run)


def parse(text: str) -> Tasks:
    """`show thread cpu`'s rows, each task's runtime and calls summed over the daemon's pthreads (the
    grand TOTAL row left out)."""
    tasks: Tasks = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 9 or not words[0].isdigit() or words[-1] == "TOTAL":
            continue
        try:
            ms, calls = float(words[1]), int(words[2])
        except ValueError:
            continue
        before = tasks.get(words[-1], (0.0, 0))
        tasks[words[-1]] = (before[0] + ms, before[1] + calls)
    return tasks


def vty_dirs(root: Path) -> list[Path]:
    """The directories under `root` holding a bgpd's vty socket: one a switch (twin's run directory of
    a lab, the floor's LAB_RUN)."""
    return sorted({p.parent for p in root.rglob("bgpd.vty")})


def ask(vty_dir: Path, daemon: str) -> str:
    """`show thread cpu` of the daemon whose socket is in `vty_dir` ("" when it does not answer)."""
    try:
        proc = subprocess.run(["vtysh", "--vty_socket", str(vty_dir), "-d", daemon, "-c", "show thread cpu"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def frr_threads(dirs: Iterable[Path], daemons: Iterable[str] = DAEMONS,
                read: Callable[[Path, str], str] = ask) -> dict[str, Any]:
    """Every daemon's tasks summed over the switches of `dirs`: its accounted CPU, the vty's share and
    calls, and its busiest tasks (seconds)."""
    dirs, daemons = list(dirs), list(daemons)
    jobs = [(d, daemon) for d in dirs for daemon in daemons]
    with ThreadPoolExecutor(WORKERS) as pool:
        texts = list(pool.map(lambda job: read(*job), jobs))
    doc: dict[str, Any] = {"switches": len(dirs)}
    for daemon in daemons:
        total: Tasks = {}
        answered = 0
        for (_, name), text in zip(jobs, texts, strict=True):
            if name != daemon or not text:
                continue
            answered += 1
            for task, (ms, calls) in parse(text).items():
                before = total.get(task, (0.0, 0))
                total[task] = (before[0] + ms, before[1] + calls)
        vty = [total[t] for t in VTY_TASKS if t in total]
        busiest = sorted(total.items(), key=lambda kv: -kv[1][0])[:TOP]
        doc[daemon] = {"answered": answered,
                       "cpu_seconds": round(sum(ms for ms, _ in total.values()) / 1000, 2),
                       "vty_cpu_seconds": round(sum(ms for ms, _ in vty) / 1000, 3),
                       "vty_calls": sum(calls for _, calls in vty),
                       "top": {task: round(ms / 1000, 2) for task, (ms, _) in busiest}}
    return doc
