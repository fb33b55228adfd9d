"""Nothing a user wrote is lost: `twin plan -o`, `twin export` and `twin drill --report` write only into a
new or empty folder or one twin wrote before (its `.twin-written` marker), and remove only their own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twin.cli.app import app
from twin.host.owned import MARKER, recorded, write_owned
from twin.model.errors import TwinError
from twin.stages.lab_file import load_lab
from twin.stages.render.write import rendered_files, write_configs

REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / "labs/default.yaml"   # 4 spines, 8 leaves
GATE = REPO / "labs/gate.yaml"         # 2 spines, 4 leaves


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root`, byte for byte (folders too, as empty values with a trailing /)."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel + "/" if p.is_dir() else rel] = b"" if p.is_dir() else p.read_bytes()
    return out


@pytest.fixture
def backups(tmp_path: Path) -> Path:
    """A folder of a user's switch backups: named like the plan's switches, and not."""
    root = tmp_path / "backups"
    for switch in ("leaf1", "spine1", "leaf9", "old-core"):
        (root / switch).mkdir(parents=True)
        (root / switch / "config_db.json").write_text(json.dumps({"DEVICE_METADATA": {"localhost": {
            "hostname": switch, "note": "a real switch's backup"}}}))
    (root / "leaf1" / "frr.conf").write_text("! the real leaf1\n")
    (root / "README").write_text("backups of 2024-05-01\n")
    return root


def run(*args: str) -> tuple[int, str]:
    """Run the CLI as `twin` does: a TwinError is exit 2 and its message (main() prints it)."""
    result = CliRunner().invoke(app, list(args))
    if isinstance(result.exception, TwinError):
        return 2, str(result.exception)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


# -- twin plan -o ---------------------------------------------------------------------------------

def test_plan_refuses_a_folder_of_backups_and_deletes_nothing(backups: Path) -> None:
    before = snapshot(backups)
    code, message = run("plan", str(DEFAULT), "-o", str(backups))
    assert code == 2
    assert str(backups) in message and "twin did not write it" in message
    assert "Name a new or empty folder" in message
    assert snapshot(backups) == before


def test_plan_writes_a_new_folder_and_lists_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "new" / "configs"
    code, _ = run("plan", str(DEFAULT), "-o", str(out), "--json")
    assert code == 0
    files = rendered_files(load_lab(DEFAULT).plan)
    assert set(recorded(out)) == set(files)
    assert {rel: (out / rel).read_text() for rel in files} == files


def test_plan_writes_an_empty_folder(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert write_configs(load_lab(GATE).plan, out)
    assert (out / MARKER).is_file()


def test_rerun_into_its_own_folder_removes_only_its_own_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "configs"
    write_configs(load_lab(DEFAULT).plan, out)
    (out / "NOTES.md").write_text("my notes\n")                      # the user's, beside twin's files
    (out / "leaf8" / "backup.json").write_text("{}")                # the user's, in a folder twin made
    (out / "spine4" / "frr.conf").write_text("! edited by hand\n")  # twin's file, changed since
    write_configs(load_lab(GATE).plan, out)                         # a smaller fabric: leaf5-8, spine3-4 go
    gate = rendered_files(load_lab(GATE).plan)
    assert {rel: (out / rel).read_text() for rel in gate} == gate
    assert (out / "NOTES.md").read_text() == "my notes\n"
    assert (out / "leaf8" / "backup.json").read_text() == "{}"
    assert not (out / "leaf8" / "config_db.json").exists()
    assert (out / "spine4" / "frr.conf").read_text() == "! edited by hand\n"  # changed: kept, no longer twin's
    assert not (out / "spine4" / "config_db.json").exists()
    assert not any((out / s).exists() for s in ("leaf5", "leaf6", "leaf7", "spine3"))  # emptied: removed
    assert set(recorded(out)) == set(gate)


def test_a_file_twin_wrote_that_changed_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "configs"
    write_configs(load_lab(GATE).plan, out)
    (out / "leaf1" / "config_db.json").write_text('{"edited": true}')
    before = snapshot(out)
    code, message = run("plan", str(GATE), "-o", str(out))
    assert code == 2
    assert str(out / "leaf1" / "config_db.json") in message and "changed since it wrote it" in message
    assert snapshot(out) == before


def test_a_file_put_where_twin_writes_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "configs"
    write_configs(load_lab(GATE).plan, out)
    (out / "leaf5").mkdir()
    (out / "leaf5" / "frr.conf").write_text("mine")  # where the larger default fabric renders leaf5's
    before = snapshot(out)
    with pytest.raises(TwinError, match=r"leaf5/frr\.conf, which twin did not write"):
        write_configs(load_lab(DEFAULT).plan, out)
    assert snapshot(out) == before


def test_a_marker_naming_files_outside_the_folder_deletes_nothing_there(tmp_path: Path) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    out = tmp_path / "configs"
    write_configs(load_lab(GATE).plan, out)
    marker = json.loads((out / MARKER).read_text())
    marker["files"]["../precious.txt"] = None
    marker["files"]["/etc/hostname"] = None
    (out / MARKER).write_text(json.dumps(marker))
    write_configs(load_lab(GATE).plan, out)
    assert outside.read_text() == "keep me"
    assert "../precious.txt" not in recorded(out)


def test_a_link_in_twins_folder_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("not twin's")
    out = tmp_path / "configs"
    write_configs(load_lab(GATE).plan, out)
    (out / "leaf1" / "config_db.json").unlink()
    (out / "leaf1" / "config_db.json").symlink_to(target)
    with pytest.raises(TwinError, match="did not write"):
        write_configs(load_lab(GATE).plan, out)
    assert target.read_text() == "not twin's"


def test_plan_refuses_a_file_and_an_unreadable_marker(tmp_path: Path) -> None:
    file = tmp_path / "configs"
    file.write_text("x")
    with pytest.raises(TwinError, match="that is a file"):
        write_configs(load_lab(GATE).plan, file)
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / MARKER).write_text("not json")
    with pytest.raises(TwinError, match="not a marker twin can read"):
        write_configs(load_lab(GATE).plan, folder)
    assert (folder / MARKER).read_text() == "not json"


def test_a_write_killed_half_way_is_recognised_as_twins(tmp_path: Path) -> None:
    out = tmp_path / "reports"

    def killed(path: Path) -> None:
        path.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_owned(out, {"a.txt": "a", "b.png": killed}, "twin drill --report", prune=False)
    assert recorded(out) == {"a.txt": None, "b.png": None}  # pending: twin's, whatever they hold
    assert write_owned(out, {"a.txt": "a", "b.png": b"png"}, "twin drill --report", prune=False)
    assert (out / "b.png").read_bytes() == b"png"


def test_reports_accumulate_in_their_folder(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    write_owned(out, {"lab-spine-loss.json": "1"}, "twin drill --report", prune=False)
    write_owned(out, {"lab-leaf-loss.json": "2"}, "twin drill --report", prune=False)
    assert (out / "lab-spine-loss.json").read_text() == "1"
    assert set(recorded(out)) == {"lab-spine-loss.json", "lab-leaf-loss.json"}


def test_drill_refuses_a_foreign_report_folder_before_it_runs(backups: Path) -> None:
    before = snapshot(backups)
    code, message = run("drill", "spine-loss", "--report", str(backups))
    assert code == 2
    assert message.startswith(f"twin drill --report {backups}: the folder is not empty")
    assert snapshot(backups) == before


# -- twin export ----------------------------------------------------------------------------------

def test_export_clab_refuses_a_foreign_files_folder_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "gate-files" / "leaf1").mkdir(parents=True)
    (tmp_path / "gate-files" / "leaf1" / "config_db.json").write_text("the user's")
    before = snapshot(tmp_path)
    code, message = run("export", "clab", str(GATE), "-o", str(tmp_path / "gate.clab.yml"))
    assert code == 2
    assert f"twin export clab {tmp_path / 'gate-files'}" in message
    assert snapshot(tmp_path) == before  # not even the .clab.yml


def test_export_clab_rerun_removes_only_its_own_stale_files(tmp_path: Path) -> None:
    topo = tmp_path / "gate.clab.yml"
    assert run("export", "clab", str(GATE), "-o", str(topo), "--json")[0] == 0
    files = tmp_path / "gate-files"
    assert (files / "leaf1" / "daemons").is_file()
    (files / "leaf1" / "mine.txt").write_text("mine")
    (tmp_path / "other.clab.yml").write_text("the user's own lab")
    assert run("export", "clab", str(GATE), "-o", str(topo), "--kind", "sonic-vs", "--json")[0] == 0
    assert not (files / "leaf1" / "daemons").exists() and not (files / "leaf1" / "frr.conf").exists()
    assert (files / "leaf1" / "config_db.json").is_file()
    assert (files / "leaf1" / "mine.txt").read_text() == "mine"
    assert (tmp_path / "other.clab.yml").read_text() == "the user's own lab"


def test_export_clabernetes_refuses_a_foreign_folder_and_reruns_in_its_own(tmp_path: Path,
                                                                          backups: Path) -> None:
    before = snapshot(backups)
    code, message = run("export", "clabernetes", str(GATE), "-o", str(backups))
    assert code == 2 and f"twin export clabernetes {backups}" in message
    assert snapshot(backups) == before
    out = tmp_path / "k8s"
    assert run("export", "clabernetes", str(GATE), "-o", str(out))[0] == 0
    (out / "notes.md").write_text("mine")
    assert run("export", "clabernetes", str(GATE), "-o", str(out), "--namespace", "lab2")[0] == 0
    assert "namespace: lab2" in (out / "20-topology.yaml").read_text()
    assert (out / "notes.md").read_text() == "mine"
    assert set(recorded(out)) == {"00-namespace.yaml", "10-configmaps.yaml", "20-topology.yaml", "README.md"}
