"""bench/lab_up.py's ratios: twin against the bare floor, and against the floor with SONiC's routing config."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def twin_run(seconds: float) -> dict[str, Any]:
    return {"healthy": True, "seconds_up_to_healthy": seconds, "phases": {"plan": 0.1},
            "memory": {"pss_mib_per_switch_mean": 20.0, "agent_pss_mib_per_switch": 5.0}}


def floor_run(seconds: float, ok: bool = True) -> dict[str, Any]:
    if not ok:
        return {"ok": False, "error": "TIMEOUT"}
    return {"ok": True, "seconds_total": seconds, "seconds_wall": seconds + 2, "pss_mib_per_switch": 24.0}


def test_twin_is_also_compared_with_the_floor_running_sonic_s_routing(lab_up: ModuleType) -> None:
    doc = lab_up.compare([twin_run(200.0), twin_run(220.0), twin_run(210.0)],
                         [floor_run(136.0), floor_run(140.0), floor_run(150.0)],
                         [floor_run(175.0), floor_run(170.0), floor_run(168.0)])
    assert doc["ratio_time"] == round(210 / 140, 2)
    assert doc["floor_sonic_routing_seconds_total"] == {"median": 170.0, "min": 168.0, "max": 175.0}
    assert doc["ratio_time_to_sonic_routing_floor"] == round(210 / 170, 2)
    assert doc["ratio_time_sonic_routing_floor_to_floor"] == round(170 / 140, 2)
    assert doc["floor_sonic_routing_runs_ok"] == "3/3"


def cpu(busy: float, frr: float) -> dict[str, float]:
    return {"busy": busy, "frr": frr, "redis": 0.0, "agent": 0.0, "rest": busy - frr}


def test_twin_s_cpu_is_split_into_frr_s_work_and_what_twin_adds(lab_up: ModuleType) -> None:
    """FRR working harder in one run (sessions reset, updates sent again) is told apart from the CPU
    twin adds besides FRR."""
    twins = [{**twin_run(250.0), "cpu_seconds": cpu(480.0, 400.0)},
             {**twin_run(280.0), "cpu_seconds": cpu(560.0, 470.0)},
             {**twin_run(0.0), "healthy": False, "cpu_seconds": cpu(9999.0, 0.0)}]   # not healthy: left out
    routing = [{**floor_run(200.0), "cpu_seconds": cpu(400.0, 360.0)},
               {**floor_run(205.0), "cpu_seconds": cpu(420.0, 370.0)}, floor_run(0.0, ok=False)]
    doc = lab_up.compare(twins, [floor_run(180.0)], routing)
    split = doc["cpu_against_sonic_routing_floor"]
    assert split["twin_cpu_seconds"]["busy"] == 520.0 and split["floor_cpu_seconds"]["busy"] == 410.0
    assert split["ratio_cpu"] == round(520 / 410, 2)
    assert split["ratio_frr_cpu"] == round(435 / 365, 2)
    assert split["cpu_seconds_besides_frr"] == {"twin": 85.0, "floor": 45.0, "added_by_twin": 40.0}
    assert doc["cpu_against_floor"] == {}   # that floor's run did not measure its CPU


def test_failed_routing_floor_runs_are_counted_and_left_out(lab_up: ModuleType) -> None:
    doc = lab_up.compare([twin_run(200.0)], [floor_run(100.0)], [floor_run(0.0, ok=False), floor_run(160.0)])
    assert doc["floor_sonic_routing_runs_ok"] == "1/2"
    assert doc["ratio_time_to_sonic_routing_floor"] == 1.25


def test_without_the_routing_floor_there_is_no_ratio_to_it(lab_up: ModuleType) -> None:
    doc = lab_up.compare([twin_run(200.0)], [floor_run(100.0)])
    assert doc["ratio_time"] == 2.0
    assert not [key for key in doc if "sonic_routing" in key]
    failed = lab_up.compare([twin_run(200.0)], [floor_run(100.0)], [floor_run(0.0, ok=False)])
    assert failed["floor_sonic_routing_runs_ok"] == "0/1"
    assert "ratio_time_to_sonic_routing_floor" not in failed


def test_against_runs_the_other_revision_in_every_round(lab_up: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    seen: list[tuple[str, Path]] = []

    def fake_bench(lab_file: str, name: str, timeout: float, *up_args: str, measure: Any = None,
                   repo: Path = lab_up.REPO) -> dict[str, Any]:
        seen.append((name, repo))
        return twin_run(11.0 if repo == tmp_path else 10.0)

    monkeypatch.setattr(lab_up, "bench", fake_bench)
    monkeypatch.setattr(lab_up, "floor", lambda *a: floor_run(8.0))
    monkeypatch.setattr(lab_up, "clean_start", lambda: {"processes_in_other_namespaces": [], "named_namespaces": []})
    doc = lab_up.rounds(Path("floor.py"), 2, "labs/default.yaml", "bench", 4, 8, 300, 300,
                        against=("main~1 (abc)", tmp_path))
    assert seen == [("benchb0", tmp_path), ("bench0", lab_up.REPO), ("benchb1", tmp_path), ("bench1", lab_up.REPO)]
    assert doc["against"]["revision"] == "main~1 (abc)"
    assert doc["against"]["ratio_time"] == 1.38        # 11 / 8
    assert doc["ratio_time"] == 1.25                   # 10 / 8
    assert doc["ratio_time_to_against"] == 0.91        # 10 / 11
    assert doc["runs_started_clean"] == "6/6" and doc["runs_with_neighbour_table_full"] == 0


# -- each run starts clean, and says whether a neighbour table was full during it ---------------------------

ARP_CACHE = (
    "entries  allocs   destroys hash_grows lookups  hits     res_failed rcv_probes_mcast rcv_probes_ucast "
    "periodic_gc_runs forced_gc_runs unresolved_discards table_fulls\n"
    "00000002 00009c9f 00008dd9 00000004   000308ae 00020d8c 000000f8   00000000         00000000         "
    "000009a7         00000000       00000000            0000001a\n"
    "00000002 0000b05a 0000bf1e 00000008   0002fb70 000205e4 000000d8   00000000         00000000         "
    "00000000         00000000       00000000            00000003\n")
def test_kernel_counters_are_read_as_the_kernel_writes_them(lab_up: ModuleType) -> None:
    import kernel_state

    assert kernel_state.table_fulls(ARP_CACHE) == 0x1A + 3, "hex, one row per CPU, summed"
    assert kernel_state.table_fulls("") == 0


def test_a_run_waits_until_the_rtnl_lock_answers_at_once(monkeypatch: pytest.MonkeyPatch,
                                                          lab_up: ModuleType) -> None:
    """The kernel destroying the last run's namespaces holds the rtnl lock: probes are slow until it is
    done, and one quick probe among slow ones is not enough."""
    import kernel_state

    probes = iter([900.0, 3.0, 1200.0, 4.0, 3.0, 5.0, 3.0, 999.0])
    monkeypatch.setattr(kernel_state.time, "sleep", lambda s: None)
    waited = kernel_state.wait_for_rtnl(lambda: next(probes), cleaning=lambda: False)
    assert next(probes) == 999.0, "it stopped after four quick probes in a row"
    assert waited["slowest_rtnl_probe_ms"] == 1200.0


def test_a_run_stops_waiting_for_the_rtnl_lock_at_its_timeout(monkeypatch: pytest.MonkeyPatch,
                                                               lab_up: ModuleType) -> None:
    import kernel_state

    clock = iter(float(t) for t in range(1000))
    monkeypatch.setattr(kernel_state.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(kernel_state.time, "sleep", lambda s: None)
    waited = kernel_state.wait_for_rtnl(lambda: 500.0, timeout=10, cleaning=lambda: False)
    assert 10 <= waited["seconds_waiting_for_rtnl"] <= 12 and waited["slowest_rtnl_probe_ms"] == 500.0


def test_a_run_records_leftovers_and_a_full_neighbour_table(monkeypatch: pytest.MonkeyPatch,
                                                             lab_up: ModuleType) -> None:
    events: list[str] = []
    fulls = iter([{"ipv4": 5, "ipv6": 0}, {"ipv4": 9, "ipv6": 0}])

    def start() -> dict[str, Any]:
        events.append("clean_start")
        return {"seconds_waiting_for_rtnl": 0.0, "slowest_rtnl_probe_ms": 3.0,
                "processes_in_other_namespaces": ["4242 bgpd"], "named_namespaces": []}

    def counters() -> dict[str, int]:
        events.append("table_fulls")
        return next(fulls)

    def run() -> dict[str, Any]:
        events.append("run")
        return twin_run(10.0)

    monkeypatch.setattr(lab_up, "clean_start", start)
    monkeypatch.setattr(lab_up, "neighbour_table_fulls", counters)
    doc = lab_up.checked(run)
    assert events == ["clean_start", "table_fulls", "run", "table_fulls"]
    assert doc["started_clean"] is False and doc["neighbour_table_full_events"] == {"ipv4": 4, "ipv6": 0}
    clean = {**twin_run(11.0), "started_clean": True, "neighbour_table_full_events": {"ipv4": 0, "ipv6": 0}}
    assert lab_up.hygiene([doc, clean]) == {"runs_started_clean": "1/2", "runs_with_neighbour_table_full": 1}


def test_a_run_waits_while_a_kernel_worker_destroys_namespaces(monkeypatch: pytest.MonkeyPatch,
                                                                 lab_up: ModuleType) -> None:
    """The rtnl lock can answer at once while the kernel's netns worker still burns a CPU."""
    import kernel_state

    busy = iter([True, True, False, True, False, False, False, False, "unasked"])
    monkeypatch.setattr(kernel_state.time, "sleep", lambda s: None)
    kernel_state.wait_for_rtnl(lambda: 2.0, cleaning=lambda: bool(next(busy)))
    assert next(busy) == "unasked", "four quiet probes in a row after the last busy one"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a network namespace needs root")
