"""One command at a time on a lab name, across run roots (twin.host.lablock)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from twin.host.lablock import LabBusyError, LabLock, lock_dir
from twin.model.errors import PlanError, TwinError


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("TWIN_LOCK_DIR", str(tmp_path / "lock"))
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.setenv("TWIN_RUN_DIR", str(a))
    return a, b


def test_a_second_command_on_a_held_lab_is_refused_naming_the_first(roots: tuple[Path, Path]) -> None:
    with LabLock("lab1", "up"):
        with pytest.raises(LabBusyError, match=r"'twin up' \(pid \d+, run root .*/a\)"):
            LabLock("lab1", "down").acquire()
        LabLock("lab2", "up").acquire()   # another name is another lock


def test_the_lock_goes_with_the_process_that_held_it(roots: tuple[Path, Path]) -> None:
    # a `twin up` killed half-way leaves no stale lock: the kernel drops an flock with its holder
    code = ("import os, sys; from twin.host.lablock import LabLock; LabLock('lab1', 'up').acquire(); "
            "print('held', flush=True); sys.stdin.read(); os._exit(9)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    with pytest.raises(LabBusyError, match="is busy"):
        LabLock("lab1", "up").acquire()
    proc.kill()
    proc.wait()
    with LabLock("lab1", "up"):
        pass


def test_a_lab_of_another_run_root_is_refused_while_it_exists(roots: tuple[Path, Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = roots
    (a / "lab1").mkdir()
    with LabLock("lab1", "up"):
        (a / "lab1" / "state.json").write_text("{}")   # the up made the lab
    monkeypatch.setenv("TWIN_RUN_DIR", str(b))
    for command in ("up", "down"):
        with pytest.raises(LabBusyError, match=f"exists under another run root, {a}"):
            LabLock("lab1", command).acquire()
    monkeypatch.setenv("TWIN_RUN_DIR", str(a))
    with LabLock("lab1", "down"):
        (a / "lab1" / "state.json").unlink()            # the down removed it
    monkeypatch.setenv("TWIN_RUN_DIR", str(b))
    with LabLock("lab1", "up"):                          # gone there: the name is free again
        pass


def test_a_stale_owner_is_no_owner(roots: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = roots
    (a / "lab1").mkdir()
    with LabLock("lab1", "up"):
        (a / "lab1" / "state.json").write_text("{}")
    (a / "lab1" / "state.json").unlink()                 # removed by hand, or its run root is gone
    monkeypatch.setenv("TWIN_RUN_DIR", str(b))
    with LabLock("lab1", "up"):
        pass


def test_the_lock_file_is_named_by_a_checked_name(roots: tuple[Path, Path]) -> None:
    with pytest.raises(PlanError, match="lab name"):
        LabLock("../x", "up")
    assert not lock_dir().exists() or list(lock_dir().iterdir()) == []


def test_a_lock_folder_others_can_write_or_a_linked_lock_file_is_refused(roots: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    folder = lock_dir()
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)     # as /run/lock is: anyone may plant a file there
    with pytest.raises(TwinError, match="only it can write"):
        LabLock("lab1", "up").acquire()
    folder.chmod(0o755)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (folder / "lab1.lock").symlink_to(victim)
    with pytest.raises(OSError):
        LabLock("lab1", "up").acquire()      # O_NOFOLLOW: never written through a link
    assert victim.read_text() == "precious"
