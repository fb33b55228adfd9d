"""A lab's event log: drills' and traffic runs' instants appended, read back in order, a run's end
recorded however the run ends (twin.lab.events, twin.traffic.timeline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.lab import events
from twin.traffic.timeline import recorded


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    (tmp_path / "ev").mkdir()
    return tmp_path / "ev"


def test_a_traffic_run_records_its_start_and_its_end_even_when_it_fails(lab: Path) -> None:
    with pytest.raises(RuntimeError), recorded("ev", "all-to-all", "spine-loss:spine1") as run:
        raise RuntimeError("the run failed")
    logged = events.read(lab / events.EVENTS)
    assert [(e.source, e.name, e.target, e.phase, e.run) for e in logged] == [
        ("traffic", "all-to-all", "spine-loss:spine1", "start", run),
        ("traffic", "all-to-all", "spine-loss:spine1", "end", run)]
    assert logged[0].t <= logged[1].t


def test_nothing_is_written_for_a_lab_that_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    events.record("gone", [events.LabEvent(1.0, "drill", "link-down", "leaf1:Ethernet0", "inject", "r")])
    assert not (tmp_path / "gone").exists()


def test_lines_that_are_not_events_are_skipped(lab: Path) -> None:
    events.record("ev", [events.LabEvent(1.0, "drill", "link-down", "leaf1:Ethernet0", "inject", "r")])
    with (lab / events.EVENTS).open("a") as log:
        log.write("not json\n{\"t\": 2}\n")
    assert [e.phase for e in events.read(lab / events.EVENTS)] == ["inject"]
