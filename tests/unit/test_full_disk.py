"""A full disk is a clear error naming the path, exit 2, never a bare Errno 28 traceback."""

from __future__ import annotations

import shutil
from collections import namedtuple
from pathlib import Path

import pytest

from twin.cli import app as cli
from twin.host import rundir
from twin.model.errors import TwinError


def test_enospc_names_the_file_being_written(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")

    def full(*_: object, **__: object) -> object:
        Path("/dev/full").write_text("x" * 8192)   # ENOSPC on write, with no file name in the error
        raise AssertionError("unreachable")

    monkeypatch.setattr("twin.stages.lab_file.load_lab", full)
    monkeypatch.setattr("sys.argv", ["twin", "plan", str(tmp_path / "t.yaml")])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no space left on the device writing /dev/full" in " ".join(err.split())
    assert "Traceback" not in err


def test_other_os_errors_are_not_dressed_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def denied(*_: object, **__: object) -> object:
        raise PermissionError(13, "Permission denied", "/x")

    monkeypatch.setattr("twin.stages.lab_file.load_lab", denied)
    monkeypatch.setattr("sys.argv", ["twin", "plan", str(tmp_path / "t.yaml")])
    with pytest.raises(PermissionError):
        cli.main()


Usage = namedtuple("Usage", "total used free")


def test_up_refuses_a_run_root_without_room(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path / "not" / "yet"))
    seen: list[Path] = []

    def usage(path: Path) -> Usage:
        seen.append(Path(path))
        return Usage(1 << 30, 0, 20 << 20)

    monkeypatch.setattr(shutil, "disk_usage", usage)
    rundir.check_room(4)                            # 16 + 4 MiB fit in 20
    with pytest.raises(TwinError, match=r"20 MiB free .* 12 nodes needs 28 MiB.*TWIN_RUN_DIR"):
        rundir.check_room(12)
    assert seen[-1] == tmp_path                     # the nearest folder that exists
    assert not (tmp_path / "not").exists()
