"""Scenario files, lab SLOs and drill lists: validation with file, line and fix; SLO merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.drills.faults.link_gray import GRAY_HOLD_MS
from twin.drills.schedule import plan_actions
from twin.drills.slo import single, slo_for
from twin.model.drill import KINDS, Scenario, Slo, Step
from twin.model.errors import PlanError
from twin.model.lab import DrillSettings
from twin.stages.lab_file import load_lab
from twin.stages.load.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]


def test_shipped_scenarios_and_default_lab_load() -> None:
    lab = load_lab(REPO / "labs/default.yaml")
    kinds = [d.kind or Path(d.scenario or "").name for d in lab.drills.drills]
    assert kinds == ["spine-loss", "spine-silent", "link-down", "spine-then-link.yaml"]
    for d in lab.drills.drills:
        if d.scenario:
            assert Path(d.scenario).is_absolute()
            assert load_scenario(Path(d.scenario)).steps
    assert slo_for(lab.drills, "spine-loss").loss_ms == 200
    assert slo_for(lab.drills, "spine-loss").cycle_s == 20


def test_slo_merging_lab_over_defaults_over_nothing() -> None:
    settings = DrillSettings(slo={"default": Slo(cycle_s=30), "link-down": Slo(loss_ms=50)})
    slo = slo_for(settings, "link-down")
    assert (slo.loss_ms, slo.cycle_s) == (50, 30)
    scenario = Scenario(name="x", steps=[Step(kind="link-down")], slo=Slo(loss_ms=80))
    assert slo_for(settings, "link-down", scenario).loss_ms == 80
    assert slo_for(DrillSettings(), "link-gray").loss_ms is None


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


# -- default cycle bounds a drill's own parameters can meet -----------------------------------------

LARGE = {"flaps": 100, "period_ms": 5000, "hold_ms": 4000, "at_ms": 30000}


def _min_duration_s(scenario: Scenario) -> float:
    """The least a drill of `scenario` takes, from the runner's own schedule (plan_actions): its last
    timed action, then the settle wait after recovery (and one before an untimed fault's restore)."""
    _, actions = plan_actions(scenario)
    timed = [a.at for a in actions if a.at is not None]
    untimed = any(a.at is None for a in actions)
    return max(timed, default=0.0) + (2 if untimed else 1) * scenario.settle_ms / 1000


def _settings() -> list[DrillSettings]:
    return [DrillSettings(), load_lab(REPO / "labs/default.yaml").drills, load_lab(REPO / "labs/gate.yaml").drills]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params", [{}, LARGE, {"flaps": 20, "period_ms": 1500}, {"settle_ms": 15000}],
                         ids=["defaults", "large", "20-flaps-1.5s", "long-settle"])
def test_default_cycle_bound_exceeds_the_drills_own_duration(kind: str, params: dict[str, float]) -> None:
    step = {k: v for k, v in params.items() if k != "settle_ms"}
    scenario = Scenario(name=kind, steps=[Step.model_validate({"kind": kind, **step})],
                        settle_ms=params.get("settle_ms", 1000))
    least = _min_duration_s(scenario)
    for settings in _settings():
        cycle = slo_for(settings, kind, scenario).cycle_s
        if cycle is not None:
            # what remains is for detecting, converging, recovering and verifying: at least the
            # allowance a single fault has (20 s for one fault held until converged, minus its 2 s)
            assert cycle - least >= 18, (kind, params, cycle, least)


def test_twenty_flaps_get_their_schedule_on_top_of_the_labs_default() -> None:
    lab = load_lab(REPO / "labs/default.yaml").drills
    flaps = single("link-flap", "leaf1:spine1", flaps=20, period_ms=1500)
    # last restore at 19 x 1.5 s + 0.75 s hold, then 1 s settle: 30.25 s of its own, 28.25 s beyond a single fault
    assert slo_for(lab, "link-flap", flaps).cycle_s == pytest.approx(20 + 28.25)
    assert slo_for(lab, "link-flap").cycle_s == 20   # without the scenario: the lab's number as written


def test_scenario_offsets_count_and_explicit_limits_stay_as_written() -> None:
    scenario = load_scenario(REPO / "labs/scenarios/spine-then-link.yaml")   # second fault 2 s in
    lab = load_lab(REPO / "labs/default.yaml").drills
    assert slo_for(lab, "scenario", scenario).cycle_s == pytest.approx(22)
    settings = DrillSettings(slo={"default": Slo(cycle_s=20), "link-flap": Slo(cycle_s=25)})
    assert slo_for(settings, "link-flap", single("link-flap", None, flaps=20, period_ms=1500)).cycle_s == 25
    pinned = Scenario(name="p", steps=[Step(kind="link-flap", flaps=20, period_ms=1500)], slo=Slo(cycle_s=35))
    assert slo_for(DrillSettings(slo={"default": Slo(cycle_s=20)}), "link-flap", pinned).cycle_s == 35
