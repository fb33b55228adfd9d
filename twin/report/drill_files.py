"""A drill's report folder: JSON, Markdown and a PNG timeline (`twin drill --report DIR`)."""

from __future__ import annotations

from pathlib import Path

from twin.host.owned import Content, write_owned
from twin.model.drill import DrillReport
from twin.report.drill import drill_markdown
from twin.report.timeline import timeline_png


def write_reports(report: DrillReport, directory: Path) -> list[Path]:
    """JSON, Markdown and a PNG timeline, named after the drill."""
    stem = f"{report.lab}-{report.drill}"  # a folder twin owns (twin.host.owned); earlier drills' reports stay
    files: dict[str, Content] = {f"{stem}.json": report.model_dump_json(indent=1),
                                 f"{stem}.md": drill_markdown(report),
                                 f"{stem}.png": lambda path: timeline_png(report, path)}
    return write_owned(directory, files, "twin drill --report", prune=False)
