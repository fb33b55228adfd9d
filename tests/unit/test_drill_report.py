"""Drill reports: the table, the Markdown summary and the PNG timeline from one DrillReport."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from twin.model.drill import ActionReport, DrillReport
from twin.report.drill import drill_markdown, drill_table
from twin.report.timeline import timeline_png


def report(passed: bool = True) -> DrillReport:
    return DrillReport(
        drill="spine-loss", target="spine1", lab="t", passed=passed, restored=passed, detect_ms=11.0,
        converge_ms=72.1, loss_ms=0.0, recovery={"detect_ms": 760.7, "converge_ms": 2243.0, "loss_ms": 0.0},
        paths_before={"leaf1": 4, "leaf2": 4}, paths_during={"leaf1": 3, "leaf2": 3}, paths_after={"leaf1": 4},
        distribution={"spine1": 0.0, "spine2": 0.5, "spine3": 0.5}, imbalance=1.0, flows=128,
        actions=[ActionReport(action="inject", kind="spine-loss", target="spine1", t_ms=0.5, detect_ms=11.0,
                              converge_ms=72.1),
                 ActionReport(action="restore", kind="spine-loss", target="spine1", t_ms=2000.0,
                              converge_ms=2243.0)],
        timeline={"delivery": [[0.0, 1.0], [50.0, 0.9]], "share:spine1": [[0.0, 0.33], [100.0, 0.0]],
                  "share:spine2": [[0.0, 0.33], [100.0, 0.5]]},
        notes=["faults: spine-loss spine1"] + ([] if passed else ["NOT RESTORED: sessions still down"]),
        violations=[] if passed else ["the fabric was not restored to its baseline"])


def test_markdown_has_the_measurements_and_verdict() -> None:
    md = drill_markdown(report())
    assert md.startswith("# Drill spine-loss on spine1 (lab t): PASSED")
    assert "| converge (every FIB as expected) | 72.1 ms |" in md
    assert "| ECMP width per leaf before / during / after | 4 / 3 / 4 |" in md
    failed = drill_markdown(report(passed=False))
    assert "FAILED" in failed and "- the fabric was not restored to its baseline" in failed
    assert "NOT RESTORED" in failed


def test_table_renders_and_says_failed_loudly() -> None:
    console = Console(record=True, width=120)
    console.print(drill_table(report(passed=False)))
    text = console.export_text()
    assert "FAILED: the fabric was not restored" in text and "restored to baseline" in text


def test_timeline_png_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t.png"
    timeline_png(report(), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
