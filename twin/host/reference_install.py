"""Bring SONiC's reference artefacts to a machine that has none: the YANG models (which `twin validate`
and every switch's Set validation use; without them the switches judge Sets with twin's built-in
digest, whose verdicts and words are not libyang's) and SONiC's FRR templates (`--sonic-templates`).

What is installed is fixed by reference_manifest.json: each file's path in sonic-net/sonic-buildimage at
one commit, where it goes, and its SHA-256 (written by scripts/reference_manifest.py). The files come
from that commit on GitHub, or from a sonic-buildimage checkout or any URL serving the same tree
(`--from`); every file is checked against its SHA-256 before anything is installed, and they land in
$XDG_DATA_HOME/twin/reference (twin.host.reference) all at once or not at all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

from twin.host.reference import data_home
from twin.model.errors import TwinError

MANIFEST = Path(__file__).with_name("reference_manifest.json")
GITHUB_RAW = "https://raw.githubusercontent.com/{repository}/{commit}/"
TIMEOUT_S = 20.0
WORKERS = 8


class ManifestFile(BaseModel):
    src: str
    sha256: str


class Manifest(BaseModel):
    repository: str
    commit: str
    date: str
    files: dict[str, ManifestFile]   # where it goes in the reference folder -> where SONiC keeps it

    def default_source(self) -> str:
        return GITHUB_RAW.format(repository=self.repository, commit=self.commit)


def load_manifest(path: Path = MANIFEST) -> Manifest:
    return Manifest.model_validate_json(path.read_text())


def install_root() -> Path:
    """Where `twin reference install` puts the artefacts: the folder twin looks in when
    $TWIN_SONIC_REFERENCE is not set."""
    return data_home() / "twin" / "reference"


Fetch = Callable[[str], bytes]


def _fetcher(source: str) -> tuple[Fetch, str]:
    """How to read a file of the tree at `source` (a folder or a URL), and the source in words."""
    if source.startswith(("http://", "https://", "file://")):
        base = source if source.endswith("/") else source + "/"

        def from_url(src: str) -> bytes:
            with urllib.request.urlopen(base + src, timeout=TIMEOUT_S) as answer:
                data: bytes = answer.read()
                return data

        return from_url, base
    folder = Path(source).expanduser()
    if not folder.is_dir():
        raise TwinError(f"twin reference install --from {source}: not a folder nor an http(s):// or file:// "
                        "URL; give a sonic-buildimage checkout at the manifest's commit, or a URL serving one")
    return (lambda src: (folder / src).read_bytes()), str(folder)


def _read_all(manifest: Manifest, fetch: Fetch, where: str, tick: Callable[[], None]) -> dict[str, bytes]:
    """Every file, checked against its SHA-256; one TwinError naming what failed, before anything is
    written. The first file is read alone: a source that cannot be reached at all is said once, at once."""
    def one(dest: str) -> tuple[str, bytes | None, str]:
        entry = manifest.files[dest]
        try:
            data = fetch(entry.src)
        except (OSError, urllib.error.URLError) as exc:
            tick()
            return dest, None, f"{entry.src}: {getattr(exc, 'reason', exc)}"
        tick()
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry.sha256:
            return dest, None, (f"{entry.src}: SHA-256 {digest[:16]}... is not the manifest's {entry.sha256[:16]}... "
                                f"(not sonic-buildimage at {manifest.commit[:12]})")
        return dest, data, ""

    names = sorted(manifest.files)
    first = one(names[0])
    if first[1] is None and "SHA-256" not in first[2]:
        raise TwinError(f"SONiC's reference artefacts were not installed: cannot read {where}: "
                        f"{first[2].split(': ', 1)[1]}; give a sonic-buildimage checkout at "
                        f"{manifest.commit[:12]} with --from, or set TWIN_SONIC_REFERENCE to a reference folder")
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = [first, *pool.map(one, names[1:])]
    failed = [why for _, data, why in results if data is None]
    if failed:
        more = f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""
        raise TwinError(f"SONiC's reference artefacts were not installed from {where}: {len(failed)} of "
                        f"{len(results)} files failed: {'; '.join(failed[:5])}{more}")
    return {dest: data for dest, data, _ in results if data is not None}


def install(source: str | None = None, root: Path | None = None, manifest: Manifest | None = None,
            tick: Callable[[], None] = lambda: None) -> Path:
    """Install the manifest's files from `source` (default: GitHub at the manifest's commit) into `root`
    (default: install_root()); returns the folder. Folders of the artefacts already there are replaced
    whole; anything else in `root` is left as it is."""
    manifest = manifest or load_manifest()
    root = root or install_root()
    fetch, where = _fetcher(source or manifest.default_source())
    files = _read_all(manifest, fetch, where, tick)
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".installing-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for dest, data in files.items():
            path = staging / dest
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        tops = sorted({dest.split("/")[0] for dest in files})
        for top in tops:
            (staging / top / "SOURCE").write_text(
                f"{manifest.commit} {manifest.date}\n{manifest.repository}, installed by 'twin reference install' "
                f"from {where}; every file checked against twin's manifest\n")
        for top in tops:
            old = root / f".replaced-{top}-{os.getpid()}"
            if (root / top).exists():
                (root / top).rename(old)
            (staging / top).rename(root / top)
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root
