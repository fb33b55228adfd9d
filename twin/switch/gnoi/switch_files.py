"""A twin switch's file system as gNOI File sees it: the switch's run directory is SONiC's `/`.

sonic-gnmi's File service (pkg/gnoi/file/file.go) reads and writes the host's file system through
the gnmi container's /mnt/host bind mount. A twin switch has no file system of its own: its files
(config_db.json, frr.conf, its logs and sockets) are in its run directory, so that directory plays
`/`. Two names lead to the same place:
- `/NAME` is NAME in the run directory, and so is `/etc/sonic/NAME`, where SONiC keeps
  config_db.json and where the switch's CLI names the same files (twin.switch.cli.cli_paths);
- any other path is the same path under the run directory (`/tmp/x` is `tmp/x` there).

A path is cleaned as Go's filepath.Clean cleans it, so `..` never climbs above `/`. Nothing leads out of
the run directory: each directory on the way is opened relative to the one before it without
following a symbolic link (O_NOFOLLOW), the last name is looked at without following one either
(a link is reported as the link), and writes create or replace names, never follow them. A path
that would go through a link is refused (`LinkRefused`).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

SONIC_DIR = "/etc/sonic"
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class LinkRefused(OSError):
    """The path goes through a symbolic link, which a switch's file service does not follow
    (EACCES: refused as a path the service may not use)."""


class ParentError(OSError):
    """A written file's directories could not be made or opened."""


def go_clean(path: str) -> str:
    """Go's filepath.Clean of a path: `.` and `..` resolved lexically (`/..` is `/`), repeated and
    trailing slashes dropped; "" is ".". (posixpath.normpath keeps a leading `//`; Go does not.)"""
    if not path:
        return "."
    cleaned = posixpath.normpath(path)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def errno_text(code: int) -> str:
    """An errno as Go's syscall.Errno prints it (glibc's text, lower case first: "no such file or directory")."""
    text = os.strerror(code)
    return text[:1].lower() + text[1:]


@dataclass(frozen=True)
class Entry:
    """One name of a directory listing, with what lstat says of it."""

    name: str
    info: os.stat_result


class SwitchFiles:
    """The run directory `root` as the switch's `/` (the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def parts(self, clean: str) -> list[str]:
        """The names under the run directory that the cleaned absolute path `clean` leads to."""
        if clean == SONIC_DIR or clean.startswith(SONIC_DIR + "/"):
            clean = clean[len(SONIC_DIR):]
        return [p for p in clean.split("/") if p]

    @contextmanager
    def directory(self, parts: list[str], create: bool = False) -> Iterator[int]:
        """A descriptor of the directory `parts` leads to, each step opened without following a link;
        `create`: missing directories are made (0755), as Go's os.MkdirAll makes them."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in parts:
                if create:
                    with suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                following = _open_dir(part, fd)
                os.close(fd)
                fd = following
            yield fd
        finally:
            os.close(fd)

    def lstat(self, parts: list[str]) -> os.stat_result:
        """What lstat says of the name `parts` leads to (the run directory itself for none)."""
        if not parts:
            return os.stat(self.root)
        with self.directory(parts[:-1]) as fd:
            return os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)

    def listing(self, parts: list[str]) -> list[Entry]:
        """The directory's entries in name order (Go's os.ReadDir), those that vanish meanwhile left out."""
        entries = []
        with self.directory(parts) as fd, os.scandir(fd) as scan:
            for entry in scan:
                try:
                    entries.append(Entry(entry.name, entry.stat(follow_symlinks=False)))
                except FileNotFoundError:
                    continue
        return sorted(entries, key=lambda e: e.name)

    def open_regular(self, parts: list[str]) -> BinaryIO:
        """The regular file `parts` leads to, opened for reading; a link, a fifo or a device is refused
        (OSError EINVAL) before anything is read from it."""
        with self.directory(parts[:-1]) as fd:
            handle = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            os.close(handle)
            raise OSError(errno.EINVAL, "not a regular file")
        return os.fdopen(handle, "rb")

    def remove(self, parts: list[str]) -> None:
        """Go's os.Remove: unlink the name (a link itself, never its target), else rmdir it; when both
        fail, rmdir's error unless it is ENOTDIR (then unlink's)."""
        with self.directory(parts[:-1]) as fd:
            try:
                os.unlink(parts[-1], dir_fd=fd)
                return
            except OSError as unlink_error:
                try:
                    os.rmdir(parts[-1], dir_fd=fd)
                except OSError as rmdir_error:
                    raise (unlink_error if rmdir_error.errno == errno.ENOTDIR else rmdir_error) from None

    @contextmanager
    def replacing(self, parts: list[str]) -> Iterator[ReplacedFile]:
        """Write the file `parts` leads to as sonic-gnmi's Put does: its directories made (ParentError
        when they cannot be), the data written to NAME.tmp beside it, then `ReplacedFile.chmod` and
        `rename` over NAME; NAME.tmp removed when the block ends before the rename."""
        with ExitStack() as stack:
            try:
                fd = stack.enter_context(self.directory(parts[:-1], create=True))
            except OSError as error:
                raise ParentError(error.errno, error.strerror) from error
            temporary = parts[-1] + ".tmp"
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o644, dir_fd=fd)
            replaced = ReplacedFile(os.fdopen(handle, "wb"), fd, temporary, parts[-1])
            try:
                yield replaced
            finally:
                replaced.file.close()
                if not replaced.renamed:
                    with suppress(FileNotFoundError):
                        os.unlink(temporary, dir_fd=fd)


@dataclass
class ReplacedFile:
    """A file being written under a temporary name in its directory (`SwitchFiles.replacing`)."""

    file: BinaryIO
    dir_fd: int
    temporary: str
    name: str
    renamed: bool = False

    def chmod(self, mode: int) -> None:
        os.fchmod(self.file.fileno(), mode)

    def rename(self) -> None:
        """Close it and rename it over its name."""
        self.file.close()
        os.rename(self.temporary, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        self.renamed = True


def _open_dir(name: str, dir_fd: int) -> int:
    """Open the directory `name` in `dir_fd` without following a link (LinkRefused for one)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(
                os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise LinkRefused(errno.EACCES, f"{name} is a symbolic link") from None
        raise
