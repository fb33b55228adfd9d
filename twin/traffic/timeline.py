"""A `twin traffic` run on the lab's event log (twin.lab.events): its start and its end, where twin
telemetry's Prometheus and the dashboards' "traffic runs" annotations find them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from twin.lab import events
from twin.lab.events import LabEvent


@contextmanager
def recorded(lab: str, pattern: str, target: str) -> Iterator[str]:
    """Record the run's start, then its end however it ends; yields the run's id. `target`: what the
    run covers (its fault, `spine-loss:spine1`, or `fabric`)."""
    start = time.time()
    run = f"{pattern}@{start:.3f}"
    events.record(lab, [LabEvent(start, "traffic", pattern, target, "start", run)])
    try:
        yield run
    finally:
        events.record(lab, [LabEvent(time.time(), "traffic", pattern, target, "end", run)])
