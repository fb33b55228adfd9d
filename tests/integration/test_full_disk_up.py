"""`twin up` on a run directory without room: exit 2 naming the path, nothing left behind."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import DATA, REPO, TWIN, leftovers, unique


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)])


def test_up_on_a_full_run_root_is_a_clear_error(small_tmpfs: Path) -> None:
    name = unique("t")
    env = {**os.environ, "TWIN_RUN_DIR": str(small_tmpfs)}
    proc = subprocess.run([*TWIN, "up", str(DATA / "mini.yaml"), "--name", name], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert f"not enough space for the lab's files in {small_tmpfs}" in err and "Traceback" not in err
    assert leftovers(name) == []
    assert list(small_tmpfs.iterdir()) == []
