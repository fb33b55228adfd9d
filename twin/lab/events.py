"""A running lab's event log (events.jsonl in its run directory): the instants of drills and traffic
runs, appended as they are known, so that what watches the lab (twin telemetry's Prometheus, a
Grafana annotation query) can put them on the timeline beside the counters. One JSON object a line:
{"t": unix seconds, "source": "drill" | "traffic", "name": kind or pattern, "target": ..., "phase":
inject | detect | converge | restore | start | end, "run": the run's id}."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from twin.host.rundir import lab_dir

EVENTS = "events.jsonl"


@dataclass(frozen=True)
class LabEvent:
    t: float
    source: str
    name: str
    target: str
    phase: str
    run: str


def record(lab: str, events: list[LabEvent]) -> None:
    """Append `events` to the lab's log (nothing when the lab's run directory is gone)."""
    folder = lab_dir(lab)
    if not folder.is_dir() or not events:
        return
    text = "".join(json.dumps(asdict(e), sort_keys=True) + "\n" for e in events)
    fd = os.open(folder / EVENTS, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, text.encode())   # one write: a reader never sees half of a batch's line
    finally:
        os.close(fd)


def read(path: Path) -> list[LabEvent]:
    """Every event in a lab's log, oldest first; lines that are not events are skipped."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(LabEvent(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return out
