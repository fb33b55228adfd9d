"""Every input is safe: a malformed file of any kind gives one clear message (file, line, field, fix),
exit 2, nothing created, and no hang. The readers all go through twin.host.userfile; its limits are in
docs/topologies.md, "Limits on input files"."""
# ruff: noqa: E501  (the catalog keeps each case and its message on one line)

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from twin.cli import app as cli
from twin.host import userfile
from twin.host.userfile import MAX_DEPTH, MAX_FILE_BYTES, MAX_YAML_NODES
from twin.model.errors import PlanError

REPO = Path(__file__).resolve().parents[2]
GOOD_CONFIG = REPO / "configs/gate/leaf1/config_db.json"
HANG_BOUND_S = 2.0  # generous: each case takes milliseconds; this only catches a hang or a blow-up

# ---------------------------------------------------------------------------------------------------
# the file kinds: where a bad file goes and the command that reads it


@dataclass(frozen=True)
class Kind:
    """`setup(tmp)` writes the good files around the bad one and returns (argv, the bad file's path,
    the file that names it or None). `named`: the bad file is named inside another file or found
    in a folder (then it must lie inside that folder); else it is given on the command line."""

    setup: Callable[[Path], tuple[list[str], Path, Path | None]]
    named: bool
    yaml: bool


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _topology(tmp: Path) -> tuple[list[str], Path, Path | None]:
    return ["plan", str(tmp / "topo.yaml")], tmp / "topo.yaml", None


def _lab(tmp: Path) -> tuple[list[str], Path, Path | None]:
    return ["up", str(tmp / "lab.yaml"), "--name", "badfile"], tmp / "lab.yaml", None


def _lab_topology(tmp: Path) -> tuple[list[str], Path, Path | None]:
    lab = _write(tmp / "lab.yaml", "name: l\ntopology: topo.yaml\n")
    return ["up", str(lab), "--name", "badfile"], tmp / "topo.yaml", None


def _clab(tmp: Path) -> tuple[list[str], Path, Path | None]:
    return ["plan", str(tmp / "lab.clab.yml")], tmp / "lab.clab.yml", None


def _change(tmp: Path) -> tuple[list[str], Path, Path | None]:
    return ["rehearse", str(tmp / "change.yaml"), "--name", "nolab"], tmp / "change.yaml", None


def _explicit_router(tmp: Path, attr: str) -> tuple[list[str], Path, Path | None]:
    _write(tmp / "r1/frr.conf", "hostname r1\n")
    _write(tmp / "r1/daemons", "zebra=yes\nbgpd=yes\n")
    topo = _write(tmp / "topo.yaml", "name: t\nkind: explicit\nnodes:\n"
                  "  r1: {role: router, frr_conf: r1/frr.conf, daemons: r1/daemons}\n  h1: {role: host}\n"
                  "links:\n  - endpoints: [r1:eth1, h1]\n")
    return ["plan", str(topo)], tmp / "r1" / attr, topo


def _clab_bind(tmp: Path) -> tuple[list[str], Path, Path | None]:
    _write(tmp / "r1/frr.conf", "hostname r1\n")
    topo = _write(tmp / "lab.clab.yml", "name: c\ntopology:\n  nodes:\n    r1:\n      kind: linux\n"
                  "      binds:\n        - r1/frr.conf:/etc/frr/frr.conf\n")
    return ["plan", str(topo)], tmp / "r1/frr.conf", topo


def _own_config(tmp: Path) -> tuple[list[str], Path, Path | None]:
    shutil.copy(REPO / "tests/integration/data/clab-bound/sw1/config_db.json", _write(tmp / "sw1/x", ""))
    (tmp / "sw1/x").rename(tmp / "sw1/config_db.json")
    topo = _write(tmp / "own.yaml", "name: own\nkind: explicit\nnodes:\n  sw1: {role: leaf, config_db: sw1/config_db.json}\n")
    return ["plan", str(topo)], tmp / "sw1/config_db.json", topo