def test_a_process_left_in_another_namespace_is_found(lab_up: ModuleType) -> None:
    """As an earlier floor's bgpd left in its deleted namespace: found by comparing with the bench's own."""
    import kernel_state

    left = subprocess.Popen(["unshare", "--net", "sleep", "30"])
    try:
        for _ in range(50):
            # "<pid> sleep" once unshare has exec'd it: before that the same pid is "<pid> unshare"
            if f"{left.pid} sleep" in kernel_state.processes_in_other_namespaces():
                break
            time.sleep(0.1)
        assert f"{left.pid} sleep" in kernel_state.processes_in_other_namespaces()
    finally:
        left.kill()
        left.wait()


def test_twin_s_bytecode_is_compiled_before_the_runs(lab_up: ModuleType, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """As scripts/install-deps.sh does for a user: no run pays for compiling twin's imports, even where
    PYTHONDONTWRITEBYTECODE is set (it stops only the import system writing bytecode)."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "twin" / "sub").mkdir(parents=True)
    (tmp_path / "twin" / "__init__.py").write_text("")
    (tmp_path / "twin" / "sub" / "mod.py").write_text("X = 1\n")
    assert "compileall" in lab_up.compile_bytecode(tmp_path)
    compiled = sorted(p.name.split(".")[0] for p in tmp_path.rglob("__pycache__/*.pyc"))
    assert compiled == ["__init__", "mod"]
