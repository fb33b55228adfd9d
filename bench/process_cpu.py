"""The CPU a machine spent while one command ran, and whose it was: FRR's daemons, redis, twin's agent,
the command (with every process it ran and waited for), and the rest (the kernel's own threads and
softirqs, anything else running).

On 2 CPUs a bring-up keeps both busy, so its time follows the CPU it needs. Two runs of the same
fabric can differ by tens of CPU-seconds in bgpd alone (sessions reset while the machine falls
behind, and the updates sent again), which a time ratio mixes with what twin itself adds.
Splitting the CPU tells them apart: FRR's share against the floor's FRR, and the rest against the
floor's rest.

    with ProcessCpu() as cpu:
        subprocess.run(...)
    cpu.seconds()   # {"busy": ..., "frr": ..., "redis": ..., "agent": ..., "command": ..., "rest": ...}

- `busy`: the machine's, from /proc/stat (every CPU's time outside idle and iowait).
- `frr`, `redis`, `agent`: the processes of that class still running when the window closes (a
  bring-up's daemons and agent), read from /proc every SAMPLE_S and once more at the close: each
  one's utime + stime, less what it had when the window opened if it was already running.
- `command`: the command's own CPU and that of every process it ran and waited for, as the kernel
  hands it to whoever waits (this process's RUSAGE_CHILDREN): `ip`, `nft`, `vtysh -C`, and each FRR
  daemon's start before it forks into the background (FRR builds its command tree then, about 30 ms a
  daemon), in twin as in the floor.
- `rest`: `busy` less all of these.

Reading /proc costs the sampler about 18 us of CPU a process a sample: at 64 x 128 (about 800
processes) 14 ms a second, 1.4% of one CPU, in twin's runs and the floor's alike.
"""

from __future__ import annotations

import os
import resource
import threading
from pathlib import Path
from types import TracebackType

SAMPLE_S = 1.0
FRR_DAEMONS = frozenset({"bgpd", "zebra", "staticd", "bfdd", "mgmtd", "watchfrr"})
AGENT_MODULE = "twin.switch.agent"   # `python -m twin.switch.agent`: the lab's gNMI agent
CLASSES = ("frr", "redis", "agent")   # classes of processes running when the window closes


def read_stat(path: str) -> tuple[str, list[str]]:
    """A process's /proc/PID/stat (`path`): its comm, and the fields after it (field 3 of proc(5) first:
    utime and stime at 11 and 12, start time at 19). OSError when the process is gone."""
    with open(path) as f:
        stat = f.read()
    return stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def process_seconds(pid: int) -> float:
    """utime + stime of `pid` so far, in seconds; OSError when it is gone."""
    fields = read_stat(f"/proc/{pid}/stat")[1]
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def classify(comm: str, cmdline: str) -> str | None:
    """The class a process counts in, or None (it falls in `rest`)."""
    if comm in FRR_DAEMONS:
        return "frr"
    if comm == "redis-server":
        return "redis"
    if AGENT_MODULE in cmdline:
        return "agent"
    return None


class ProcessCpu:
    """A context that samples /proc (`proc`, for tests) every `interval` seconds while it is open."""

    def __init__(self, proc: Path = Path("/proc"), interval: float = SAMPLE_S) -> None:
        self.proc = proc
        self.interval = interval
        self.ticks_per_s = os.sysconf("SC_CLK_TCK")
        self.first: dict[tuple[str, str], int] = {}   # (pid, start time) -> ticks at the first sample
        self.last: dict[tuple[str, str], tuple[str, int]] = {}   # -> (class, ticks at the last sample)
        self.running: set[tuple[str, str]] = set()   # the processes seen by the latest sample
        self.busy_start = self.busy_end = 0
        self.waited_start = self.waited_end = 0.0
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> ProcessCpu:
        self.busy_start = self.busy_ticks()
        self.waited_start = self.waited_seconds()
        self.sample(first=True)
        self.thread = threading.Thread(target=self._run, name="process-cpu", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.sample()
        self.busy_end = self.busy_ticks()
        self.waited_end = self.waited_seconds()

    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            self.sample()

    def busy_ticks(self) -> int:
        """Every CPU's time outside idle and iowait, in clock ticks (the `cpu` line of /proc/stat)."""
        with open(self.proc / "stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
        return sum(fields) - fields[3] - fields[4]

    @staticmethod
    def waited_seconds() -> float:
        """The CPU of every process this one has waited for, and of those they waited for."""
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def sample(self, first: bool = False) -> None:
        """Every process's CPU now; at the first sample, what each had before the window."""
        running = set()
        for entry in os.scandir(self.proc):
            if not entry.name.isdigit():
                continue
            try:
                comm, fields = read_stat(f"{entry.path}/stat")
            except OSError:   # gone since the listing
                continue
            key = (entry.name, fields[19])   # pid and start time: a pid used again is another process
            ticks = int(fields[11]) + int(fields[12])
            if first:
                self.first[key] = ticks
            known = self.last.get(key)
            if known is None:
                known = (self._class_of(entry.path, comm) or "", 0)
            self.last[key] = (known[0], ticks)
            running.add(key)
        self.running = running

    @staticmethod
    def _class_of(path: str, comm: str) -> str | None:
        cmdline = ""
        if comm.startswith("python"):
            try:
                with open(f"{path}/cmdline", "rb") as f:
                    cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                pass
        return classify(comm, cmdline)

    def seconds(self) -> dict[str, float]:
        """CPU-seconds in the window: `busy` (the machine's), each class, `command` and `rest`.

        A process of a class that exited inside the window is left out of it: if the command's tree
        waited for it (an FRR daemon's parent, gone once the daemon forked) its CPU is in `command`,
        and counting it in its class too would count it twice."""
        spent = dict.fromkeys(CLASSES, 0.0)
        for key, (cls, ticks) in self.last.items():
            if cls and key in self.running:
                spent[cls] += (ticks - self.first.get(key, 0)) / self.ticks_per_s
        busy = (self.busy_end - self.busy_start) / self.ticks_per_s
        command = self.waited_end - self.waited_start
        out = {"busy": busy, **spent, "command": command, "rest": busy - sum(spent.values()) - command}
        return {name: round(value, 2) for name, value in out.items()}