def _config_folder(tmp: Path) -> tuple[list[str], Path, Path | None]:
    (tmp / "cfg/leaf1").mkdir(parents=True)
    shutil.copy(GOOD_CONFIG, tmp / "cfg/leaf1/config_db.json")
    (tmp / "cfg/leaf2").mkdir()
    return ["validate", str(tmp / "cfg"), "--no-yang"], tmp / "cfg/leaf2/config_db.json", tmp / "cfg"


def _change_folder(tmp: Path) -> tuple[list[str], Path, Path | None]:
    (tmp / "chg/leaf1").mkdir(parents=True)
    return ["rehearse", str(tmp / "chg"), "--name", "nolab"], tmp / "chg/leaf1/config_db.json", tmp / "chg"


KINDS: dict[str, Kind] = {
    "topology": Kind(_topology, named=False, yaml=True),
    "lab": Kind(_lab, named=False, yaml=True),
    "lab-topology": Kind(_lab_topology, named=False, yaml=True),
    "clab": Kind(_clab, named=False, yaml=True),
    "change": Kind(_change, named=False, yaml=True),
    "frr-conf": Kind(lambda tmp: _explicit_router(tmp, "frr.conf"), named=True, yaml=False),
    "daemons": Kind(lambda tmp: _explicit_router(tmp, "daemons"), named=True, yaml=False),
    "clab-bind": Kind(_clab_bind, named=True, yaml=False),
    "own-config-db": Kind(_own_config, named=True, yaml=False),
    "config-folder": Kind(_config_folder, named=True, yaml=False),
    "change-folder": Kind(_change_folder, named=True, yaml=False),
}
FOLDER_KINDS = ("config-folder", "change-folder")

# ---------------------------------------------------------------------------------------------------
# what can be wrong with any file, whatever it should hold


