"""The host's neighbour-table sysctls: raised for a lab with what they were recorded under the run root,
put back when the last lab goes down (unless someone changed them since)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from twin.model.plan import Plan
from twin.runtime import neighbours
from twin.runtime.frr_statedirs import remove_statedirs
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]
ORIGINAL = {"gc_thresh1": 128, "gc_thresh2": 512, "gc_thresh3": 1024}


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake /proc/sys with Linux's default limits, and a run root of its own."""
    proc = tmp_path / "proc-sys"
    for family in ("ipv4", "ipv6"):
        base = proc / "net" / family / "neigh" / "default"
        base.mkdir(parents=True)
        for key, value in ORIGINAL.items():
            (base / key).write_text(f"{value}\n")
    monkeypatch.setattr(neighbours, "PROC_SYS", proc)
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path / "run"))
    return proc


def value(proc: Path, family: str, key: str) -> int:
    return int((proc / "net" / family / "neigh" / "default" / key).read_text())


def lab_up(name: str, plan: Plan) -> list[str]:
    """What `twin up` does here: the lab's folder under the run root first, then the sizing."""
    (neighbours.run_root() / name / "nodes").mkdir(parents=True)
    return neighbours.size_for(plan)


def lab_down(name: str) -> list[str]:
    (neighbours.run_root() / name / "nodes").rmdir()
    (neighbours.run_root() / name).rmdir()
    return neighbours.restore_when_idle(name)


@pytest.fixture(scope="module")
def big() -> Plan:
    return load_lab(REPO / "labs/rail.yaml").plan


@pytest.fixture(scope="module")
def small() -> Plan:
    return load_lab(REPO / "labs/gate.yaml").plan


def test_raised_values_go_back_when_the_last_lab_goes_down(host: Path, big: Plan) -> None:
    notes = lab_up("a", big)
    need = neighbours.needed_entries(big)
    assert need > ORIGINAL["gc_thresh1"]
    assert value(host, "ipv4", "gc_thresh1") == need and value(host, "ipv6", "gc_thresh3") == 4 * need
    assert any("put back to 128 when the last lab goes down" in n for n in notes)
    record = json.loads((neighbours.run_root() / neighbours.RECORD).read_text())
    assert record["net.ipv4.neigh.default.gc_thresh2"] == {"original": 512, "set": 2 * need}
    done = lab_down("a")
    assert all(value(host, f, k) == v for f in ("ipv4", "ipv6") for k, v in ORIGINAL.items())
    assert "net.ipv6.neigh.default.gc_thresh3 back to 1024" in done[0]
    assert not (neighbours.run_root() / neighbours.RECORD).exists()


def test_nothing_goes_back_while_another_lab_runs(host: Path, big: Plan, small: Plan) -> None:
    lab_up("a", small)
    lab_up("b", big)  # raises further: the first original stays on record
    record = json.loads((neighbours.run_root() / neighbours.RECORD).read_text())
    assert record["net.ipv4.neigh.default.gc_thresh1"]["original"] == 128
    assert lab_down("b") == []
    assert value(host, "ipv4", "gc_thresh1") == neighbours.needed_entries(big)
    lab_down("a")
    assert value(host, "ipv4", "gc_thresh1") == 128


def test_a_value_changed_since_twin_set_it_is_left_alone(host: Path, big: Plan) -> None:
    lab_up("a", big)
    (host / "net/ipv6/neigh/default/gc_thresh3").write_text("99999\n")  # the admin's own setting
    done = lab_down("a")
    assert value(host, "ipv6", "gc_thresh3") == 99999
    assert value(host, "ipv6", "gc_thresh2") == 512
    assert "net.ipv6.neigh.default.gc_thresh3 left at 99999" in done[0]


def test_limits_already_high_enough_are_not_touched_nor_recorded(host: Path, small: Plan) -> None:
    for family in ("ipv4", "ipv6"):
        for key in ORIGINAL:
            (host / "net" / family / "neigh" / "default" / key).write_text("1000000\n")
    assert lab_up("a", small) == []
    assert not (neighbours.run_root() / neighbours.RECORD).exists()
    assert lab_down("a") == []


def test_down_removes_only_its_own_labs_frr_statedirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from twin.runtime import frr_statedirs

    state = tmp_path / "var-run-frr"
    for name in ("tw_ab_leaf1", "tw_ab_spine1", "tw_abc_leaf1", "tw_a_leaf1"):
        (state / name).mkdir(parents=True)
        (state / name / "bfdd.sock").write_text("")
    (state / "zebra.pid").write_text("1")  # the host FRR's own
    monkeypatch.setattr(frr_statedirs, "FRR_STATE_DIR", state)
    assert remove_statedirs("ab") == [f"2 folders of its FRR daemons in {state}"]
    assert sorted(p.name for p in state.iterdir()) == ["tw_a_leaf1", "tw_abc_leaf1", "zebra.pid"]
    assert remove_statedirs("ab") == []
