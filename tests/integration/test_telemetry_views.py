"""What people look at on a lab whose telemetry runs, after a link-down drill: the drill report's plot of
the counters of the link it touched, Prometheus' own graph page of a port's rate in headless Chromium
(its screenshot kept as a test artefact), and the Grafana dashboards' queries on the lab's Prometheus."""

from __future__ import annotations

import html
import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest
from labtools import chromium, needs_chromium, running_lab, twin_json, until

from twin.model.counters import DrillCounters, Series
from twin.telemetry import dashboards, prometheus

MINI = Path(__file__).parent / "data" / "mini.yaml"
HOLD_S = 8.0
ENDS = [("leaf1", "Ethernet128"), ("spine1", "Ethernet0")]


@dataclass(frozen=True)
class Drilled:
    lab: str
    prometheus: str
    reports: Path
    report: dict[str, Any]


@pytest.fixture(scope="module")
def drilled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Drilled]:
    """A lab with telemetry sampled and scraped every second, and a link-down drill of leaf1:spine1
    held 8 s, reported into a folder."""
    with running_lab(MINI, "tv", check_clean=True) as name:
        doc = twin_json("telemetry", "up", "--name", name, "--json", "--sample-s", "1", "--scrape-s", "1")
        base = doc["prometheus"]
        rate = f'rate(sonic_port_in_octets_total{{lab="{name}", switch="leaf1", port="Ethernet128"}}[5s])'
        assert until(lambda: prometheus.query(base, rate), timeout=60)
        time.sleep(10)   # some history before the fault
        reports = tmp_path_factory.mktemp("drill-report")
        scenario = reports.parent / "held.yaml"
        scenario.write_text(f"name: link-down\nsteps:\n  - {{kind: link-down, target: 'leaf1:spine1', "
                            f"hold_ms: {HOLD_S * 1000:g}}}\nsettle_ms: 500\n")
        report = twin_json("drill", "--scenario", str(scenario), "--name", name, "--report", str(reports), check=False)
        assert report["restored"], report["notes"]
        yield Drilled(name, base, reports, report)


def _during(series: Series, start: float, end: float) -> list[float]:
    return [v for t, v in series if start <= t <= end]


def test_the_drill_report_plots_the_counters_of_the_link_it_touched(drilled: Drilled) -> None:
    stem = drilled.reports / f"{drilled.lab}-link-down"
    counters = DrillCounters.model_validate_json(Path(f"{stem}-counters.json").read_text())
    assert [link.name for link in counters.links] == ["leaf1:Ethernet128--spine1:Ethernet0"]
    assert counters.links_touched == 1 and counters.step_s == 1 and counters.rate_window_s == 3
    instants = {i.phase: i.t for i in counters.instants}
    assert {"inject", "detect", "converge", "restore"} <= set(instants)
    inject, restore = instants["inject"], instants["restore"]
    assert restore - inject == pytest.approx(HOLD_S, abs=1)
    assert counters.start < inject - 10 and counters.end > restore
    ends = counters.links[0].ends
    assert [(e.switch, e.port) for e in ends] == ENDS
    for end in ends:
        where = f"{end.switch} {end.port}"
        assert set(_during(end.oper_status, counters.start, inject - 1)) == {1.0}, where
        assert 0.0 in _during(end.oper_status, inject, restore + 1), where       # down while the fault held
        assert end.oper_status[-1][1] == 1.0, where                               # and up again at the end
        assert max(_during(end.in_bps, counters.start, inject)) > 0, where         # BFD and BGP, at least
        quiet = _during(end.in_bps, inject + 5.5, restore) + _during(end.out_bps, inject + 5.5, restore)
        assert len(quiet) >= 4 and max(quiet) < 100, (where, quiet)               # nothing crosses a down link
    pixels = matplotlib.image.imread(f"{stem}-counters.png")
    assert pixels.shape[:2] == (490, 1100)
    print(f"counter plot kept as a test artefact: {stem}-counters.png")


