"""await_file: a file appearing in a directory is told by the kernel, and the wait does not look
for it in between (the lab's agent waits so through a whole launch)."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from twin.host import file_wait
from twin.host.file_wait import await_file


def _later(seconds: float, action: object) -> threading.Thread:
    def run() -> None:
        time.sleep(seconds)
        action()  # type: ignore[operator]

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_a_file_made_while_waiting_ends_the_wait(tmp_path: Path) -> None:
    _later(0.2, lambda: (tmp_path / "nodes.launched").touch())
    assert await_file(tmp_path, "nodes.launched", timeout=30, recheck=30)


def test_a_file_renamed_into_place_ends_the_wait(tmp_path: Path) -> None:
    (tmp_path / "agent.tmp").write_text("{}")
    _later(0.2, lambda: (tmp_path / "agent.tmp").replace(tmp_path / "agent.json"))
    assert await_file(tmp_path, "agent.json", timeout=30, recheck=30)


def test_a_file_already_there_is_found_at_once(tmp_path: Path) -> None:
    (tmp_path / "lab.judged").touch()
    assert await_file(tmp_path, "lab.judged", timeout=0)


def test_the_directory_going_away_ends_the_wait_without_the_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "lab"
    run_dir.mkdir()
    _later(0.2, lambda: shutil.rmtree(run_dir))
    assert not await_file(run_dir, "nodes.launched", timeout=30, recheck=30)


def test_no_directory_is_no_file(tmp_path: Path) -> None:
    assert not await_file(tmp_path / "gone", "nodes.launched", timeout=30)


def test_the_timeout_ends_the_wait(tmp_path: Path) -> None:
    assert not await_file(tmp_path, "never", timeout=0.3, recheck=30)


def test_the_wait_does_not_look_for_the_file_in_between(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    looks: list[float] = []
    exists = Path.exists

    def counted(self: Path) -> bool:
        if self.name == "nodes.launched":
            looks.append(time.monotonic())
        return exists(self)

    monkeypatch.setattr(Path, "exists", counted)
    _later(1.0, lambda: (tmp_path / "unrelated").touch())   # a change that is not the file: one look
    _later(1.5, lambda: (tmp_path / "nodes.launched").touch())
    assert await_file(tmp_path, "nodes.launched", timeout=30, recheck=30)
    assert len(looks) == 3, f"looked {len(looks)} times in 1.5 s (a 20 ms poll looks 75 times)"
    assert file_wait.RECHECK_S >= 1.0
