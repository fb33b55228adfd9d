"""The telemetry collector of one lab: `python -m twin.telemetry.collector RUN_DIR --port N --sample-s S`.

It subscribes to every switch of the lab over gNMI (twin.telemetry.subscriber) and serves what the
switches last said, with the lab's events, as Prometheus metrics (twin.telemetry.metrics) on
127.0.0.1:N/metrics, until SIGTERM. It writes `collector.ready` in the lab's telemetry folder once
it serves."""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from twin.lab import events
from twin.lab.running import RunningLab
from twin.telemetry.metrics import PortLabels, Sample, SwitchTables, catalog, switch_samples
from twin.telemetry.subscriber import SwitchSubscriber

log = logging.getLogger("twin.telemetry")
TELEMETRY = "telemetry"   # the folder of a lab's run directory that telemetry keeps its files in
READY = "collector.ready"


def event_samples(lab_events: list[events.LabEvent]) -> list[Sample]:
    """twin_event_timestamp_seconds for each event, twin_drill_active per drill fault (1 from its
    inject until its restore)."""
    out = [Sample("twin_event_timestamp_seconds", {"source": e.source, "name": e.name, "target": e.target,
                                                   "phase": e.phase, "run": e.run}, e.t) for e in lab_events]
    active: dict[tuple[str, str, str], float] = {}
    for e in lab_events:
        if e.source == "drill" and e.phase in ("inject", "restore"):
            active[(e.name, e.target, e.run)] = 1.0 if e.phase == "inject" else 0.0
    out += [Sample("twin_drill_active", {"name": n, "target": t, "run": r}, v) for (n, t, r), v in active.items()]
    return out


class LabCollector(Collector):
    """What prometheus_client asks at each scrape: every switch's samples, and the lab's events."""

    def __init__(self, running: RunningLab, lock: threading.Lock, tables: dict[str, SwitchTables],
                 events_file: Path) -> None:
        self.lock, self.tables, self.events_file = lock, tables, events_file
        self.labels = PortLabels.of(running.plan)
        self.peers = {n.name: {str(nb.ip): nb.name for nb in n.neighbors} for n in running.plan.switches}
        self.metrics = {m.name: m for m in catalog()}

    def collect(self) -> Iterator[Metric]:
        samples: list[Sample] = []
        with self.lock:
            for name, tables in self.tables.items():
                samples += switch_samples(name, tables, self.labels, self.peers.get(name, {}))
        samples += event_samples(events.read(self.events_file))
        by_metric: dict[str, list[Sample]] = defaultdict(list)
        for sample in samples:
            by_metric[sample.metric].append(sample)
        for name, group in by_metric.items():
            metric = self.metrics[name]
            family: CounterMetricFamily | GaugeMetricFamily = (
                CounterMetricFamily(name, metric.help, labels=list(metric.labels)) if metric.kind == "counter"
                else GaugeMetricFamily(name, metric.help, labels=list(metric.labels)))
            for sample in group:
                family.add_metric([sample.labels.get(label, "") for label in metric.labels], sample.value)
            yield family


def serve(run_dir: Path, port: int, sample_s: float) -> None:
    lab = run_dir.name
    running = RunningLab.load(lab)
    lock, stop = threading.Lock(), threading.Event()
    tables: dict[str, SwitchTables] = {}
    subscribers = []
    for node in running.plan.switches:
        target = running.gnmi_target(node.name)
        if target is None:
            continue
        tables[node.name] = SwitchTables()
        subscribers.append(SwitchSubscriber(node.name, target, tables[node.name], lock, stop, sample_s))
    collector = LabCollector(running, lock, tables, run_dir / events.EVENTS)
    registry = CollectorRegistry()
    registry.register(collector)
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    for subscriber in subscribers:
        subscriber.start()
    (run_dir / TELEMETRY / READY).write_text(str(port))
    log.info("serving %d switches' telemetry on 127.0.0.1:%d", len(subscribers), port)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    for subscriber in subscribers:
        subscriber.close()
    server.shutdown()
    thread.join(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m twin.telemetry.collector")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sample-s", type=float, default=5.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    serve(args.run_dir, args.port, args.sample_s)


if __name__ == "__main__":
    main()
