"""A background thread that never fails in silence.

A thread's uncaught exception only reaches threading's hook, which prints a traceback and lets the
program carry on (and exit 0) with a watcher that stopped watching. `Background` keeps the exception
instead: its owner's next look (`check`) and its stop (`stop`) raise it as a TwinError naming what
failed, so the command fails with exit 2 and a message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from twin.model.errors import TwinError


class Background:
    """`work(stopping)` in a daemon thread, until it returns or `stopping` is set."""

    def __init__(self, work: Callable[[threading.Event], None], name: str, what: str) -> None:
        self.what = what
        self.stopping = threading.Event()
        self._work = work
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            self._work(self.stopping)
        except BaseException as exc:  # kept for the owner, who raises it where it looks
            self._error = exc

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def check(self) -> None:
        """Raise the thread's failure, if it failed."""
        if self._error is not None:
            exc = self._error
            raise TwinError(f"{self.what} failed: {type(exc).__name__}: {exc}") from exc

    def stop(self, timeout_s: float = 30.0) -> None:
        """Ask the thread to stop and wait for it; raise its failure, or that it did not stop in time (then
        whatever it uses must stay open: it is still using it)."""
        self.stopping.set()
        if self._thread.ident is not None:
            self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise TwinError(f"{self.what} did not stop within {timeout_s:g} s")
        self.check()
