"""A drill's report folder: JSON, Markdown and a PNG timeline (`twin drill --report DIR`), and when the
lab's telemetry ran, the counters of the links it touched (JSON and PNG)."""

from __future__ import annotations

from pathlib import Path

from twin.host.owned import Content, write_owned
from twin.model.counters import DrillCounters
from twin.model.drill import DrillReport
from twin.report.counters import counters_png
from twin.report.drill import drill_markdown
from twin.report.timeline import timeline_png


def write_reports(report: DrillReport, directory: Path, counters: DrillCounters | None = None) -> list[Path]:
    """JSON, Markdown and a PNG timeline, named after the drill; with `counters`, those of the links it
    touched as JSON and a PNG (`<stem>-counters.*`)."""
    stem = f"{report.lab}-{report.drill}"  # a folder twin owns (twin.host.owned); earlier drills' reports stay
    files: dict[str, Content] = {f"{stem}.json": report.model_dump_json(indent=1),
                                 f"{stem}.md": drill_markdown(report),
                                 f"{stem}.png": lambda path: timeline_png(report, path)}
    if counters is not None:
        files[f"{stem}-counters.json"] = counters.model_dump_json(indent=1)
        files[f"{stem}-counters.png"] = lambda path: counters_png(counters, path)
    return write_owned(directory, files, "twin drill --report", prune=False)
