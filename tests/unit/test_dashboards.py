"""The Grafana dashboards of twin telemetry (twin.telemetry.dashboards, dashboards/*.json): the committed
files are what the generator and `twin telemetry dashboards` write; each round-trips through
grafana-foundation-sdk's model; every PromQL expression names only metrics of the collector's catalog,
with their own labels, filtered by the lab; and Prometheus's promtool parses every one."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as model
from typer.testing import CliRunner

from twin.cli.app import app
from twin.telemetry import dashboards
from twin.telemetry.metrics import catalog

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "dashboards"
NAMES = sorted(dashboards.DASHBOARDS)
ADDED_BY_PROMETHEUS = {"lab", "job", "instance"}
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range"}
FUNCTIONS = {"sum", "count", "max", "min", "avg", "topk", "bottomk", "rate", "irate", "increase", "timestamp",
             "label_values"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
OPERATORS = {"and", "or", "unless", "bool", "offset"}
PROMETHEUS_FIELDS = {"step", "titleFormat", "textFormat", "tagKeys", "useValueForTime"}


def _doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(dashboards.render()[name])
    return doc


def _metrics() -> dict[str, set[str]]:
    """Every metric name as Prometheus stores it (a counter with `_total`) -> its labels."""
    return {m.name + ("_total" if m.kind == "counter" else ""): {*m.labels, *ADDED_BY_PROMETHEUS} for m in catalog()}


# -- the committed copies --------------------------------------------------------------------------------

def test_the_committed_dashboards_are_what_the_generator_writes() -> None:
    rendered = dashboards.render()
    assert set(rendered) == {p.name for p in COMMITTED.glob("*.json")}
    for name, text in rendered.items():
        assert (COMMITTED / name).read_text(encoding="utf-8") == text, (
            f"dashboards/{name} is not what twin/telemetry/dashboards.py writes: run `make dashboards` and commit it")


def test_the_command_writes_the_committed_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["telemetry", "dashboards", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(Path(p).name for p in json.loads(result.output)["dashboards"]) == NAMES
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert written == {p.name: p.read_bytes() for p in COMMITTED.iterdir()}   # the marker too


def test_the_command_refuses_a_folder_of_someone_elses(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["telemetry", "dashboards", str(tmp_path)])
    assert result.exit_code != 0 and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


# -- the SDK's model -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_each_dashboard_round_trips_through_the_sdks_model(name: str) -> None:
    doc = _doc(name)
    assert json.loads(dashboards.text_of(dashboards.model_of(doc))) == doc
    # the SDK's own model reads all of it but the Prometheus annotation fields it does not have yet
    plain = json.loads(json.dumps(model.Dashboard.from_json(doc), cls=JSONEncoder))
    assert {k: v for k, v in plain.items() if k != "annotations"} == {k: v for k, v in doc.items()
                                                                      if k != "annotations"}
    for ours, theirs in zip(doc["annotations"]["list"], plain["annotations"]["list"], strict=True):
        assert {k: v for k, v in ours.items() if k not in PROMETHEUS_FIELDS} == theirs
        assert set(ours) - set(theirs) <= PROMETHEUS_FIELDS


def test_a_field_the_model_does_not_know_is_lost_in_the_round_trip() -> None:
    """What makes the round trip a check: the model keeps only what it knows."""
    doc = _doc("twin-fabric.json")
    doc["panels"][1]["notAPanelField"] = 1
    assert json.loads(dashboards.text_of(dashboards.model_of(doc))) != doc


# -- PromQL ----------------------------------------------------------------------------------------------

TOKEN = re.compile(r'(?P<brace>\{(?:[^}"]|"(?:[^"\\]|\\.)*")*\})|(?P<str>"(?:[^"\\]|\\.)*")|(?P<range>\[[^\]]*\])'
                   r"|(?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)|(?P<num>\d+(?:\.\d+)?)|(?P<space>\s+)|(?P<op>.)")
MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*,?')


def _selector_labels(brace: str) -> list[str]:
    body = brace[1:-1]
    found = MATCHER.findall(body)
    assert MATCHER.sub("", body).strip() == "", f"a matcher of {brace} is not label op \"value\""
    return [label for label, _ in found]


def promql(expr: str) -> dict[str, Any]:
    """What an expression names: metrics, the labels each selector filters on, grouping labels, functions."""
    tokens = [(m.lastgroup, m.group()) for m in TOKEN.finditer(expr) if m.lastgroup != "space"]
    out: dict[str, Any] = {"metrics": [], "matchers": [], "grouping": [], "functions": []}
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        following = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if kind == "ident" and text in GROUPING and following[1] == "(":
            close = next(j for j in range(i, len(tokens)) if tokens[j][1] == ")")
            out["grouping"] += [t for k, t in tokens[i + 2:close] if k == "ident"]
            i = close
        elif kind == "ident" and (following[1] == "(" or following[1] in GROUPING):   # sum(...), sum by (...)
            out["functions"].append(text)
        elif kind == "ident" and text in OPERATORS:
            pass
        elif kind == "ident":
            out["metrics"].append(text)
            if following[0] == "brace":
                out["matchers"].append((text, _selector_labels(following[1])))
        elif kind == "brace":
            assert tokens[i - 1][0] == "ident", f"a selector without a metric name in {expr}"
        i += 1
    return out


def _queries(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(where, expression, legend) of every panel target and annotation."""
    found = [(f"panel {p['title']!r}", t["expr"], t.get("legendFormat", ""))
             for p in doc["panels"] for t in p.get("targets", [])]
    found += [(f"annotation {a['name']!r}", a["expr"], a.get("titleFormat", "") + a.get("textFormat", ""))
              for a in doc["annotations"]["list"]]
    return found


