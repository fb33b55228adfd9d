"""The processes running in a node's network namespace, read from /proc (what `ip netns pids` does).

A node's namespace is attached as /run/netns/<name> on every runtime (netns, docker, clab), so its
processes are the host's processes whose `ns/net` is that namespace. Inside a container a process
has a pid of its own (the last NSpid of /proc/PID/status): that is the pid its pid file holds.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from twin.host.poll import poll_until

NETNS_DIR = Path("/run/netns")
PROC = Path("/proc")


@dataclass(frozen=True)
class Proc:
    pid: int       # on the host: what signals go to
    ns_pid: int    # in the process's own pid namespace (a container's pid; the host pid elsewhere)
    name: str      # the kernel's comm, at most 15 characters ("bgpd", "redis-server")
    state: str     # R, S, D, T, Z (zombie: exited, not yet reaped) ...

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")


def read_proc(pid: int, proc: Path = PROC) -> Proc | None:
    """One process from /proc/PID/status; None when it is gone."""
    try:
        text = (proc / str(pid) / "status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    ns_pids = fields.get("NSpid", "").split()
    state = fields.get("State", "").split()
    return Proc(pid=pid, ns_pid=int(ns_pids[-1]) if ns_pids else pid, name=fields.get("Name", "").strip(),
                state=state[0] if state else "?")


def _inode(path: Path | str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class ProcessTable:
    """The host's processes by network namespace, from one pass over /proc: a poll of every node of
    a large lab asks this once instead of walking /proc once per node (at 64 x 128, 192 walks took
    1.5 CPU-seconds a poll). A process's status is read only when its namespace is asked for."""

    def __init__(self, proc: Path = PROC, netns_dir: Path = NETNS_DIR) -> None:
        self.proc, self.netns_dir = proc, netns_dir
        self.pids: dict[tuple[int, int], list[int]] = {}
        root = str(proc)  # os and str, not pathlib: a walk of ~1,000 pids is a poll's hot loop at 64 x 128
        for name in os.listdir(root):
            if name.isdigit() and (ns := _inode(f"{root}/{name}/ns/net")) is not None:
                self.pids.setdefault(ns, []).append(int(name))

    def netns_processes(self, netns: str) -> list[Proc]:
        """Every process whose network namespace is `netns` (empty when the namespace is gone)."""
        want = _inode(self.netns_dir / netns)
        if want is None:
            return []
        return [found for pid in sorted(self.pids.get(want, ())) if (found := read_proc(pid, self.proc)) is not None]


def netns_processes(netns: str, proc: Path = PROC, netns_dir: Path = NETNS_DIR) -> list[Proc]:
    """Every process whose network namespace is `netns` (empty when the namespace is gone)."""
    return ProcessTable(proc, netns_dir).netns_processes(netns)


def memory_kib(pid: int, proc: Path = PROC) -> dict[str, int]:
    """Rss and Pss of a process in KiB (/proc/PID/smaps_rollup); {} when it is gone."""
    try:
        text = (proc / str(pid) / "smaps_rollup").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss") and rest.split():
            out[key.lower()] = int(rest.split()[0])
    return out


def started_monotonic(pid: int | None = None, proc: Path = PROC) -> float:
    """When process `pid` (this one by default) started, on time.monotonic()'s clock: /proc's
    start time counts clock ticks since boot (10 ms here), as CLOCK_BOOTTIME does."""
    stat = (proc / str(os.getpid() if pid is None else pid) / "stat").read_text()
    ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, counted after the comm in parentheses
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    return time.monotonic() - max(0.0, age)


STOP_GRACE_S = 5.0  # processes get this long after SIGTERM, then SIGKILL


def _signal_all(pids: list[int], sig: signal.Signals) -> list[int]:
    alive = []
    for pid in pids:
        try:
            os.kill(pid, sig)
            alive.append(pid)
        except ProcessLookupError:
            continue
    return alive


def stop_processes(pids: list[int], grace: float = STOP_GRACE_S) -> None:
    """SIGTERM, then SIGKILL whatever is still there after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = _signal_all(pids, sig)

        def gone() -> bool:
            nonlocal alive
            alive = [p for p in alive if Path(f"/proc/{p}").exists()]
            return not alive

        if poll_until(gone, grace, 0.02):
            return
        pids = alive


def kill_processes(pids: list[int], wait: float = STOP_GRACE_S) -> None:
    """SIGKILL each of `pids` in turn, each gone before the next is killed (`pkill -9 a; pkill -9 b`)."""
    for pid in pids:
        if _signal_all([pid], signal.SIGKILL):
            poll_until(functools.partial(_gone, pid), wait, 0.01)


def _gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


PR_SET_PDEATHSIG = 1  # linux/prctl.h
# looked up here, once: a child between fork and exec (other threads may hold locks) only calls it
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def dies_with_parent(sig: signal.Signals = signal.SIGKILL) -> Callable[[], None]:
    """A `preexec_fn` for Popen: the child gets `sig` when its parent dies, however it dies (SIGKILL
    included), so a helper such as the drills' probe never outlives the command that started it.
    The kernel sends it when the *thread* that started the child ends: start it from a thread that
    lives as long as the child should (the main thread)."""
    parent = os.getpid()

    def preexec() -> None:
        _PRCTL(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), sig)

    return preexec


def _ancestors(pid: int, proc: Path) -> set[int]:
    out = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            pid = int((proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def processes_using(folder: Path, proc: Path = PROC) -> list[int]:
    """Processes naming `folder` or a path under it on their command line (a lab's helpers that live in
    the host's namespaces, such as a drill's probe, which `ip netns pids` does not list); never this
    process, its ancestors or its own children (`twin up`'s preloaded agent names the folder while `up`
    clears what a crashed earlier `up` left). A process merely working in the folder is not one of the
    lab's: an engineer's shell `cd`'d into a switch's run directory is theirs, not twin's to end."""
    root = str(folder).rstrip("/")
    me = os.getpid()
    mine = _ancestors(me, proc)
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        named = any(a == root.encode() or a.startswith(root.encode() + b"/") for a in args)
        if named and me not in _ancestors(int(entry.name), proc):
            found.append(int(entry.name))
    return sorted(found)
