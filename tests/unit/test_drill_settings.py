"""Scenario files, lab SLOs and drill lists: validation with file, line and fix; SLO merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.drills.models import Scenario, Slo, Step
from twin.drills.runner import GRAY_HOLD_MS, plan_actions
from twin.drills.settings import DrillSettings, load_scenario, single
from twin.errors import PlanError
from twin.lab import load_lab

REPO = Path(__file__).resolve().parents[2]


def test_shipped_scenarios_and_default_lab_load() -> None:
    lab = load_lab(REPO / "labs/default.yaml")
    kinds = [d.kind or Path(d.scenario or "").name for d in lab.drills.drills]
    assert kinds == ["spine-loss", "spine-silent", "link-down", "spine-then-link.yaml"]
    for d in lab.drills.drills:
        if d.scenario:
            assert Path(d.scenario).is_absolute()
            assert load_scenario(Path(d.scenario)).steps
    assert lab.drills.slo_for("spine-loss").loss_ms == 200
    assert lab.drills.slo_for("spine-loss").cycle_s == 20


def test_slo_merging_lab_over_defaults_over_nothing() -> None:
    settings = DrillSettings(slo={"default": Slo(cycle_s=30), "link-down": Slo(loss_ms=50)})
    slo = settings.slo_for("link-down")
    assert (slo.loss_ms, slo.cycle_s) == (50, 30)
    scenario = Scenario(name="x", steps=[Step(kind="link-down")], slo=Slo(loss_ms=80))
    assert settings.slo_for("link-down", scenario).loss_ms == 80
    assert DrillSettings().slo_for("link-gray").loss_ms is None


def test_unknown_slo_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="'spine-los' is not a drill kind"):
        DrillSettings(slo={"spine-los": Slo(loss_ms=1)})


def test_scenario_errors_name_file_line_and_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("name: bad\nsteps:\n  - kind: spine-los\n    target: spine1\n  - kind: link-flap\n    flaps: 0\n")
    with pytest.raises(PlanError) as err:
        load_scenario(f)
    text = str(err.value)
    assert f"{f}:3: steps.0.kind" in text
    assert f"{f}:6: steps.1.flaps" in text


def test_lab_drill_needs_kind_or_scenario(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text((REPO / "tests/integration/data/mini.yaml").read_text())
    lab = tmp_path / "lab.yaml"
    lab.write_text("name: x\ntopology: t.yaml\ndrills:\n  - target: spine1\n  - scenario: nope.yaml\n")
    with pytest.raises(PlanError) as err:
        load_lab(lab)
    text = str(err.value)
    assert f"{lab}:4: drills.0: a drill needs exactly one of 'kind' or 'scenario'" in text
    assert "drills.1.scenario: scenario file" in text and "does not exist" in text


def test_flaps_expand_into_timed_down_up_pairs() -> None:
    steps, actions = plan_actions(Scenario(name="f", steps=[
        Step(kind="link-flap", flaps=3, period_ms=2000, hold_ms=500)]))
    assert len(steps) == 3
    assert [(a.at, a.inject) for a in actions] == [(0.0, True), (0.5, False), (2.0, True), (2.5, False),
                                                   (4.0, True), (4.5, False)]
    assert all(a.timed for a in actions)


def test_single_faults_wait_for_the_fabric_and_gray_is_held() -> None:
    _, actions = plan_actions(single("spine-loss", "spine1"))
    assert [(a.at, a.inject, a.timed) for a in actions] == [(0.0, True, False), (None, False, False)]
    _, actions = plan_actions(single("link-gray", None, loss_pct=10))
    assert actions[1].at == GRAY_HOLD_MS / 1000
