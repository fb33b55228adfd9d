"""`twin telemetry` on a real lab: Prometheus fed over gNMI has a series per switch and port, a link's
drill shows as oper status 0 (and two more flaps, down and up) on both its ends and as events on the timeline, and
`twin telemetry down` and `twin down` leave nothing behind."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import leftovers, running_lab, twin, twin_json, until

from twin.lab.running import RunningLab
from twin.telemetry import prometheus

MINI = Path(__file__).parent / "data" / "mini.yaml"


@pytest.fixture(scope="module")
def watched() -> Iterator[tuple[str, dict[str, Any]]]:
    with running_lab(MINI, "tm", check_clean=True) as name:
        doc = twin_json("telemetry", "up", "--name", name, "--json", "--sample-s", "1", "--scrape-s", "1")
        yield name, doc


def _values(base: str, expr: str) -> dict[tuple[str, str], float]:
    return {(r["metric"].get("switch", ""), r["metric"].get("port", "")): float(r["value"][1])
            for r in prometheus.query(base, expr)}


def test_it_serves_on_localhost_and_has_a_series_per_switch_and_port(watched: tuple[str, dict[str, Any]]) -> None:
    name, doc = watched
    assert doc["prometheus"].startswith("http://127.0.0.1:") and doc["collector"].startswith("http://127.0.0.1:")
    plan = RunningLab.load(name).plan
    ports = {(n.name, i.name) for n in plan.switches for i in n.interfaces}
    base = doc["prometheus"]
    assert until(lambda: set(_values(base, "sonic_port_in_octets_total")) == ports, timeout=30), \
        set(_values(base, "sonic_port_in_octets_total")) ^ ports
    assert set(_values(base, "sonic_port_oper_status")) == ports
    assert all(v == 1 for v in _values(base, "sonic_port_oper_status").values())
    sessions = prometheus.query(base, "sonic_bgp_session_established")
    assert len(sessions) == sum(len(n.neighbors) for n in plan.switches) and all(s["value"][1] == "1" for s in sessions)
    status = twin_json("telemetry", "status", "--name", name, "--json")
    assert status["up"] and status["switches_up"] == len(plan.switches) == status["switches"]
    assert [t["health"] for t in status["targets"]] == ["up"]


def test_a_link_down_drill_shows_on_both_ends_and_on_the_timeline(watched: tuple[str, dict[str, Any]],
                                                                  tmp_path: Path) -> None:
    name, doc = watched
    base = doc["prometheus"]
    ends = {("leaf1", "Ethernet128"), ("spine1", "Ethernet0")}
    flaps = "sonic_port_flap_count"
    assert until(lambda: ends <= set(_values(base, flaps)), timeout=30)
    before = _values(base, flaps)
    scenario = tmp_path / "held.yaml"
    scenario.write_text("name: held-link-down\nsteps:\n  - {kind: link-down, target: 'leaf1:spine1', hold_ms: 4000}\n"
                        "settle_ms: 500\n")
    started = time.time()
    report = twin_json("drill", "--scenario", str(scenario), "--name", name, "--json", check=False)
    assert report["restored"], report["notes"]
    time.sleep(3)   # the last scrape after the restore
    window = f"{int(time.time() - started) + 2}s"
    lowest = _values(base, f"min_over_time(sonic_port_oper_status[{window}])")
    assert {end: lowest[end] for end in ends} == dict.fromkeys(ends, 0.0)
    assert all(v == 1 for k, v in lowest.items() if k not in ends)     # nothing else went down
    after = _values(base, flaps)
    assert {end: after[end] - before[end] for end in ends} == dict.fromkeys(ends, 2.0)   # down, then up
    phases = {r["metric"]["phase"] for r in prometheus.query(base, 'twin_event_timestamp_seconds{source="drill"}')}
    assert {"inject", "detect", "converge", "restore"} <= phases
    active = prometheus.query(base, "twin_drill_active")
    assert [r["value"][1] for r in active] == ["0"]


def test_down_stops_it_and_leaves_nothing(watched: tuple[str, dict[str, Any]]) -> None:
    name, doc = watched
    pids = list(doc["pids"].values())
    twin("telemetry", "down", "--name", name)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert not Path(doc["folder"]).exists()
    assert twin("telemetry", "status", "--name", name, check=False).returncode == 1
    again = twin_json("telemetry", "up", "--name", name, "--json")   # `twin down` ends it with the lab
    assert again["prometheus"] != doc["prometheus"] or again["pids"] != doc["pids"]
    assert json.loads(subprocess.run(["curl", "-s", again["prometheus"] + "/api/v1/status/config"],
                                     capture_output=True, text=True).stdout)["status"] == "success"


def test_twin_up_with_telemetry_starts_it_and_down_removes_everything() -> None:
    from labtools import unique

    name = unique("tu")
    try:
        doc = twin_json("up", str(MINI), "--name", name, "--telemetry", "--json")
        assert doc["healthy"] and doc["telemetry"]["prometheus"].startswith("http://127.0.0.1:")
        assert until(lambda: prometheus.ready(doc["telemetry"]["prometheus"]), timeout=10)
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []
