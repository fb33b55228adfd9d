"""`twin reference install`: SONiC's artefacts onto a machine without them, every file checked against
twin's manifest, all at once or not at all."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from twin.host.reference import REFERENCE_ENV, reference_dir
from twin.host.reference_install import Manifest, ManifestFile, install, load_manifest
from twin.model.errors import TwinError

SHARED = reference_dir() or Path("/nonexistent")   # $TWIN_SONIC_REFERENCE, as every tier finds it


def _tree(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, Manifest]:
    """A source tree laid out as sonic-buildimage, and a manifest of it."""
    src = tmp_path / "sonic-buildimage"
    entries = {}
    for i, (dest, data) in enumerate(files.items()):
        rel = f"src/part{i}/{Path(dest).name}"
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
        entries[dest] = ManifestFile(src=rel, sha256=hashlib.sha256(data).hexdigest())
    return src, Manifest(repository="sonic-net/sonic-buildimage", commit="c" * 40, date="2026-08-23", files=entries)


FILES = {"sonic-yang-models/yang-models/sonic-port.yang": b"module sonic-port {}\n",
         "sonic-frr-templates/etc/sonic/constants.yml": b"constants: {}\n"}


def test_installs_from_a_folder_and_replaces_what_it_installed_before(tmp_path: Path) -> None:
    src, manifest = _tree(tmp_path, FILES)
    root = tmp_path / "data" / "twin" / "reference"
    (root / "containerlab").mkdir(parents=True)            # not twin's to replace
    (root / "sonic-yang-models" / "stale.yang").parent.mkdir(parents=True)
    (root / "sonic-yang-models" / "stale.yang").write_text("old")
    install(str(src), root, manifest)
    assert (root / "sonic-yang-models/yang-models/sonic-port.yang").read_bytes() == FILES[
        "sonic-yang-models/yang-models/sonic-port.yang"]
    assert (root / "sonic-frr-templates/SOURCE").read_text().startswith("c" * 40 + " 2026-08-23\n")
    assert not (root / "sonic-yang-models" / "stale.yang").exists()
    assert (root / "containerlab").is_dir()
    assert sorted(p.name for p in root.iterdir()) == ["containerlab", "sonic-frr-templates", "sonic-yang-models"]


def test_a_url_serves_the_same_tree(tmp_path: Path) -> None:
    src, manifest = _tree(tmp_path, FILES)
    root = install(src.as_uri(), tmp_path / "ref", manifest)
    assert (root / "sonic-frr-templates/etc/sonic/constants.yml").read_bytes() == b"constants: {}\n"


def test_a_file_that_is_not_sonic_s_installs_nothing(tmp_path: Path) -> None:
    src, manifest = _tree(tmp_path, FILES)
    root = tmp_path / "ref"
    install(str(src), root, manifest)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    (src / "src/part1/constants.yml").write_bytes(b"constants: {tampered: true}\n")
    with pytest.raises(TwinError, match=r"src/part1/constants.yml: SHA-256 .* is not the manifest's"):
        install(str(src), root, manifest)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert not list(root.glob(".installing-*"))


def test_an_unreachable_source_is_said_once(tmp_path: Path) -> None:
    _, manifest = _tree(tmp_path, FILES)
    with pytest.raises(TwinError, match=r"cannot read file:///nowhere/: .*--from") as err:
        install("file:///nowhere", tmp_path / "ref", manifest)
    assert str(err.value).count("cannot read") == 1   # once, not once per file
    assert not (tmp_path / "ref").exists() or not any((tmp_path / "ref").iterdir())
    with pytest.raises(TwinError, match="not a folder nor an http"):
        install(str(tmp_path / "missing"), tmp_path / "ref", manifest)


def test_the_manifest_names_what_twin_reads() -> None:
    manifest = load_manifest()
    assert len(manifest.commit) == 40 and manifest.repository == "sonic-net/sonic-buildimage"
    tops = {dest.split("/")[0] for dest in manifest.files}
    assert tops == {"sonic-yang-models", "sonic-frr-templates"}
    assert all(len(f.sha256) == 64 for f in manifest.files.values())
    assert any(d.startswith("sonic-yang-models/yang-models/") for d in manifest.files)
    assert "sonic-frr-templates/etc/sonic/constants.yml" in manifest.files


@pytest.mark.skipif(not (SHARED / "sonic-yang-models").is_dir(), reason="no SONiC reference folder here "
                    "($TWIN_SONIC_REFERENCE): the real manifest cannot be checked against the files twin tests with")
def test_the_real_manifest_installs_the_reference_twin_was_tested_with(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = load_manifest()
    src = tmp_path / "sonic-buildimage"
    for dest, entry in manifest.files.items():   # the same tree, rebuilt from the reference folder
        (src / entry.src).parent.mkdir(parents=True, exist_ok=True)
        (src / entry.src).write_bytes((SHARED / dest).read_bytes())
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    monkeypatch.delenv("TWIN_SONIC_YANG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    root = install(str(src))
    assert root == tmp_path / "data" / "twin" / "reference"
    from twin.stages.render.sonic_templates import check_templates
    from twin.stages.validate.yang import find_models

    assert find_models() == root / "sonic-yang-models"       # twin finds them with nothing set
    check_templates(root / "sonic-frr-templates")
