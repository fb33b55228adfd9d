"""Run a drill on a running lab by name: what `twin drill` and `twin ci` call."""

from __future__ import annotations

import fcntl

from twin.drills.runner import Drill, Options, Progress
from twin.drills.slo import slo_for
from twin.host.rundir import lab_dir
from twin.lab.running import RunningLab
from twin.model.drill import DrillReport, Scenario, Slo
from twin.model.errors import TwinError
from twin.model.results import CheckResult, ItemResult, summarize
from twin.runtime.registry import runtime_of

DRILL_FIGURES = ("detect_ms", "detect_target_ms", "converge_ms", "loss_ms", "imbalance", "cycle_s")


def run_drill(lab: str, scenario: Scenario, progress: Progress = lambda s: None,
              options: Options | None = None, slo: Slo | None = None) -> DrillReport:
    """Run one drill; `slo` (a lab drill's own limits) goes over the lab's limits for the kind."""
    running = RunningLab.load(lab)
    kind = scenario.steps[0].kind
    limits = slo_for(running.settings, kind if len(scenario.steps) == 1 else "scenario", scenario).merged(slo)
    drill = Drill(runtime_of(running.state), running, scenario, limits, progress, options or Options())
    with open(lab_dir(lab) / "drill.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TwinError(f"another drill is running on lab '{lab}'; wait for it to finish") from None
        return drill.run()


def as_check_result(report: DrillReport) -> CheckResult:
    """A drill in the one result model: its violations as failed items, its figures as measurements."""
    items = [ItemResult(subject=report.target, status="failure", message=v) for v in report.violations] or \
        [ItemResult(subject=report.target, status="success", message="met its SLOs and restored the fabric")]
    figures = {k: float(v) for k in DRILL_FIGURES if isinstance(v := getattr(report, k), int | float)}
    figures.update({f"recovery_{k}": float(v) for k, v in report.recovery.items() if v is not None})
    return summarize(f"drill {report.drill} {report.target}", f"failure drill {report.drill}", items, figures)
