"""One lab name, one lab, one command at a time, on the whole host.

A lab's namespaces (tw.<lab>.<node>), its management bridge (tw-<lab>) and FRR's pathspaces
(tw_<lab>_<node>) are named after the lab alone, whatever the run root: two `twin up` of one name
(0.3 s apart, or from two run roots) tore each other's nodes down and both reported healthy, leaving
daemons no `twin down` ended. `LabLock` is an flock(2) on /run/twin-locks/<lab>.lock held by the
command that creates or removes the lab; the kernel drops it when that process ends, however it ends,
so a killed `twin up` leaves no stale lock. The file also records the run root the lab was last
brought up under, so a command from another run root is refused while that lab exists.

The folder is root's alone (not /run/lock, which every user may write): one another user made, or
one that others may write to, is refused, and a lock file that is a link is never followed, so no one
can point twin's write at a file of theirs choosing.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path
from types import TracebackType

from twin.host.rundir import lab_dir, run_root
from twin.model.errors import TwinError


def lock_dir() -> Path:
    """Host-wide, not under the run root (TWIN_LOCK_DIR only moves it for tests of this module)."""
    return Path(os.environ.get("TWIN_LOCK_DIR", "/run/twin-locks"))


def _safe_folder(folder: Path) -> None:
    """Make `folder` (mode 0755) or check it: a real folder, this user's, writable by no one else."""
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise TwinError(f"{folder} (twin's lab locks) is not a folder of this user's that only it can write "
                        f"(owner uid {st.st_uid}, mode {stat.filemode(st.st_mode)}); remove it and run the command "
                        "again")


class LabBusyError(TwinError):
    """Another command holds the lab, or the lab belongs to another run root."""


class LabLock:
    """Held while `command` ("up", "down") works on `lab`; `keep_owner`: the lab exists afterwards,
    so the record keeps naming this run root as its owner."""

    def __init__(self, lab: str, command: str) -> None:
        self.lab, self.command = lab, command
        self.path = lock_dir() / f"{lab}.lock"   # lab_dir checked the name: it is a plain file name
        self.fd: int | None = None
        lab_dir(lab)

    def acquire(self) -> None:
        _safe_folder(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise LabBusyError(
                f"lab '{self.lab}' is busy: 'twin {holder.get('command', '?')}' (pid {holder.get('pid', '?')}, "
                f"run root {holder.get('run_root', '?')}) is working on it; wait for it to finish, or pick "
                "another --name") from None
        owner = str(_read(fd).get("run_root") or "")
        here = str(run_root())
        if owner and owner != here and (Path(owner) / self.lab / "state.json").exists():
            os.close(fd)
            raise LabBusyError(
                f"lab '{self.lab}' exists under another run root, {owner}; remove it there "
                f"('TWIN_RUN_DIR={owner} twin down --name {self.lab}') or pick another --name")
        self.fd = fd
        _write(fd, {"pid": os.getpid(), "command": self.command, "run_root": here})

    def release(self, keep_owner: bool) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        try:
            _write(fd, {"run_root": str(run_root())} if keep_owner else {})
        finally:
            os.close(fd)   # closing the last descriptor drops the flock

    def __enter__(self) -> LabLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # after an up the lab exists (a failed up removed it); after a down it does not
        self.release(keep_owner=(lab_dir(self.lab) / "state.json").exists())


def _read(fd: int) -> dict[str, object]:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096)
    try:
        doc = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _write(fd: int, doc: dict[str, object]) -> None:
    data = json.dumps(doc).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
