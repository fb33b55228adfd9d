"""The verdict of a drill from its report and SLOs: a table of reports and the violations they earn."""

from __future__ import annotations

from typing import Any

import pytest

from twin.drills.judge import figures, violations
from twin.model.drill import ActionReport, DrillReport, Slo


def report(**changes: Any) -> DrillReport:
    """A spine-loss that met every limit below; `changes` spoil it."""
    base: dict[str, Any] = dict(
        drill="spine-loss", target="spine1", lab="t", passed=False, restored=True, detect_ms=12.0,
        converge_ms=80.0, loss_ms=40.0, recovery={"detect_ms": 700.0, "converge_ms": 900.0, "loss_ms": 0.0},
        distribution={"spine1": 0.0, "spine2": 1.0}, imbalance=1.0, cycle_s=8.0,
        actions=[ActionReport(action="inject", kind="spine-loss", target="spine1", t_ms=0.4, converge_ms=80.0),
                 ActionReport(action="restore", kind="spine-loss", target="spine1", t_ms=2100.0,
                              converge_ms=900.0)],
        checks={"health_after": True})
    return DrillReport.model_validate({**base, **changes})


SLO = Slo(detect_ms=1000, converge_ms=500, loss_ms=200, recovery_converge_ms=5000, recovery_loss_ms=100,
          imbalance=1.5, cycle_s=20)
UNTIMED_NEVER = [ActionReport(action="inject", kind="link-down", target="leaf1:Ethernet0", t_ms=1.0)]
UNMATCHED = [ActionReport(action="inject", kind="spine-loss", target="spine1", t_ms=1.0,
                          unmatched=["leaf1 10.1.4.2/32: has [], expected ['10.0.0.66']"])]


@pytest.mark.parametrize(("changes", "slo", "lost_after", "spines_out", "expected"), [
    ({}, SLO, 0, ["spine1"], []),
    ({}, Slo(), 0, [], []),
    ({"loss_ms": 250.0}, SLO, 0, [], ["loss_ms: 250 > 200"]),
    ({"detect_ms": None}, SLO, 0, [], ["detect_ms: not measured (limit 1000)"]),
    ({"detect_ms": None}, Slo(loss_ms=200), 0, [], []),
    ({"recovery": {"converge_ms": None, "loss_ms": 150.0}}, SLO, 0, [],
     ["recovery_converge_ms: not measured (limit 5000)", "recovery_loss_ms: 150 > 100"]),
    ({"imbalance": 1.8, "cycle_s": 31.5}, SLO, 0, [], ["imbalance: 1.8 > 1.5", "cycle_s: 31.5 > 20"]),
    ({"actions": UNTIMED_NEVER}, Slo(), 0, [],
     ["inject link-down leaf1:Ethernet0 at 1 ms: the FIBs never matched the expected state before the next action"]),
    ({"actions": UNMATCHED}, Slo(), 0, [],
     ["inject spine-loss spine1 at 1 ms: the FIBs never matched the expected state before the next action: "
      "leaf1 10.1.4.2/32: has [], expected ['10.0.0.66']"]),
    ({"restored": False}, Slo(), 0, [], ["the fabric was not restored to its baseline"]),
    ({}, Slo(), 7, [], ["probe lost 7 packets after recovery"]),
    ({"distribution": {"spine1": 0.2, "spine2": 0.8}}, Slo(), 0, ["spine1"],
     ["spine1 still carried 20.0% of probe traffic after convergence"]),
    ({"distribution": {"spine1": 0.01, "spine2": 0.99}}, Slo(), 0, ["spine1"], []),
    ({"checks": {"health_after": False, "mtu_check_caught": True}}, Slo(), 0, [], ["check failed: health_after"]),
])
def test_violations(changes: dict[str, Any], slo: Slo, lost_after: int, spines_out: list[str],
                    expected: list[str]) -> None:
    assert violations(report(**changes), slo, lost_after, spines_out) == expected


def test_every_slo_limit_has_a_figure() -> None:
    assert set(figures(report())) == set(Slo.model_fields)