def _variable_queries(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(variable, selector, label) of every label_values variable."""
    out = []
    for variable in doc["templating"]["list"]:
        if variable["type"] == "query":
            found = re.fullmatch(r"label_values\((.*), *(\w+)\)", variable["query"])
            assert found, variable["query"]
            out.append((variable["name"], found.group(1), found.group(2)))
    return out


def test_the_promql_reader_sees_what_an_expression_names() -> None:
    seen = promql('sum by (role) (rate(sonic_port_in_octets_total{lab="$lab", port=~"a|b"}[$__rate_interval])) * 8')
    assert seen["metrics"] == ["sonic_port_in_octets_total"] and seen["grouping"] == ["role"]
    assert seen["matchers"] == [("sonic_port_in_octets_total", ["lab", "port"])]
    assert seen["functions"] == ["sum", "rate"]
    assert promql("twin_drill_active == 1 or sonic_nope")["metrics"] == ["twin_drill_active", "sonic_nope"]


@pytest.mark.parametrize("name", NAMES)
def test_every_expression_names_only_metrics_of_the_catalog_with_their_labels(name: str) -> None:
    metrics = _metrics()
    doc = _doc(name)
    queries = _queries(doc) + [(f"variable {v}", sel, "") for v, sel, _ in _variable_queries(doc)]
    assert len(queries) >= 5
    for where, expr, legend in queries:
        seen = promql(expr)
        assert seen["metrics"], f"{where}: {expr} reads no metric"
        unknown = [m for m in seen["metrics"] if m not in metrics]
        assert unknown == [], f"{where}: {expr} names {unknown}, which the collector does not serve"
        assert set(seen["functions"]) <= FUNCTIONS, f"{where}: {expr}"
        labels = set.intersection(*(metrics[m] for m in seen["metrics"]))
        for metric, filtered in seen["matchers"]:
            assert set(filtered) <= metrics[metric], f"{where}: {metric} has no label {set(filtered) - metrics[metric]}"
            assert "lab" in filtered, f"{where}: {expr} does not keep to the lab ($lab)"
        assert set(seen["grouping"]) <= labels, f"{where}: {expr} groups by labels its metrics lack"
        kept = set(seen["grouping"]) if seen["grouping"] else (
            set() if re.match(r"(sum|count|max|min|avg)\(", expr) else labels)
        shown = set(re.findall(r"\{\{(\w+)\}\}", legend))
        assert shown <= kept, f"{where}: the legend shows {shown - kept}, which {expr} does not keep"
    for variable, selector, label in _variable_queries(doc):
        metric = promql(selector)["metrics"][0]
        assert label in metrics[metric], f"variable {variable}: {metric} has no label {label}"


@pytest.mark.parametrize("name", NAMES)
def test_every_variable_used_is_defined_and_every_panel_reads_the_chosen_prometheus(name: str) -> None:
    doc = _doc(name)
    defined = {v["name"] for v in doc["templating"]["list"]}
    assert {"datasource", "lab"} <= defined
    source = next(v for v in doc["templating"]["list"] if v["name"] == "datasource")
    assert (source["type"], source["query"]) == ("datasource", "prometheus")
    lab = next(v for v in doc["templating"]["list"] if v["name"] == "lab")
    assert lab["query"] == "label_values(twin_telemetry_switch_up, lab)"
    text = json.dumps(doc)
    used = set(re.findall(r"\$(\w+)", text)) - GRAFANA_VARIABLES
    assert used <= defined, f"{name} uses undefined variables {used - defined}"
    for panel in doc["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
    assert len({p["id"] for p in doc["panels"]}) == len(doc["panels"])


def _exprs(name: str) -> list[str]:
    return [expr for _, expr, _ in _queries(_doc(name))]


def test_the_fabric_overview_has_what_an_operator_looks_at_per_tier() -> None:
    exprs = _exprs("twin-fabric.json")

    def has(pattern: str) -> bool:
        return any(re.search(pattern, e) for e in exprs)

    assert has(r"sum by \(role\) \(sonic_bgp_session_established\{")
    assert has(r"by \(role\) \(sonic_route_nexthops\{")
    assert has(r"sum by \(role\) \(rate\(sonic_port_in_octets_total\{.*\[\$__rate_interval\]\)\) \* 8")
    assert has(r"sum by \(role\) \(rate\(sonic_port_out_octets_total\{")
    for counter in ("in_errors", "out_errors", "in_discards", "out_discards"):
        assert has(rf"sum by \(role\) \(rate\(sonic_port_{counter}_total\{{"), counter
    assert has(r"sum by \(role\) \(sonic_port_flap_count\{")
    assert has(r"sum\(twin_telemetry_switch_up\{")


def test_the_roce_dashboard_shows_each_queue_of_each_port() -> None:
    doc = _doc("twin-roce.json")
    exprs = _exprs("twin-roce.json")
    for metric in ("sonic_queue_packets_total", "sonic_queue_bytes_total", "sonic_queue_dropped_packets_total",
                   "sonic_queue_watermark_bytes"):
        assert any(metric in e and "by (port, peer, queue)" in e for e in exprs), metric
    assert {"switch", "port", "queue"} <= {v["name"] for v in doc["templating"]["list"]}
    assert [p.get("repeat") for p in doc["panels"] if p["type"] == "row"] == [None, "switch"]


def test_the_drill_view_puts_the_drills_instants_on_the_timeline() -> None:
    doc = _doc("twin-drill.json")
    marks = {a["name"]: a for a in doc["annotations"]["list"]}
    instants = marks["drill instants"]
    assert instants["expr"].startswith("twin_event_timestamp_seconds{") and instants["expr"].endswith(" * 1000")
    assert instants["useValueForTime"] is True and 'run=~"$run"' in instants["expr"]   # at the instant, in ms
    assert marks["faults in place"]["expr"].startswith("twin_drill_active{")
    exprs = _exprs("twin-drill.json")
    assert any(e.startswith("twin_drill_active{") for e in exprs)
    for side in ('switch=~"$node"', 'peer=~"$node"'):
        for counter in ("sonic_port_in_octets_total", "sonic_port_out_octets_total"):
            assert any(f"rate({counter}{{" in e and side in e for e in exprs), (counter, side)
        assert any(e.startswith("sonic_port_oper_status{") and side in e for e in exprs), side


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="Debian's prometheus (promtool) is not installed "
                    "(scripts/install-deps.sh installs it)")
def test_promtool_parses_every_expression(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    exprs = [expr for name in NAMES for _, expr, _ in _queries(_doc(name))]
    exprs += [sel for name in NAMES for _, sel, _ in _variable_queries(_doc(name))]

    def concrete(expr: str) -> str:
        return re.sub(r"\$\w+", "x", expr.replace("$__rate_interval", "1m"))

    rules = {"groups": [{"name": "dashboards", "rules": [{"record": f"twin:dashboard_{i}", "expr": concrete(e)}
                                                         for i, e in enumerate(exprs)]}]}
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps(rules))
    checked = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in checked.stdout
    path.write_text(json.dumps({"groups": [{"name": "d", "rules": [{"record": "r", "expr": "sum by (role (x)"}]}]}))
    assert subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, timeout=60).returncode != 0