@needs_chromium
def test_prometheus_graph_of_a_ports_rate_in_headless_chromium(drilled: Drilled, tmp_path: Path) -> None:
    expr = f'rate(sonic_port_in_octets_total{{lab="{drilled.lab}", switch="leaf1", port="Ethernet128"}}[5s]) * 8'
    url = f"{drilled.prometheus}/graph?" + urllib.parse.urlencode({"g0.expr": expr, "g0.tab": "0",
                                                                    "g0.range_input": "2m"})
    dom = chromium("--virtual-time-budget=10000", "--window-size=1400,900", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr
    page = dom.stdout
    shown = re.search(r'<textarea[^>]*id="expr0"[^>]*>(.*?)</textarea>', page, re.S)
    assert shown and html.unescape(shown.group(1)) == expr
    assert re.search(r'class="error alert alert-danger" style="display: none;"', page), \
        re.findall(r'alert-danger"[^>]*>([^<]*)', page)                       # no error banner
    assert '<svg width="' in page and 'class="rickshaw_graph' in page       # the classic UI's graph
    line = re.search(r'<path class="path" d="M([^"]+)"', page)
    assert line and line.group(1).count("L") >= 10, "the graph has no line of the series"
    legend = html.unescape(" ".join(re.findall(r'<span class="label">([^<]*)', page)))
    assert f'lab="{drilled.lab}"' in legend and 'port="Ethernet128"' in legend and 'switch="leaf1"' in legend
    screenshot = tmp_path / "prometheus-graph-leaf1-Ethernet128.png"
    shot = chromium("--virtual-time-budget=10000", "--window-size=1400,900", f"--screenshot={screenshot}", url)
    assert shot.returncode == 0, shot.stderr
    pixels = matplotlib.image.imread(str(screenshot))
    assert pixels.shape[:2] == (900, 1400)
    print(f"screenshot kept as a test artefact: {screenshot}")


def _concrete(expr: str, lab: str) -> str:
    """A dashboard's expression as Grafana sends it with the lab chosen, every other variable at All."""
    expr = expr.replace("$__rate_interval", "5s").replace("$lab", lab).replace("$node", "leaf1")
    return re.sub(r"\$\w+", ".*", expr)


@pytest.mark.parametrize("name", sorted(dashboards.DASHBOARDS))
def test_every_dashboard_query_runs_on_the_labs_prometheus(drilled: Drilled, name: str) -> None:
    """Each query is accepted and has data (the queues' too: the switches classify into SONiC's queues),
    but those that are empty on a healthy lab after the drill (ports down now, faults in place, traffic runs)."""
    doc = json.loads(dashboards.render()[name])
    exprs = [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]
    exprs += [a["expr"] for a in doc["annotations"]["list"]]
    exprs += [v["query"].removeprefix("label_values(").rsplit(",", 1)[0]   # label_values(SELECTOR, LABEL)
              for v in doc["templating"]["list"] if v["type"] == "query"]
    empty = []
    for expr in exprs:
        result = prometheus.query(drilled.prometheus, _concrete(expr, drilled.lab))   # TwinError when refused
        if not result:
            empty.append(expr)
    expected = [e for e in exprs if " == " in e or 'source="traffic"' in e]
    assert empty == expected


def test_the_drill_instants_annotation_puts_them_where_they_happened(drilled: Drilled) -> None:
    doc = json.loads(dashboards.render()["twin-drill.json"])
    instants = next(a for a in doc["annotations"]["list"] if a["name"] == "drill instants")
    rows = prometheus.query(drilled.prometheus, _concrete(instants["expr"], drilled.lab))
    logged = {r["metric"]["phase"]: float(r["value"][1]) for r in rows}     # ms, as Grafana reads them
    counters = DrillCounters.model_validate_json(
        (drilled.reports / f"{drilled.lab}-link-down-counters.json").read_text())
    assert len(rows) == len(counters.instants) >= 4
    assert logged == pytest.approx({i.phase: i.t * 1000 for i in counters.instants}, abs=1)