def _bytes(data: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.unlink(missing_ok=True)
        path.write_bytes(data)
    return make


def _huge(path: Path) -> None:
    path.unlink(missing_ok=True)
    with path.open("wb") as f:  # sparse: refused by its size before a byte is read
        f.truncate(MAX_FILE_BYTES + 1)


def _folder(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.mkdir()


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _to(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.unlink(missing_ok=True)
        path.symlink_to(target)
    return make


ANY_FILE: dict[str, tuple[Callable[[Path], None], str]] = {
    "not-utf8": (_bytes(b"x\n# \xff\n"), "{f}:2: (encoding): not UTF-8 text: byte 0xff at line 2, column 3 cannot be decoded; save the file as UTF-8 text"),
    "latin1-later": (_bytes(b"x\ny\n  caf\xe9: 1\n"), "{f}:3: (encoding): not UTF-8 text: byte 0xe9 at line 3, column 6 cannot be decoded; save the file as UTF-8 text"),
    "nul-byte": (_bytes(b"x\n# \x00\n"), "{f}:2: (encoding): holds a NUL byte at line 2, column 3: a binary file, or text saved as UTF-16?; give a text file saved as UTF-8"),
    "utf16": (_bytes("name: x\n".encode("utf-16-le")), "{f}:1: (encoding): holds a NUL byte at line 1, column 2: a binary file, or text saved as UTF-16?; give a text file saved as UTF-8"),
    "huge": (_huge, f"{{f}}: (file): is {MAX_FILE_BYTES + 1:,} bytes, more than the 8 MiB twin reads; give a smaller file (is it the right file?)"),
    "a-folder": (_folder, "{f}: (file): is a folder, not a regular file; give the path of a text file"),
    "a-fifo": (_fifo, "{f}: (file): is a named pipe (FIFO), not a regular file; give the path of a text file"),
    "dev-zero": (_to("/dev/zero"), "{f}: (file): is a character device, not a regular file; give the path of a text file"),
}
OUTSIDE_TOPOLOGY = "{t}:{line}: {field}: {f} resolves to {real}, outside the topology's folder {d}; copy the file next to the topology (twin reads no file from outside a topology's folder)"
OUTSIDE_FOLDER = "{f}: (file): resolves to {real}, outside {d}; copy the file into {d} instead of linking to it"
NAMING = {"frr-conf": (4, "nodes.r1.frr_conf"), "daemons": (4, "nodes.r1.daemons"), "clab-bind": (6, "nodes.r1.binds"),
          "own-config-db": (4, "nodes.sw1.config_db")}


def _expected_outside(kind: str, bad: Path, names: Path | None, real: str) -> str:
    assert names is not None
    if kind in FOLDER_KINDS:
        return OUTSIDE_FOLDER.format(f=bad, real=real, d=names)
    line, field = NAMING[kind]
    return OUTSIDE_TOPOLOGY.format(t=names, line=line, field=field, f=bad, real=real, d=names.parent)


# ---------------------------------------------------------------------------------------------------
# running twin as a user does: main(), exit code, output, time, files


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _twin(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.setattr("sys.argv", ["twin", *argv])
    start = time.monotonic()
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert time.monotonic() - start < HANG_BOUND_S
    captured = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), captured.out + captured.err


def _refused(argv: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> None:
    """twin refuses with exactly `expected` (one problem), exit 2, no traceback, nothing created."""
    run_dir = tmp_path / "run"
    monkeypatch.setenv("TWIN_RUN_DIR", str(run_dir))
    before = _tree(tmp_path)
    code, output = _twin(argv, monkeypatch, capsys)
    assert "Traceback" not in output
    assert output.strip() == f"error: {expected}"
    assert code == 2
    assert _tree(tmp_path) == before
    assert not run_dir.exists()


CASES = [(kind, case) for kind in KINDS for case in ANY_FILE
         if (kind, case) != ("change", "a-folder")]  # a folder is a change too: <switch>/config_db.json files


@pytest.mark.parametrize(("kind", "case"), CASES, ids=[f"{k}-{c}" for k, c in CASES])
def test_any_bad_file_is_refused_in_one_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], kind: str, case: str) -> None:
    argv, bad, names = KINDS[kind].setup(tmp_path)
    make, expected = ANY_FILE[case]
    make(bad)
    if case == "dev-zero" and KINDS[kind].named:  # a file named inside another: refused for lying elsewhere
        expected = _expected_outside(kind, bad, names, "/dev/zero")
    _refused(argv, expected.format(f=bad), tmp_path, monkeypatch, capsys)


# a folder's files are found, not named: only a symlink can lead out of it
ELSEWHERE = [(k, how) for k, kind in KINDS.items() if kind.named for how in ("symlink", "dot-dot")
             if not (how == "dot-dot" and k in FOLDER_KINDS)]


@pytest.mark.parametrize(("kind", "how"), ELSEWHERE, ids=[f"{k}-{h}" for k, h in ELSEWHERE])
def test_a_named_file_elsewhere_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], kind: str, how: str) -> None:
    """A topology (or a folder of configs) from someone else must not make twin, root, read /etc/shadow."""
    work = tmp_path / "work"
    argv, bad, names = KINDS[kind].setup(work)
    elsewhere = _write(tmp_path / "elsewhere" / bad.name, bad.read_text() if bad.is_file() else "{}\n")
    if how == "symlink":
        _to(str(elsewhere))(bad)
    else:
        assert names is not None
        text = names.read_text()
        rel = str(bad.relative_to(names.parent))
        names.write_text(text.replace(rel, f"../elsewhere/{bad.name}", 1))
        bad = names.parent / "../elsewhere" / bad.name
    _refused(argv, _expected_outside(kind, bad, names, str(elsewhere)), tmp_path, monkeypatch, capsys)


