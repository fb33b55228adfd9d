"""SIGINT, SIGTERM and SIGHUP inside `restoring_on_signals` take Ctrl-C's path: the clean-up runs, a second
signal does not cut it short, and the command exits 128 + the signal's number."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from twin.host.signals import Interrupted, restoring_on_signals


@pytest.fixture(autouse=True)
def default_handlers() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_runs_the_clean_up_and_exits_128_plus_its_number(signum: signal.Signals,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    restored = []
    with pytest.raises(SystemExit) as ended, restoring_on_signals():
        try:
            os.kill(os.getpid(), signum)
            raise AssertionError("the signal did not interrupt")
        finally:
            restored.append("fault")
    assert ended.value.code == 128 + signum
    assert restored == ["fault"]
    assert f"interrupted by {signum.name}; exiting with {128 + signum}" in capfd.readouterr().err


def test_it_is_a_keyboard_interrupt_so_except_exception_does_not_swallow_it() -> None:
    seen: list[str] = []
    with pytest.raises(SystemExit), restoring_on_signals():
        try:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except Exception:  # what a restore path must not catch
                seen.append("swallowed")
        except KeyboardInterrupt as exc:
            assert isinstance(exc, Interrupted) and exc.exit_code == 143
            seen.append("interrupted")
            raise
    assert seen == ["interrupted"]


def test_a_second_signal_does_not_cut_the_restore_short(capfd: pytest.CaptureFixture[str]) -> None:
    steps = []
    with pytest.raises(SystemExit) as ended, restoring_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        finally:
            os.kill(os.getpid(), signal.SIGHUP)  # e.g. the terminal closes while the drill restores
            steps.append("restored")
    assert steps == ["restored"]
    assert ended.value.code == 143  # the first signal's
    assert "SIGHUP received while putting back what was changed; not interrupting" in capfd.readouterr().err


def test_a_failing_clean_up_still_exits_with_the_signals_code() -> None:
    with pytest.raises(SystemExit) as ended, restoring_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGHUP)
        finally:
            raise RuntimeError("nft: No such file or directory")
    assert ended.value.code == 129


def test_a_swallowed_interrupt_still_exits_with_the_signals_code() -> None:
    # contextlib.suppress(BaseException): some library's catch-all inside the command
    with pytest.raises(SystemExit) as ended, restoring_on_signals(), contextlib.suppress(BaseException):
        os.kill(os.getpid(), signal.SIGTERM)
    assert ended.value.code == 143


def test_handlers_are_put_back_and_nothing_happens_without_a_signal() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with restoring_on_signals():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before


def test_an_ignored_signal_stays_ignored() -> None:
    """`nohup twin drill ...` ignores SIGHUP: the drill goes on when the terminal closes."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with restoring_on_signals():
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGHUP)
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def test_outside_the_main_thread_it_changes_nothing() -> None:
    seen = []

    def worker() -> None:
        with restoring_on_signals():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [before]


def test_a_child_forked_without_exec_dies_of_the_signal_as_before() -> None:
    """pyroute2 forks helpers into a lab's namespaces; `twin down` ends them with SIGTERM: they must die,
    not run the command's restore."""
    with restoring_on_signals():
        child = os.fork()
        if child == 0:  # pragma: no cover - the child
            try:
                while True:
                    signal.pause()
            finally:
                os._exit(3)  # reached only if the signal raised in the child
        time.sleep(0.1)
        os.kill(child, signal.SIGTERM)
        _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
