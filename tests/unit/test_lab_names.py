"""A lab's name is a name, never a path: every command that takes `--name` refuses anything else with
exit 2 before building a path from it, and nothing outside the run root's own lab folders is removed
(issue: `twin down --name ..` removed the run root's parent as root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.cli import app as cli
from twin.host import rundir
from twin.model.errors import PlanError
from twin.model.names import check_lab_name, check_node_name, is_lab_name

LAB = Path(__file__).resolve().parents[2] / "labs" / "default.yaml"
BAD_NAMES = ["..", ".", "/", "/some/dir", "lab/../..", "", "lab/..", "./lab", "a" * 13, "Lab", "lab name",
             "-lab", "tw.lab", "lab_1", "lab\n", "\u00e9cole"]

# every command that takes --name, with what else it needs to parse
COMMANDS = [
    ["down"], ["status"], ["status", "--json"], ["verify"], ["push"], ["exec", "leaf1", "--", "true"],
    ["drill", "spine-loss"], ["rehearse", "change.yaml"], ["agent", "restart"], ["frr", "restart", "leaf1"],
    ["cli", "leaf1"], ["traffic", "ring-allreduce"], ["ci", "labs/default.yaml"], ["up", str(LAB)],
    ["graph", "-o", "out.html"],
]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run root inside tmp_path with things around it that no command may touch."""
    root = tmp_path / "host" / "run" / "twin"
    (root / "keep").mkdir(parents=True)
    (root / "keep" / "state.json").write_text("{}")
    (tmp_path / "host" / "run" / "sibling").mkdir()
    (tmp_path / "host" / "precious.txt").write_text("keep me")
    (tmp_path / "some" / "dir").mkdir(parents=True)
    monkeypatch.setenv("TWIN_RUN_DIR", str(root))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _everything(where: Path) -> set[str]:
    return {str(p.relative_to(where)) for p in where.rglob("*")}


def _twin(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("sys.argv", ["twin", *argv])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    code = exit_info.value.code
    return code if isinstance(code, int) else 1


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0] + ("-" + c[1] if len(c) > 1 else ""))
def test_every_command_refuses_a_name_that_is_a_path(command: list[str], name: str, sandbox: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    before = _everything(sandbox)
    cut = command.index("--") if "--" in command else len(command)
    assert _twin([*command[:cut], "--name", name, *command[cut:]], monkeypatch) == 2
    assert "lab name" in capsys.readouterr().err
    assert _everything(sandbox) == before


def test_names_are_checked_where_paths_are_built(sandbox: Path) -> None:
    for name in BAD_NAMES:
        with pytest.raises(PlanError, match="lab name"):
            rundir.lab_dir(name)
        with pytest.raises(PlanError):
            rundir.remove_lab_dir(name)
    for node in ["..", "../leaf1", "leaf1/x", "", "/etc"]:
        with pytest.raises(PlanError, match="node name"):
            rundir.node_dir("keep", node)
    assert rundir.node_dir("keep", "leaf1") == sandbox / "host/run/twin/keep/nodes/leaf1"


def test_the_rule() -> None:
    assert all(is_lab_name(n) for n in ["a", "default", "rail2", "t-1", "a" * 12])
    assert not any(is_lab_name(n) for n in BAD_NAMES)
    check_lab_name("default")
    check_node_name("leaf_1-a")
    with pytest.raises(PlanError, match="--name"):
        check_lab_name("..")


def test_removal_never_follows_a_link_out_of_the_run_root(sandbox: Path) -> None:
    root = sandbox / "host" / "run" / "twin"
    (root / "evil").symlink_to(sandbox / "some")
    rundir.remove_lab_dir("evil")
    assert not (root / "evil").exists()
    assert (sandbox / "some" / "dir").is_dir()


def test_removal_keeps_what_links_inside_the_lab_folder_point_to(sandbox: Path) -> None:
    root = sandbox / "host" / "run" / "twin"
    (root / "lab2" / "nodes").mkdir(parents=True)
    (root / "lab2" / "nodes" / "leaf1").symlink_to(sandbox / "some")   # a link inside the lab's folder
    rundir.remove_lab_dir("lab2")
    assert not (root / "lab2").exists()
    assert (sandbox / "some" / "dir").is_dir()


def test_known_labs_lists_only_lab_folders(sandbox: Path) -> None:
    root = sandbox / "host" / "run" / "twin"
    (root / "Not_A_Lab").mkdir()
    (root / "link").symlink_to(sandbox / "some")
    (root / "lab2").mkdir()
    assert rundir.known_labs() == ["keep", "lab2"]