def test_a_file_given_on_the_command_line_may_be_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The user chose it: twin follows the link (the files it names are judged from the link's folder)."""
    real = _write(tmp_path / "elsewhere/clos.yaml", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/clos.yaml").symlink_to(real)
    code, output = _twin(["plan", str(tmp_path / "mine/clos.yaml"), "--json"], monkeypatch, capsys)
    assert code == 0 and json.loads(output)["nodes"] == {"spine": 1, "leaf": 2}


# ---------------------------------------------------------------------------------------------------
# what YAML files can hold that would make PyYAML recurse without end or expand without end

DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
YAML_CASES: dict[str, tuple[str, str]] = {
    "deep-flow": (f"name: x\nkind: clos\nclos: {DEEP}\n",
                  f"{{f}}:3: (yaml): nested more than {MAX_DEPTH} levels deep; flatten the structure: no twin file needs that depth"),
    "deep-block": ("name: x\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 5)) + "  " * (MAX_DEPTH + 5) + "v\n",
                   f"{{f}}:{MAX_DEPTH + 2}: (yaml): nested more than {MAX_DEPTH} levels deep; flatten the structure: no twin file needs that depth"),
    "deep-thousands": ("name: x\nkind: clos\nclos: " + "[" * 5000 + "]" * 5000 + "\n",
                       f"{{f}}:3: (yaml): nested more than {MAX_DEPTH} levels deep; flatten the structure: no twin file needs that depth"),
    "alias-bomb": ("name: x\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + BOMB,
                   f"{{f}}:8: (yaml): holds more than {MAX_YAML_NODES:,} values with its aliases expanded (an alias bomb?); write a smaller file, with fewer aliases of large anchors"),
    "alias-to-itself": ("name: x\nkind: clos\nclos: &c\n  spines: 1\n  again: *c\n",
                        "{f}:5: (yaml): alias *c refers to a collection that contains it (a structure without end); write the values out instead of the alias"),
    "control-character": ("name: x\x07\n",
                          "{f}:1: (yaml): malformed YAML: character #x0007 is not allowed in YAML; remove it or quote it with an escape (\"\\x..\")"),
    "undefined-alias": ("name: x\nkind: *nowhere\n",
                        "{f}:2: (yaml): malformed YAML: found undefined alias 'nowhere'; fix the syntax at that line"),
    "two-documents": ("name: x\n---\nname: y\n",
                      "{f}:2: (yaml): malformed YAML: expected a single document in the stream but found another document; fix the syntax at that line"),
}
YAML_KINDS = [k for k, kind in KINDS.items() if kind.yaml]
YAML_PAIRS = [(k, c) for k in YAML_KINDS for c in YAML_CASES]


@pytest.mark.parametrize(("kind", "case"), YAML_PAIRS, ids=[f"{k}-{c}" for k, c in YAML_PAIRS])
def test_yaml_that_would_not_end_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], kind: str, case: str) -> None:
    argv, bad, _ = KINDS[kind].setup(tmp_path)
    text, expected = YAML_CASES[case]
    bad.write_text(text)
    _refused(argv, expected.format(f=bad), tmp_path, monkeypatch, capsys)


def test_anchors_and_merge_keys_within_the_bounds_still_work(tmp_path: Path) -> None:
    from twin.stages.lab_file import load_lab

    path = _write(tmp_path / "t.yaml", "name: x\nkind: explicit\nnodes:\n  s1: &sw {role: spine, asn: 65000}\n"
                  "  l1: {<<: *sw, role: leaf, asn: 65001}\n  l2: {role: leaf}\nlinks:\n"
                  "  - {endpoints: [l1, s1]}\n  - {endpoints: [l2, s1]}\n")
    plan = load_lab(path).plan
    assert {(n.name, n.role) for n in plan.nodes} == {("s1", "spine"), ("l1", "leaf"), ("l2", "leaf")}


# ---------------------------------------------------------------------------------------------------
# wrong types: a value where a mapping is expected, a list where a table is expected

