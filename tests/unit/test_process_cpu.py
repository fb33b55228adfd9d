"""bench/process_cpu.py: the CPU a machine spent during one run, split into FRR, redis, the agent and the rest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from process_cpu import ProcessCpu, classify, process_seconds, read_stat

HZ = os.sysconf("SC_CLK_TCK")


class FakeProc:
    """A /proc with a `stat` and one directory per process, whose CPU the test advances."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.busy = 0
        self.write_stat()

    def write_stat(self) -> None:
        # user nice system idle iowait irq softirq steal: idle and iowait are not busy
        (self.root / "stat").write_text(f"cpu  {self.busy} 0 0 999 77 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n")

    def spend(self, ticks: int) -> None:
        self.busy += ticks
        self.write_stat()

    def process(self, pid: int, comm: str, ticks: int, start: int = 100, cmdline: str = "") -> None:
        d = self.root / str(pid)
        d.mkdir(exist_ok=True)
        fields = ["S"] + ["0"] * 50
        fields[11], fields[12], fields[19] = str(ticks - ticks // 3), str(ticks // 3), str(start)
        (d / "stat").write_text(f"{pid} ({comm}) {' '.join(fields)}\n")
        (d / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode() + b"\0")

    def gone(self, pid: int) -> None:
        for f in (self.root / str(pid)).iterdir():
            f.unlink()
        (self.root / str(pid)).rmdir()


def test_processes_are_classed_by_name_and_the_agent_by_its_module() -> None:
    assert classify("bgpd", "") == "frr"
    assert classify("zebra", "") == "frr"
    assert classify("redis-server", "redis-server 127.0.0.1:6379") == "redis"
    assert classify("python3", "/usr/bin/python3 -m twin.switch.agent --run-dir /run/twin/x") == "agent"
    assert classify("python3", "/usr/bin/python3 -m twin up labs/default.yaml") is None
    assert classify("ip", "ip netns exec x bgpd") is None


def test_only_the_cpu_spent_inside_the_window_counts(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path)
    proc.process(10, "bgpd", ticks=500)            # running before: only what it spends from now counts
    proc.process(11, "python3", ticks=40, cmdline="python3 -m twin.switch.agent --run-dir /run/twin/a")
    cpu = ProcessCpu(proc=tmp_path, interval=3600)  # samples only at the start and the end
    with cpu:
        proc.process(10, "bgpd", ticks=800)
        proc.process(11, "python3", ticks=100, cmdline="python3 -m twin.switch.agent --run-dir /run/twin/a")
        proc.process(12, "redis-server", ticks=60)  # started inside the window: counted whole
        proc.process(13, "zebra", ticks=90)
        proc.spend(1000)
    seconds = cpu.seconds()
    assert seconds["command"] == 0.0   # nothing was waited for in the window
    assert seconds == {"busy": round(1000 / HZ, 2), "frr": round(390 / HZ, 2), "redis": round(60 / HZ, 2),
                       "agent": round(60 / HZ, 2), "command": 0.0,
                       "rest": round(1000 / HZ - 390 / HZ - 60 / HZ - 60 / HZ, 2)}


def test_a_process_that_exited_inside_the_window_is_left_out_of_its_class(tmp_path: Path) -> None:
    """An FRR daemon's parent exits once the daemon forked: whoever waited for it has its CPU (`command`)."""
    proc = FakeProc(tmp_path)
    cpu = ProcessCpu(proc=tmp_path, interval=3600)
    with cpu:
        proc.process(20, "bgpd", ticks=300)
        cpu.sample()
        proc.gone(20)
        proc.process(20, "bgpd", ticks=5, start=999)   # the pid used again: another process, still running
        proc.spend(600)
    assert cpu.seconds()["frr"] == round(5 / HZ, 2)


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux's /proc")
def test_a_real_process_named_as_an_frr_daemon_is_counted_as_frr(tmp_path: Path) -> None:
    """A Python named bgpd (its comm is the name it was run by) spends about 0.5 CPU-s, then waits."""
    bgpd = tmp_path / "bgpd"
    bgpd.symlink_to(sys.executable)
    burn = ("import time, sys\n"
            "end = time.process_time() + 0.5\n"
            "while time.process_time() < end: pass\n"
            "print('done', flush=True)\n"
            "sys.stdin.read()\n")
    zebra = tmp_path / "zebra"
    zebra.symlink_to(sys.executable)
    cpu = ProcessCpu(interval=0.1)
    with cpu:
        # one that exits inside the window, waited for here: `command`, not `frr`
        subprocess.run([str(zebra), "-c", burn.replace("0.5", "0.3").replace("sys.stdin.read()", "")],
                       check=True, capture_output=True)
        child = subprocess.Popen([str(bgpd), "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
        assert child.stdout is not None and child.stdout.readline() == "done\n"
        # the window closes with a sample while it still waits on its stdin
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=10)
    seconds = cpu.seconds()
    assert 0.4 <= seconds["frr"] <= 0.8, seconds
    assert 0.25 <= seconds["command"] <= 0.6, seconds
    assert seconds["busy"] >= seconds["frr"] + seconds["command"] - 0.05, seconds


def test_a_comm_with_spaces_and_parentheses_is_read_whole(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path)
    proc.process(30, "a) b (c", ticks=9, start=42)
    comm, fields = read_stat(str(tmp_path / "30" / "stat"))
    assert comm == "a) b (c" and int(fields[11]) + int(fields[12]) == 9 and fields[19] == "42"


def test_a_process_s_cpu_so_far_and_a_process_that_is_gone() -> None:
    assert process_seconds(os.getpid()) > 0
    with pytest.raises(OSError):
        process_seconds(2**22 + 1)   # above the kernel's pid limit: never a process
