"""SIGINT, SIGTERM and SIGHUP end a command the way Ctrl-C does, so that what it changed is put back.

Python's default for SIGTERM and SIGHUP is to die on the spot: no `finally`, no `except BaseException`,
no context manager's exit runs, so a drill killed by `kill` or by its terminal closing left its fault in
place. Inside `restoring_on_signals()` each of the three raises `Interrupted` in the main thread instead,
the path Ctrl-C's KeyboardInterrupt takes (it is one), so every restore on that path runs; the command
then exits with the shell's convention, 128 + the signal's number, and a message naming the signal.

Only the first signal interrupts: one arriving while the command restores is noted on stderr and does not
cut the restore short (SIGKILL still ends the process at once). A signal ignored when the command
started (`nohup` ignores SIGHUP, a background job of a script ignores SIGINT) stays ignored.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType

RESTORING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


class Interrupted(KeyboardInterrupt):
    """A signal that ends the command after its clean-up; `exit_code` is 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(f"{self.name} received")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _say(text: str) -> None:
    """A line on stderr that cannot fail (the terminal may be gone after SIGHUP)."""
    with suppress(OSError, ValueError):
        os.write(sys.stderr.fileno(), text.encode())


class _Handler:
    def __init__(self, what: str) -> None:
        self.what = what
        self.first: int | None = None
        self.pid = os.getpid()

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.pid:  # a child forked without exec (pyroute2's netns helpers) dies as before
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        name = signal.Signals(signum).name
        if self.first is not None:
            _say(f"twin: {name} received while {self.what}; not interrupting that (SIGKILL would)\n")
            return
        self.first = signum
        _say(f"twin: {name} received: {self.what} before exiting\n")
        raise Interrupted(signum)


@contextmanager
def restoring_on_signals(what: str = "putting back what was changed",
                         signums: tuple[signal.Signals, ...] = RESTORING) -> Iterator[None]:
    """Within: SIGINT, SIGTERM and SIGHUP raise `Interrupted` (once); leaving through it raises
    SystemExit(128 + signum) after a message. The previous handlers are back afterwards. Main thread only
    (Python runs signal handlers there); elsewhere this changes nothing."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = _Handler(what)
    previous: dict[signal.Signals, Handler] = {}
    for signum in signums:
        old = signal.getsignal(signum)
        if old == signal.SIG_IGN:
            continue
        previous[signum] = old
        signal.signal(signum, handler)
    try:
        yield
    except BaseException as exc:
        if handler.first is None:
            raise
        if not isinstance(exc, Interrupted):  # the clean-up failed on its way out: say how, keep the code
            _say(f"twin: while interrupted: {exc}\n")
        _exit(handler.first)
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
    if handler.first is not None:  # interrupted, and something on the way swallowed it
        _exit(handler.first)


def _exit(signum: int) -> None:
    code = 128 + signum
    _say(f"twin: interrupted by {signal.Signals(signum).name}; exiting with {code}\n")
    raise SystemExit(code) from None
