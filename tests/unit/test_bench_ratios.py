"""bench/lab_up.py's ratios: twin against the bare floor, and against the floor with SONiC's routing config."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def lab_up() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_lab_up", BENCH / "lab_up.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


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
    doc = lab_up.rounds(Path("floor.py"), 2, "labs/default.yaml", "bench", 4, 8, 300, 300,
                        against=("main~1 (abc)", tmp_path))
    assert seen == [("benchb0", tmp_path), ("bench0", lab_up.REPO), ("benchb1", tmp_path), ("bench1", lab_up.REPO)]
    assert doc["against"]["revision"] == "main~1 (abc)"
    assert doc["against"]["ratio_time"] == 1.38        # 11 / 8
    assert doc["ratio_time"] == 1.25                   # 10 / 8
    assert doc["ratio_time_to_against"] == 0.91        # 10 / 11
