"""Folders twin writes into (`plan -o`, `export`, `drill --report`): nothing a user wrote is lost.

A folder is written only when it is missing, empty, or holds the marker file `.twin-written`
that an earlier write left: a JSON document listing every file twin wrote there, relative to the
folder, with the SHA-256 of what it wrote. Within such a folder twin

- writes a file only where nothing is, or where the marker lists that file and it still holds
  what twin wrote (a file someone changed or put there is never overwritten: the write is
  refused before anything is touched);
- with `prune`, removes the files the marker lists that are no longer wanted, only when they
  still hold what twin wrote, and then their folders, only when they are left empty; a file
  changed since is kept and leaves the marker (it is the user's now).

The marker is written before the files (listing them as pending), so a write that is killed
half-way leaves a folder the next run still recognises as twin's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

from twin.model.errors import TwinError

MARKER = ".twin-written"
FORMAT = 1

# What to put in a file: its text, its bytes, or a function that writes it at the path given.
Content = str | bytes | Callable[[Path], None]


def write_owned(root: Path, files: Mapping[str, Content], command: str, *, prune: bool) -> list[Path]:
    """Write `files` (relative POSIX path -> content) under `root`; return the paths written.

    `command` names the writer in messages and in the marker (`twin plan -o`). With `prune`, the
    files an earlier write of twin left that are not in `files` are removed (unchanged ones only).
    TwinError, before anything is written, when `root` is not twin's or a file would be clobbered.
    """
    before = _claim(root, command)
    rels = [_checked(root, rel) for rel in files]
    clobbered = [rel for rel in rels if _foreign_file(root, rel, before)]
    if clobbered:
        shown = ", ".join(str(root / rel) for rel in clobbered[:5]) + (" ..." if len(clobbered) > 5 else "")
        raise TwinError(f"{command} {root}: would overwrite {shown}, which twin did not write or which changed "
                        "since it wrote it; nothing was written. Move those files away (or delete them), or "
                        "write to another folder")
    pending: dict[str, str | None] = {**before, **dict.fromkeys(rels)}
    root.mkdir(parents=True, exist_ok=True)
    _save(root, command, pending)
    written: dict[str, str | None] = {}
    paths = []
    for rel, content in zip(rels, files.values(), strict=True):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()  # write the file itself, never where a link points
        if isinstance(content, str):
            path.write_text(content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            content(path)
        written[rel] = _digest(path)
        paths.append(path)
    kept = {rel: digest for rel, digest in before.items() if rel not in written}
    if prune:  # what is left of them (changed since, or replaced by a link or a folder) is no longer twin's
        for rel, digest in kept.items():
            _remove_if_ours(root, rel, digest)
        kept = {}
    _save(root, command, {**kept, **written})
    return paths


def check_folder(root: Path, command: str) -> None:
    """TwinError now when `root` is not a folder twin may write: for a writer that works a while
    (a drill) before it writes."""
    _claim(root, command)


def is_owned(root: Path) -> bool:
    """Whether `root` holds twin's marker."""
    return (root / MARKER).is_file()


def recorded(root: Path) -> dict[str, str | None]:
    """The files the marker in `root` lists, with the digest twin wrote (None: pending); {} when none."""
    if not is_owned(root):
        return {}
    return _load(root)


# -- the marker -----------------------------------------------------------------------------------

def _claim(root: Path, command: str) -> dict[str, str | None]:
    """What twin wrote in `root` before ({} for a new or empty folder); TwinError when it is not twin's."""
    if root.exists() and not root.is_dir():
        raise TwinError(f"{command} {root}: that is a file, not a folder; name a new or empty folder")
    if not root.exists() or not any(root.iterdir()):
        return {}
    if not is_owned(root):
        raise TwinError(f"{command} {root}: the folder is not empty and twin did not write it (it has no "
                        f"{MARKER} file), so twin will not write there: it never overwrites or deletes files "
                        f"it did not write. Name a new or empty folder (e.g. {root.parent / (root.name + '-twin')}), "
                        "or empty this one yourself")
    return _load(root)


def _load(root: Path) -> dict[str, str | None]:
    path = root / MARKER
    try:
        doc = json.loads(path.read_text())
        files = doc["files"]
        if not isinstance(files, dict) or not all(isinstance(k, str) and (v is None or isinstance(v, str))
                                                  for k, v in files.items()):
            raise ValueError("'files' is not a map of path to digest")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TwinError(f"{path} is not a marker twin can read ({exc}); twin will not write into {root}: "
                        "name a new or empty folder") from None
    return {rel: digest for rel, digest in files.items() if _safe(root, rel)}


def _save(root: Path, command: str, files: Mapping[str, str | None]) -> None:
    doc = {"written_by": command, "format": FORMAT,
           "note": "twin rewrites or removes only the files listed here, and only while unchanged",
           "files": dict(sorted(files.items()))}
    tmp = root / f"{MARKER}.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(root / MARKER)


# -- one file -------------------------------------------------------------------------------------

def _checked(root: Path, rel: str) -> str:
    if not _safe(root, rel) or PurePosixPath(rel).name in (MARKER, f"{MARKER}.tmp"):
        raise TwinError(f"internal: twin tried to write '{rel}' outside {root}")
    return PurePosixPath(rel).as_posix()


def _safe(root: Path, rel: str) -> bool:
    """`rel` names a file inside `root`: relative, no '..', and no folder on the way links outside."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts:
        return False
    top = root.resolve()
    parent = (root / pure).parent.resolve()
    return parent == top or top in parent.parents


def _foreign_file(root: Path, rel: str, before: Mapping[str, str | None]) -> bool:
    """A file (or link, or folder) sits at `rel` that is not twin's unchanged output."""
    path = root / rel
    if not path.exists() and not path.is_symlink():
        return False
    if rel not in before or path.is_symlink() or not path.is_file():
        return True
    digest = before[rel]
    return digest is not None and _digest(path) != digest


def _remove_if_ours(root: Path, rel: str, digest: str | None) -> None:
    """Remove a file twin wrote, when it still holds what twin wrote, then its emptied folders."""
    path = root / rel
    if not path.is_file() or path.is_symlink() or (digest is not None and _digest(path) != digest):
        return
    path.unlink()
    folder = path.parent
    while folder != root and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()

