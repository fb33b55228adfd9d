"""`twin rehearse` on a running lab: a bad change is rolled back and the lab stays healthy, a static
finding touches nothing, a good change goes live; the user's files are never written."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import DATA, running_lab, twin, twin_json

pytestmark = pytest.mark.needs_root


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab(DATA / "drill.yaml", "r") as name:
        yield name


def running(lab: str, switch: str) -> dict[str, dict[str, dict[str, str]]]:
    db: dict[str, dict[str, dict[str, str]]] = json.loads(Path(f"/run/twin/{lab}/nodes/{switch}/config_db.json")
                                                         .read_text())
    return db


def digest(change: Path) -> str:
    files = sorted(change.rglob("*")) if change.is_dir() else [change]
    return hashlib.sha256(b"".join(f.read_bytes() for f in files if f.is_file())).hexdigest()


def rehearse(lab: str, change: Path) -> tuple[int, dict[str, object]]:
    before = digest(change)
    proc = twin("rehearse", str(change), "--name", lab, "--json", check=False, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    assert digest(change) == before  # the user's files are untouched
    return proc.returncode, json.loads(proc.stdout)


def test_bad_change_is_rolled_back(lab: str, tmp_path: Path) -> None:
    before = running(lab, "leaf2")
    peer = next(iter(before["BGP_NEIGHBOR"]))
    change = tmp_path / "shut.yaml"
    change.write_text(f'leaf2:\n  BGP_NEIGHBOR:\n    "{peer}": {{admin_status: "down"}}\n')
    rc, report = rehearse(lab, change)
    assert rc == 1 and report["rolled_back"] is True and report["stopped_at"] == "apply leaf2"
    assert report["diffs"] == [{"switch": "leaf2", "added": [], "removed": [],
                                "changed": [f"BGP_NEIGHBOR|{peer} admin_status: up -> down"]}]
    assert running(lab, "leaf2") == before
    assert twin_json("status", "--name", lab)["healthy"]


def test_static_finding_changes_nothing(lab: str, tmp_path: Path) -> None:
    before = running(lab, "leaf1")
    change = tmp_path / "mtu.json"
    change.write_text(json.dumps({"leaf1": {"PORT": {"Ethernet128": {"mtu": "9000"}}}}))
    rc, report = rehearse(lab, change)
    assert rc == 1 and report["stopped_at"] == "validate" and report["rolled_back"] is False
    assert running(lab, "leaf1") == before


def test_good_change_from_a_folder_goes_live(lab: str, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    (folder / "leaf3").mkdir(parents=True)
    db = running(lab, "leaf3")
    db["PORT"]["Ethernet0"]["description"] = "rack 7 gpu node"
    (folder / "leaf3" / "config_db.json").write_text(json.dumps(db))
    rc, report = rehearse(lab, folder)
    assert rc == 0 and report["passed"] is True, report
    assert running(lab, "leaf3")["PORT"]["Ethernet0"]["description"] == "rack 7 gpu node"


def test_unknown_switch_is_bad_input(lab: str, tmp_path: Path) -> None:
    change = tmp_path / "x.yaml"
    change.write_text("leaf9: {PORT: {}}\n")
    proc = twin("rehearse", str(change), "--name", lab, check=False)
    assert proc.returncode == 2 and "leaf9: no such switch in the lab" in proc.stderr
