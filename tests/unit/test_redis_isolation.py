"""One switch's slow or paused redis holds back its own tables only: the agent's state loop hands
each switch's writes to that switch's writer thread and gives a switch that is behind no more work
until it catches up; a failed write has the switch's tables written afresh."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from twin.switch.state import switchd
from twin.switch.state.serial_writer import SerialWriter
from twin.switch.state.switchd import MAX_BACKLOG, StateLoop

WAIT_S = 10   # generous: these wait for events, they time nothing


class Producers:
    """A switch's producers as the loop drives them: a socket of kernel events, each event one
    redis write (a job on its writer), which `gate` can hold as a paused redis would."""

    def __init__(self, name: str, tmp_path: Path) -> None:
        self.name, self.writer = name, SerialWriter(name)
        self.log_path = tmp_path / f"{name}.log"
        self.sock, self.kernel = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.gate = threading.Event()
        self.gate.set()
        self.written: list[bytes] = []
        self.wrote = threading.Condition()
        self.handled = 0
        self.fail_next = False
        self.write_alls = 0

    def subscribe(self, rcvbuf: int) -> socket.socket:
        return self.sock

    def write_all(self) -> None:
        self.write_alls += 1

    def bgp_settled(self) -> bool:
        return True

    def runs_bfdd(self) -> bool:
        return False

    def poll_frr(self, bgp: bool = True) -> None: ...

    def poll_counters(self) -> None: ...

    def on_kernel_events(self) -> int:
        """Every waiting event read, their rows written as one batch (one job), as SwitchProducers."""
        batch: list[bytes] = []
        while True:
            try:
                batch.append(self.sock.recv(100))
            except BlockingIOError:
                break
        self.handled += len(batch)
        if batch:
            self.writer.submit(lambda: self._write(batch))
        return len(batch)

    def _write(self, batch: list[bytes]) -> None:
        self.gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("redis went away")
        with self.wrote:
            self.written.extend(batch)
            self.wrote.notify_all()

    def wait_written(self, data: bytes) -> bool:
        with self.wrote:
            return self.wrote.wait_for(lambda: data in self.written, WAIT_S)

    def close(self) -> None:
        self.gate.set()
        self.writer.close()
        self.sock.close()
        self.kernel.close()


@pytest.fixture
def two(tmp_path: Path) -> Any:
    leaf1, leaf2 = Producers("leaf1", tmp_path), Producers("leaf2", tmp_path)
    loop = StateLoop([leaf1, leaf2])  # type: ignore[list-item]
    stop = threading.Event()
    loop.start()
    runner = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    runner.start()
    yield loop, leaf1, leaf2
    stop.set()
    runner.join(WAIT_S)
    loop.close()


def test_a_paused_redis_does_not_hold_back_another_switch(two: Any) -> None:
    loop, leaf1, leaf2 = two
    leaf1.gate.clear()                       # leaf1's redis stops answering (CLIENT PAUSE)
    deadline = time.monotonic() + WAIT_S
    for i in range(3 * MAX_BACKLOG):         # more batches than its writer may hold, one at a time
        leaf1.kernel.send(b"leaf1 %d" % i)
        while not (leaf1.handled > i or loop.items[0].parked) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert loop.items[0].parked              # the loop stopped reading leaf1's events...
    assert leaf1.handled == MAX_BACKLOG and leaf1.writer.backlog() == MAX_BACKLOG  # ...the rest wait in its socket
    leaf2.kernel.send(b"leaf2 down")
    assert leaf2.wait_written(b"leaf2 down")  # while leaf2's go on
    assert leaf1.written == []
    leaf1.gate.set()                         # its redis answers again: every event reaches it, in order
    assert leaf1.wait_written(b"leaf1 %d" % (3 * MAX_BACKLOG - 1))
    assert leaf1.written == [b"leaf1 %d" % i for i in range(3 * MAX_BACKLOG)]


def test_a_failed_write_has_the_switch_written_afresh(two: Any) -> None:
    _, leaf1, leaf2 = two
    before = leaf1.write_alls
    leaf1.fail_next = True
    leaf1.kernel.send(b"lost")
    leaf1.kernel.send(b"after")
    deadline = threading.Event()
    for _ in range(int(WAIT_S / 0.05)):      # the next refresh (once a second) takes the failure
        if leaf1.write_alls > before:
            break
        deadline.wait(0.05)
    assert leaf1.write_alls == before + 1
    for _ in range(int(WAIT_S / 0.05)):      # on a loaded machine leaf2's first writing may come later
        if leaf2.write_alls:
            break
        deadline.wait(0.05)
    assert leaf2.write_alls == 1             # the other switch only had its first writing, not a second


def test_a_writer_runs_jobs_in_order_on_its_thread_and_drops_what_follows_a_failure() -> None:
    writer = SerialWriter("leaf1")
    done: list[int] = []
    writer.submit(lambda: done.append(0))    # not started: at once
    assert done == [0]
    woken = threading.Event()
    writer.start(woken.set)
    gate = threading.Event()
    writer.submit(gate.wait)
    writer.submit(lambda: done.append(1))
    assert writer.backlog() == 2 and done == [0]

    def fail() -> None:
        raise ConnectionError("gone")

    writer.submit(fail)
    writer.submit(lambda: done.append(2))    # queued behind the failure: dropped
    gate.set()
    assert writer.wait_idle(WAIT_S) and woken.wait(WAIT_S)
    assert done == [0, 1]
    assert isinstance(writer.take_failure(), ConnectionError) and writer.take_failure() is None
    writer.close()


def test_backlog_bound_is_small() -> None:
    assert 1 <= switchd.MAX_BACKLOG <= 16
