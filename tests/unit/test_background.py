"""Background threads never fail in silence: their failure reaches whoever looks next, as a TwinError."""

from __future__ import annotations

import socket
import threading

import pytest

from twin.checks.fibwatch import FibWatch
from twin.host.background import Background
from twin.host.poll import poll_until
from twin.model.errors import TwinError


def test_a_background_failure_is_raised_where_its_owner_looks() -> None:
    def broken(stopping: threading.Event) -> None:
        raise OSError(9, "Bad file descriptor")

    worker = Background(broken, "fibwatch", "the FIB watch")
    worker.start()
    with pytest.raises(TwinError, match=r"the FIB watch failed: OSError: \[Errno 9\] Bad file descriptor"):
        worker.stop()


def test_a_thread_that_will_not_stop_is_an_error_too() -> None:
    def stuck_work(stopping: threading.Event) -> None:
        threading.Event().wait(5)

    stuck = Background(stuck_work, "stuck", "the sampler")
    stuck.start()
    with pytest.raises(TwinError, match=r"the sampler did not stop within 0\.1 s"):
        stuck.stop(0.1)


def _dying_watch() -> tuple[FibWatch, socket.socket]:
    """A FIB watch that hears an event from a switch it has no dump for: its thread fails."""
    mine, theirs = socket.socketpair()
    mine.setblocking(False)
    watch = FibWatch({})
    watch._socks[mine.fileno()] = ("leaf9", mine)
    theirs.send(b"event")
    return watch, theirs


def test_a_fib_watch_whose_thread_died_fails_the_next_look() -> None:
    watch, theirs = _dying_watch()
    with pytest.raises(TwinError, match=r"FIB watch .* failed: KeyError"), watch:
        assert poll_until(lambda: not watch._worker.alive, 5, 0.01)
        watch.snapshot()
    theirs.close()


def test_a_fib_watch_whose_thread_died_fails_its_exit_when_nobody_looked() -> None:
    watch, theirs = _dying_watch()
    with pytest.raises(TwinError, match=r"FIB watch .* failed: KeyError"), watch:
        assert poll_until(lambda: not watch._worker.alive, 5, 0.01)
    theirs.close()