WRONG_TYPES: list[tuple[str, str, str, str]] = [
    ("topology", "clos-a-number", "name: x\nkind: clos\nclos: 5\n",
     "{f}:3: clos: Input should be a valid dictionary or instance of ClosSpec (got 5); correct the value"),
    ("topology", "nodes-a-list", "name: x\nkind: explicit\nnodes: [leaf1]\n",
     "{f}:3: nodes: Input should be a valid dictionary; correct the value"),
    ("topology", "empty-file", "",
     "{f}:1: (document): expected a mapping at the top level; start the file with keys such as 'name:' and 'kind:'"),
    ("lab", "topology-a-list", "name: l\ntopology: [a.yaml]\n",
     "{f}:2: topology: expected the path of a topology file, got list; write it as 'topology: ../topologies/clos-4x8.yaml' (relative to the lab file)"),
    ("lab", "health-a-number", "name: l\ntopology: t.yaml\nhealth: 5\n",
     "{f}:3: health: Input should be a valid dictionary or instance of HealthSettings (got 5); correct the value"),
    ("clab", "binds-a-number", "name: c\ntopology:\n  nodes:\n    h1: {kind: linux, binds: 7}\n",
     "{f}:4: topology.nodes.h1.binds: expected a list of strings; write one '- item' line per entry"),
    ("clab", "node-a-list", "name: c\ntopology:\n  nodes:\n    h1: [linux]\n    h2: {kind: linux}\n",
     "{f}:4: topology.nodes.h1: expected a mapping, got list; write it as 'key: value' lines"),
    ("change", "a-list", "- leaf1\n",
     "{f}:1: (document): a change file maps switch names to patches; write 'leaf1: {{PORT: {{Ethernet0: {{mtu: \"9000\"}}}}}}'"),
    ("change", "patch-a-number", "leaf1: 5\n",
     "{f}:1: leaf1: a switch's patch is a mapping of tables, got a number; write 'leaf1: {{PORT: {{Ethernet0: {{mtu: \"9000\"}}}}}}' (null removes a table, an entry or a field)"),
    ("change", "table-a-list", "leaf1:\n  PORT: [Ethernet0]\n",
     "{f}:2: leaf1.PORT: a table's patch is a mapping of entries, got a list; write 'leaf1: {{PORT: {{Ethernet0: {{mtu: \"9000\"}}}}}}' (null removes a table, an entry or a field)"),
    ("change", "entry-a-string", "leaf1:\n  PORT:\n    Ethernet0: up\n",
     "{f}:3: leaf1.PORT.Ethernet0: an entry's patch is a mapping of fields, got a string; write 'leaf1: {{PORT: {{Ethernet0: {{mtu: \"9000\"}}}}}}' (null removes a table, an entry or a field)"),
    ("change", "value-an-object", "leaf1:\n  PORT:\n    Ethernet0:\n      mtu: {v: 9100}\n",
     "{f}:4: leaf1.PORT.Ethernet0.mtu: a value is a string or a list of strings, got an object; write 'leaf1: {{PORT: {{Ethernet0: {{mtu: \"9000\"}}}}}}' (null removes a table, an entry or a field)"),
    ("change", "patch-null", "leaf1:\n",
     "{f}:1: leaf1: a switch's patch is a mapping of tables, got null; write 'leaf1: {{PORT: {{Ethernet0: {{mtu: \"9000\"}}}}}}' (null removes a table, an entry or a field)"),
]
CONFIG_CASES: list[tuple[str, str, str]] = [
    ("invalid-json", '{\n  "PORT": {\n    "Ethernet0": {,}\n',
     "{f}:3: (json): not valid JSON: Expecting property name enclosed in double quotes; fix the syntax at that line (column 19)"),
    ("a-list", "[]\n", '{f}:1: (document): a config_db.json is a JSON object of tables; write it as {{"TABLE": {{"key": {{"field": "value"}}}}}}'),
    ("empty", "", "{f}:1: (json): not valid JSON: Expecting value; fix the syntax at that line (column 1)"),
    ("table-a-list", '{"PORT": ["Ethernet0"]}',
     '{f}: PORT: a table is an object of keys, not a list; write it as "PORT": {{"key": {{"field": "value"}}}}'),
    ("entry-a-string", '{"PORT": {"Ethernet0": "up"}}',
     '{f}: PORT|Ethernet0: an entry is an object of fields, not a string; write it as "Ethernet0": {{"field": "value"}} (an entry without fields is {{}})'),
    ("value-an-object", '{"PORT": {"Ethernet0": {"mtu": {"v": "9100"}}}}',
     '{f}: PORT|Ethernet0 mtu: a value is a string or a list of strings, not an object; write it as "mtu": "value"'),
    ("deep", '{"PORT":\n' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}",
     f"{{f}}:2: (json): nested more than {MAX_DEPTH} levels deep; flatten the structure: no twin file needs that depth"),
    ("deeper-than-python", '{"PORT":\n' + "[" * 100_000 + "]" * 100_000 + "}",
     f"{{f}}:2: (json): nested more than {MAX_DEPTH} levels deep; flatten the structure: no twin file needs that depth"),
]
CONFIG_KINDS = ["own-config-db", "config-folder", "change-folder"]
WRONG = WRONG_TYPES + [(k, c, text, msg) for k in CONFIG_KINDS for c, text, msg in CONFIG_CASES]


