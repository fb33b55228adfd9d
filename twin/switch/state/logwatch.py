"""Which switches' frr.log changed, told by the kernel (inotify) instead of looked for.

bgpmon asks FRR when frr.log changed (it compares the file's mtime every 15 s). The agent watches
every switch's run directory with one inotify descriptor, which its state loop selects on with the
switches' rtnetlink sockets: a logged session change is noticed when it is written, and an idle
fabric costs nothing between changes. The directory is watched rather than the file, so a log
that does not exist yet, or is made anew, is still seen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Generic, TypeVar

from asyncinotify import Inotify, Mask

K = TypeVar("K")
WRITTEN = Mask.MODIFY | Mask.CREATE | Mask.MOVED_TO


class LogWatch(Generic[K]):
    """One inotify descriptor for many files, each file known by a key."""

    def __init__(self) -> None:
        self._inotify = Inotify()  # non-blocking, close-on-exec
        self._inotify.sync_timeout = 0.0  # drain what is there, never wait
        self._keys: dict[tuple[int, str], K] = {}

    def add(self, path: Path, key: K) -> None:
        """Tell `key` when `path` is written (its directory must exist)."""
        watch = self._inotify.add_watch(path.parent, WRITTEN)
        self._keys[(watch.wd, path.name)] = key

    def fileno(self) -> int:
        return self._inotify.fd

    def changed(self) -> list[K]:
        """The keys whose files were written since the last call, each once, in the order seen;
        every key when the kernel's event queue overflowed (what was written is then unknown)."""
        seen: dict[int, K] = {}
        while (event := self._inotify.sync_get()) is not None:
            if Mask.Q_OVERFLOW in event.mask:
                for each in self._keys.values():
                    seen.setdefault(id(each), each)
                continue
            watch = event.watch
            if watch is None or event.name is None:
                continue
            found = self._keys.get((watch.wd, event.name.name))
            if found is not None:
                seen.setdefault(id(found), found)
        return list(seen.values())

    def close(self) -> None:
        self._inotify.close()
