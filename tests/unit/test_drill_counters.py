"""A drill report's counter plots: which run and links are the drill's (twin.telemetry.drill_counters), what
is asked of Prometheus and how its answer becomes the report's JSON and PNG (twin.report.counters)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.image
import numpy as np
import pytest

from twin.lab.events import LabEvent
from twin.model.counters import DrillCounters, DrillInstant, LinkCounters, PortCounters
from twin.model.drill import ActionReport, DrillReport
from twin.report.counters import counters_png, rate_unit, zero_of
from twin.report.drill_files import write_reports
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology
from twin.telemetry import drill_counters as fetch

PLAN = plan_topology(load_topology(Path(__file__).resolve().parents[1] / "integration" / "data" / "mini.yaml"))
T0 = 1_700_000_000.0


def _event(t: float, phase: str, run: str = "link-down@1700000000.000", target: str = "leaf1:Ethernet128",
           name: str = "link-down", source: str = "drill") -> LabEvent:
    return LabEvent(t, source, name, target, phase, run)


def test_the_drills_run_is_its_last_on_the_log() -> None:
    older = [_event(T0 - 100, "inject", run="link-down@1699999900.000")]
    other = [_event(T0 + 1, "inject", run="spine-loss@1700000001.000", target="spine1", name="spine-loss")]
    traffic = [_event(T0 + 2, "start", run="link-down@1700000000.000", source="traffic")]
    mine = [_event(T0, "inject"), _event(T0 + 4, "restore"), _event(T0 + 0.9, "detect")]
    run = fetch.drill_run(older + mine[:2] + other + traffic + mine[2:], "link-down")
    assert [(e.phase, e.t) for e in run] == [("inject", T0), ("restore", T0 + 4), ("detect", T0 + 0.9)]
    assert fetch.drill_run(other, "link-down") == []


def test_a_link_target_is_its_two_ends_and_a_node_all_its_links() -> None:
    assert fetch.touched_links(PLAN, ["leaf1:Ethernet128"]) == [[("leaf1", "Ethernet128"), ("spine1", "Ethernet0")]]
    assert fetch.touched_links(PLAN, ["spine1"]) == [[("spine1", "Ethernet0"), ("leaf1", "Ethernet128")],
                                                     [("spine1", "Ethernet4"), ("leaf2", "Ethernet128")]]
    # a leaf's server port has one switch end; a link named twice is one link
    leaf = fetch.touched_links(PLAN, ["leaf1", "spine1:Ethernet0"])
    assert leaf[0] == [("leaf1", "Ethernet0")] and len(leaf) == 3
    assert fetch.touched_links(PLAN, ["nowhere:Ethernet0"]) == []


def test_a_range_answer_becomes_series_by_end_without_nan() -> None:
    result = [{"metric": {"switch": "leaf1", "port": "Ethernet128", "lab": "x"},
               "values": [[T0, "8"], [T0 + 5, "NaN"], [T0 + 10, "16"]]}]
    assert fetch.by_end(result) == {("leaf1", "Ethernet128"): [[T0, 8.0], [T0 + 10, 16.0]]}


class FakePrometheus:
    """What drill_counters asks Prometheus, and a link that went down for 4 s."""

    def __init__(self) -> None:
        self.ranges: list[tuple[str, float, float, float]] = []

    def query(self, base: str, expr: str) -> list[dict[str, Any]]:
        assert expr == 'max(timestamp(twin_telemetry_switch_up{lab="lab1"}))'
        return [{"metric": {}, "value": [T0 + 20, str(T0 + 9)]}]   # a scrape after the last instant

    def query_range(self, base: str, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        self.ranges.append((expr, start, end, step))
        rows = []
        for switch, port in (("leaf1", "Ethernet128"), ("spine1", "Ethernet0"), ("spine1", "Ethernet4")):
            if "oper_status" in expr:
                values = [[T0 + t, "0" if 0 < t < 5 else "1"] for t in range(-10, 10)]
            else:
                values = [[T0 + t, str(1e6 * (t < 0 or t > 6))] for t in range(-10, 10)]
            rows.append({"metric": {"switch": switch, "port": port, "lab": "lab1"}, "values": values})
        return rows


def _report() -> DrillReport:
    return DrillReport(drill="link-down", target="leaf1:Ethernet128", lab="lab1", passed=True, restored=True,
                       actions=[ActionReport(action="inject", kind="link-down", target="leaf1:Ethernet128", t_ms=0),
                                ActionReport(action="restore", kind="link-down", target="leaf1:Ethernet128",
                                             t_ms=4000)])


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakePrometheus:
    prom = FakePrometheus()
    monkeypatch.setattr(fetch, "read_state", lambda lab: {"prometheus": "http://127.0.0.1:9", "scrape_s": 1,
                                                          "sample_s": 1})
    monkeypatch.setattr(fetch.prometheus, "ready", lambda base: True)
    monkeypatch.setattr(fetch.prometheus, "query", prom.query)
    monkeypatch.setattr(fetch.prometheus, "query_range", prom.query_range)
    monkeypatch.setattr(fetch, "lab_dir", lambda lab: tmp_path)
    monkeypatch.setattr(fetch.RunningLab, "load", classmethod(lambda cls, lab: type("R", (), {"plan": PLAN})()))
    events = [_event(T0, "inject"), _event(T0 + 0.8, "detect"), _event(T0 + 1.5, "converge"),
              _event(T0 + 4, "restore"), _event(T0 + 5, "recovered")]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e.__dict__) + "\n" for e in events))
    return prom


def test_it_reads_both_ends_of_the_links_over_the_drills_window(fake: FakePrometheus) -> None:
    counters = fetch.drill_counters(_report())
    assert counters is not None
    assert [q[0] for q in fake.ranges] == [
        'rate(sonic_port_in_octets_total{lab="lab1", switch=~"leaf1|spine1"}[3s]) * 8',
        'rate(sonic_port_out_octets_total{lab="lab1", switch=~"leaf1|spine1"}[3s]) * 8',
        'sonic_port_oper_status{lab="lab1", switch=~"leaf1|spine1"}']
    _, start, end, step = fake.ranges[0]
    assert end >= T0 + 5 and step == 1 and start <= T0 - fetch.LEAD_S
    assert (end - start) / step == pytest.approx(round((end - start) / step))
    assert start > T0 - fetch.LEAD_S - step   # the grid ends at the end
    assert [link.name for link in counters.links] == ["leaf1:Ethernet128--spine1:Ethernet0"]
    ends = counters.links[0].ends
    assert [(e.switch, e.port, e.peer, e.peer_port) for e in ends] == [("leaf1", "Ethernet128", "spine1", "Ethernet0"),
                                                                      ("spine1", "Ethernet0", "leaf1", "Ethernet128")]
    assert min(v for _, v in ends[1].oper_status) == 0 and len(ends[0].in_bps) == 20   # spine1 Ethernet4 is not shown
    assert [i.phase for i in counters.instants] == ["inject", "detect", "converge", "restore", "recovered"]
    assert counters.run == "link-down@1700000000.000" and counters.links_touched == 1


def test_without_telemetry_there_is_nothing_to_plot(fake: FakePrometheus, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "read_state", lambda lab: None)
    assert fetch.drill_counters(_report()) is None and fake.ranges == []


def test_a_drill_not_on_the_log_has_nothing_to_plot(fake: FakePrometheus) -> None:
    assert fetch.drill_counters(_report().model_copy(update={"drill": "spine-loss"})) is None


def _counters(links: int = 1) -> DrillCounters:
    down = [[T0 + t, 0.0 if 0 < t < 5 else 1.0] for t in range(-10, 10)]
    rate = [[T0 + t, 4e8 * (t < 0 or t > 6)] for t in range(-10, 10)]
    ends = [PortCounters(switch="leaf1", port="Ethernet128", in_bps=rate, out_bps=rate, oper_status=down),
            PortCounters(switch="spine1", port="Ethernet0", in_bps=rate, out_bps=rate, oper_status=down)]
    return DrillCounters(lab="lab1", drill="link-down", run="link-down@1", start=T0 - 15, end=T0 + 10, step_s=1,
                         rate_window_s=3, links_touched=links,
                         instants=[DrillInstant(t=T0 + 2, phase="inject", kind="link-down", target="leaf1:Ethernet128"),
                                   DrillInstant(t=T0 + 6, phase="restore", kind="link-down",
                                                target="leaf1:Ethernet128")],
                         links=[LinkCounters(name="leaf1:Ethernet128--spine1:Ethernet0", ends=ends)])


def test_the_plot_marks_the_fault_red_and_the_restore_green(tmp_path: Path) -> None:
    counters = _counters()
    assert zero_of(counters) == T0 + 2 and rate_unit(counters) == (1e6, "Mbit/s")
    path = tmp_path / "c.png"
    counters_png(counters, path)
    pixels = matplotlib.image.imread(str(path))
    assert pixels.shape[:2] == (490, 1100)
    red = (pixels[:, :, 0] > 0.9) & (pixels[:, :, 1] < 0.2) & (pixels[:, :, 2] < 0.2)
    green = (pixels[:, :, 1] > 0.4) & (pixels[:, :, 0] < 0.2) & (pixels[:, :, 2] < 0.2)
    assert np.count_nonzero(red.any(axis=0)) >= 1 and np.count_nonzero(red.any(axis=1)) > 300   # a vertical line
    assert np.count_nonzero(green.any(axis=1)) > 300
    counters_png(_counters(links=5), tmp_path / "more.png")   # says it shows 1 of 5; still draws


def test_the_report_folder_gets_the_counters_only_when_there_are_some(tmp_path: Path) -> None:
    report = _report()
    plain = write_reports(report, tmp_path / "a")
    assert sorted(p.name for p in plain) == ["lab1-link-down.json", "lab1-link-down.md", "lab1-link-down.png"]
    written = write_reports(report, tmp_path / "b", _counters())
    names = sorted(p.name for p in written)
    assert names == ["lab1-link-down-counters.json", "lab1-link-down-counters.png", "lab1-link-down.json",
                     "lab1-link-down.md", "lab1-link-down.png"]
    back = DrillCounters.model_validate_json((tmp_path / "b" / "lab1-link-down-counters.json").read_text())
    assert back == _counters()