@pytest.mark.parametrize(("kind", "case", "text", "expected"), WRONG, ids=[f"{w[0]}-{w[1]}" for w in WRONG])
def test_wrong_types_are_problems_not_tracebacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], kind: str, case: str,
                                                 text: str, expected: str) -> None:
    argv, bad, _ = KINDS[kind].setup(tmp_path)
    bad.write_text(text)
    _refused(argv, expected.format(f=bad), tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize(("table", "key", "field", "value"), [
    ("DEVICE_METADATA", "localhost", "type", ["LeafRouter"]),
    ("BGP_NEIGHBOR", None, "peer_group_name", ["PEERS"]),
    ("PORT_QOS_MAP", None, "dscp_to_tc_map", ["ROCE"]),
    ("PORT_QOS_MAP", None, "tc_to_queue_map", 5),
    ("QUEUE", "Ethernet0|3", "wred_profile", ["ROCE_LOSSLESS"]),
])
def test_a_value_of_the_wrong_type_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], table: str, key: str | None,
                                                field: str, value: object) -> None:
    """CONFIG_DB can hold it (a list, a number), so the file is read; the checks judge it, exit 1."""
    shutil.copytree(GOOD_CONFIG.parents[1], tmp_path / "cfg")
    path = tmp_path / "cfg/leaf1/config_db.json"
    db = json.loads(path.read_text())
    key = key or next(iter(db[table]))
    db[table][key][field] = value
    path.write_text(json.dumps(db))
    code, output = _twin(["validate", str(tmp_path / "cfg"), "--no-yang"], monkeypatch, capsys)
    assert "Traceback" not in output
    assert code == 1 and f"{path}: {table}|{key}" in output


# ---------------------------------------------------------------------------------------------------
# the push loader: a file that is there but bad stops the push before anything is sent


