"""SSH sessions stream a command's output with the client's flow control: nothing is read from the
command while the client has not taken what was written, and the output kept for `|` filters is
bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from twin.switch.cli import sshd
from twin.switch.cli.shell import Switch
from twin.switch.cli.sshd import Session

CHUNK = b"x" * 65536


class EndlessProcess:
    """A command that prints without end (`ping` without -c, a big table) until killed."""

    def __init__(self) -> None:
        self.reads = 0
        self.killed = False

    async def read(self) -> bytes:
        await asyncio.sleep(0)
        if self.killed:
            return b""
        self.reads += 1
        return CHUNK

    def write(self, data: bytes) -> None:
        pass

    def close_stdin(self) -> None:
        pass

    def interrupt(self) -> None:
        self.killed = True

    def kill(self) -> None:
        self.killed = True

    async def wait(self) -> int:
        while not self.killed:
            await asyncio.sleep(0.001)
        return 130


class SlowClient:
    """An SSH channel's writer whose client reads nothing until `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.written = 0

    def write(self, text: str) -> None:
        self.written += len(text)

    async def drain(self) -> None:
        if self.written:   # as asyncssh's: only what waits in the channel's send buffer holds it
            await self.release.wait()


class Channel:
    def is_closing(self) -> bool:
        return False

    def clear_input(self) -> None:
        pass


class SshProcess:
    def __init__(self) -> None:
        self.stdout, self.stderr, self.channel = SlowClient(), SlowClient(), Channel()

    def get_terminal_type(self) -> str | None:
        return None


def _session(tmp_path: Path) -> tuple[Session, SshProcess]:
    proc = SshProcess()
    return Session(proc, Switch(name="leaf1", netns="tw.t.leaf1", rundir=tmp_path), "admin"), proc


def test_output_is_read_no_faster_than_the_client_takes_it(tmp_path: Path) -> None:
    async def run() -> tuple[int, int, int]:
        session, ssh = _session(tmp_path)
        command = EndlessProcess()

        async def start() -> Any:
            return command

        task = asyncio.create_task(session.run_process(start, capture=False))
        for _ in range(200):
            await asyncio.sleep(0)
        stalled = command.reads
        ssh.stdout.release.set()          # the client reads: output flows again
        for _ in range(200):
            await asyncio.sleep(0)
        flowing = command.reads
        command.interrupt()               # ^C
        await asyncio.wait_for(task, 5)
        return stalled, flowing, ssh.stdout.written

    stalled, flowing, written = asyncio.run(run())
    assert stalled == 1                    # one chunk written, then the session waits for the client
    assert flowing > stalled + 10
    assert written >= flowing * len(CHUNK) - len(CHUNK)


def test_output_kept_for_filters_is_bounded(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sshd, "MAX_FILTERED", 10 * len(CHUNK))

    async def run() -> tuple[str, EndlessProcess]:
        session, _ = _session(tmp_path)
        command = EndlessProcess()

        async def start() -> Any:
            return command

        output = await asyncio.wait_for(session.run_process(start, capture=True), 5)
        return output.out, command

    out, command = asyncio.run(run())
    assert command.killed and command.reads == 11
    assert len(out) <= 10 * len(CHUNK) + 200
    assert "output over" in out and "command stopped" in out


def test_a_switch_whose_commands_hang_does_not_hold_back_another_switchs_sessions(tmp_path: Path) -> None:
    """Blocking commands (show, config) run on their switch's own threads: leaf1's all stuck (its
    redis paused), leaf2's still answer."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Event()
    pools = {n: ThreadPoolExecutor(max_workers=sshd.SWITCH_THREADS, thread_name_prefix=f"ssh-{n}")
             for n in ("leaf1", "leaf2")}
    sessions = {n: Session(SshProcess(), Switch(name=n, netns=f"tw.t.{n}", rundir=tmp_path), "admin", pools[n])
                for n in pools}

    async def run() -> str:
        stuck = [asyncio.ensure_future(sessions["leaf1"].blocking(gate.wait))
                 for _ in range(8 * sshd.SWITCH_THREADS)]
        await asyncio.sleep(0.05)
        answer = await asyncio.wait_for(sessions["leaf2"].blocking(lambda: threading.current_thread().name), 5)
        gate.set()
        await asyncio.gather(*stuck)
        return answer

    try:
        assert asyncio.run(run()).startswith("ssh-leaf2")
    finally:
        gate.set()
        for pool in pools.values():
            pool.shutdown(wait=False)
