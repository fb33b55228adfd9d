"""Files named in the switch's CLI (`config save/load/reload FILE`) live in the switch's own directory.

SONiC keeps them in /etc/sonic (config_db.json) or the admin's home; a twin switch keeps them in its
run directory. So `/etc/sonic/NAME`, `/home/admin/NAME`, `~/NAME` and a bare `NAME` all mean NAME in
the run directory, the run directory's own absolute path is accepted too, and nothing else is: no
other absolute path, no `..`, no sub-directory. Files are opened relative to the directory with
O_NOFOLLOW, so a symlink planted there (a container shares the directory) cannot lead out of it;
writes replace the name (write-then-rename), never follow it.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from twin.stages import configdb
from twin.stages.configdb import ConfigDb

SONIC_DIR = PurePosixPath("/etc/sonic")
DEFAULT_CONFIG = "config_db.json"
MAX_SIZE = 64 * 1024 * 1024


class PathRefused(ValueError):
    """A file name outside the switch's directory (the message says why)."""


@dataclass(frozen=True)
class SwitchFile:
    """One file of the switch: its name in the run directory and the path SONiC would show."""

    rundir: Path
    name: str

    @property
    def path(self) -> Path:
        return self.rundir / self.name

    @property
    def shown(self) -> str:
        return str(SONIC_DIR / self.name)


def switch_file(rundir: Path, given: str | None, user: str = "admin") -> SwitchFile:
    """The file `given` names (None: /etc/sonic/config_db.json); PathRefused when it is outside."""
    if given is None:
        return SwitchFile(rundir, DEFAULT_CONFIG)
    if not given or "\x00" in given:
        raise PathRefused(f"'{given}': not a file name")
    path = PurePosixPath(given)
    if ".." in path.parts:
        raise PathRefused(f"{given}: '..' is not accepted: files stay in the switch's directory ({SONIC_DIR})")
    if given.startswith("~/"):
        path = PurePosixPath(given[2:])
    elif path.is_absolute():
        for base in (SONIC_DIR, PurePosixPath("/home") / user, PurePosixPath("/root"), PurePosixPath(rundir)):
            if path.parent == base:
                path = PurePosixPath(path.name)
                break
        else:
            raise PathRefused(f"{given}: only files in {SONIC_DIR} (the switch's own directory) are accepted here")
    parts = [p for p in path.parts if p != "."]
    if len(parts) != 1:
        raise PathRefused(f"{given}: sub-directories are not accepted: files stay in {SONIC_DIR}")
    return SwitchFile(rundir, parts[0])


def read_config(file: SwitchFile) -> ConfigDb:
    """The config_db JSON in `file`, opened without following a symlink; OSError or ValueError."""
    dir_fd = os.open(file.rundir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = os.open(file.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > MAX_SIZE:
            raise ValueError("larger than 64 MiB")
        db = json.loads(handle.read().decode())
    if not isinstance(db, dict) or not all(isinstance(rows, dict) for rows in db.values()):
        raise ValueError("not a config_db JSON object of tables")
    return db


def exists(file: SwitchFile) -> bool:
    """Whether `file` is there (a symlink counts as there: reading it is what refuses it)."""
    return os.path.lexists(file.path)


def write_config(file: SwitchFile, db: ConfigDb) -> None:
    """`db` into `file` as SONiC saves it: temporary file in the directory, then renamed over the name."""
    configdb.save(file.path, db)