def test_push_refuses_a_bad_file_before_pushing(tmp_path: Path) -> None:
    from twin.gnmi.push import desired_configs
    from twin.model.state import LabState, NodeState
    from twin.stages.lab_file import load_lab

    nodes = [NodeState(name=n, role="leaf", kind="switch", netns=n) for n in ("leaf1", "leaf2", "leaf3")]
    state = LabState(lab="x", runtime="netns", phase="up", topology="t", created=0.0, nodes=nodes)
    plan = load_lab(_write(tmp_path / "t/clos.yaml", "name: x\nkind: clos\nclos: {spines: 1, leaves: 3}\n")).plan
    (tmp_path / "leaf1").mkdir()
    shutil.copy(GOOD_CONFIG, tmp_path / "leaf1/config_db.json")
    wanted = desired_configs(plan, state, tmp_path)
    assert wanted["leaf2"] == f"{tmp_path}/leaf2/config_db.json does not exist"  # as before: that switch fails
    assert isinstance(wanted["leaf1"], dict) and "PORT" in wanted["leaf1"]
    (tmp_path / "leaf2").mkdir()
    (tmp_path / "leaf2/config_db.json").write_bytes(b'{"PORT": {}}\n\xff')
    (tmp_path / "leaf3").mkdir()
    (tmp_path / "leaf3/config_db.json").symlink_to("/etc/hostname")
    start = time.monotonic()
    with pytest.raises(PlanError) as err:
        desired_configs(plan, state, tmp_path)
    assert time.monotonic() - start < HANG_BOUND_S
    assert [str(p) for p in err.value.problems] == [
        f"{tmp_path}/leaf2/config_db.json:2: (encoding): not UTF-8 text: byte 0xff at line 2, column 1 cannot be "
        "decoded; save the file as UTF-8 text",
        f"{tmp_path}/leaf3/config_db.json: (file): resolves to /etc/hostname, outside {tmp_path}; copy the file into "
        f"{tmp_path} instead of linking to it"]


# ---------------------------------------------------------------------------------------------------
# twin.host.userfile's own edges


def test_reading_stops_at_the_cap_even_when_the_size_lies(tmp_path: Path) -> None:
    """/proc files say they are empty; the read itself is bounded too."""
    with pytest.raises(PlanError, match=r"/proc/self/maps: \(file\): holds more than the 100 bytes twin reads"):
        userfile.read_text(Path("/proc/self/maps"), limit=100)
    assert userfile.read_text(Path("/proc/self/maps"))  # within the cap: read whole


def test_an_unreadable_file_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "t.yaml", "name: x\n")

    def denied(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)  # root reads any file: refuse it the way a user is refused
    with pytest.raises(PlanError) as err:
        userfile.read_text(path)
    assert str(err.value) == f"{path}: (file): cannot read: Permission denied; make the file readable"


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    with pytest.raises(PlanError) as err:
        userfile.read_text(loop, within=tmp_path)
    assert str(err.value) == f"{loop}: (file): cannot read: Too many levels of symbolic links; make the file readable"


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b'\xef\xbb\xbf{"PORT": {}}')
    assert userfile.read_config_db(path) == {"PORT": {}}


def test_counting_aliases_is_not_itself_exponential(tmp_path: Path) -> None:
    """30 levels of doubling: 2**30 values expanded, refused after reading 60 lines once."""
    text = "a0: &a0 [x, x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 30))
    start = time.monotonic()
    with pytest.raises(PlanError, match="with its aliases expanded"):
        userfile.parse_yaml(tmp_path / "b.yaml", text)
    assert time.monotonic() - start < HANG_BOUND_S
    data, _ = userfile.parse_yaml(tmp_path / "ok.yaml", "a0: &a0 [x, x]\n" + "".join(
        f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 10)))  # 2**10: well within
    assert len(data) == 10 and data["a9"][0] is data["a8"]


def test_a_null_value_is_the_text_none_as_sonic_stores_it(tmp_path: Path) -> None:
    """sonic-cfggen --print-data prints DEVICE_METADATA region as null; SONiC's configdb load stores
    str(None): a config_db.json holding it is read, the value "None"."""
    from twin.host.userfile import read_config_db

    path = tmp_path / "config_db.json"
    path.write_text('{"DEVICE_METADATA": {"localhost": {"region": null, "hostname": "t0"}}}')
    assert read_config_db(path) == {"DEVICE_METADATA": {"localhost": {"region": "None", "hostname": "t0"}}}
