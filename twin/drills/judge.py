"""A drill's verdict: its measurements against its SLOs and the conditions every drill must meet.
Pure: reads the assembled report and two facts of the observations, does no I/O."""

from __future__ import annotations

from collections.abc import Iterable

from twin.drills.faults.registry import fault_kind
from twin.drills.observations import Observations
from twin.model.drill import DrillReport, Slo


def figures(report: DrillReport) -> dict[str, float | None]:
    """The report's value of every figure an SLO can limit, by the Slo field's name."""
    return {"detect_ms": report.detect_ms, "converge_ms": report.converge_ms, "loss_ms": report.loss_ms,
            "recovery_converge_ms": report.recovery.get("converge_ms"),
            "recovery_loss_ms": report.recovery.get("loss_ms"), "imbalance": report.imbalance,
            "cycle_s": report.cycle_s}


def violations(report: DrillReport, slo: Slo, lost_after_recovery: int = 0,
               spines_out: Iterable[str] = ()) -> list[str]:
    """Every way the drill fell short, in words; none: it passed.

    `lost_after_recovery`: probe packets lost in runs that began once the fabric was back;
    `spines_out`: spines a fault took out, which must then have carried no more than 1 % of the traffic.
    """
    v = []
    for key, value in figures(report).items():
        limit = getattr(slo, key)
        if limit is None:
            continue
        if value is None:
            v.append(f"{key}: not measured (limit {limit:g})")
        elif value > limit:
            v.append(f"{key}: {value:g} > {limit:g}")
    for a in report.actions:
        if a.action == "inject" and not a.timed and a.converge_ms is None:
            off = f": {'; '.join(a.unmatched)}" if a.unmatched else ""
            v.append(f"{a.action} {a.kind} {a.target} at {a.t_ms:g} ms: the FIBs never matched the "
                     f"expected state before the next action{off}")
    if not report.restored:
        v.append("the fabric was not restored to its baseline")
    if lost_after_recovery:
        v.append(f"probe lost {lost_after_recovery} packets after recovery")
    for spine in set(spines_out):
        share = report.distribution.get(spine)
        if share is not None and share > 0.01:
            v.append(f"{spine} still carried {share:.1%} of probe traffic after convergence")
    v += [f"check failed: {name}" for name, ok in report.checks.items() if not ok]
    return v


def judge(report: DrillReport, slo: Slo, obs: Observations) -> DrillReport:
    """Fill in the report's violations and verdict from the observations."""
    lost = 0
    if obs.recovered_at is not None:
        lost = sum(r.count for r in obs.probe.loss_runs() if r.t_start >= obs.recovered_at)
    spines = {f.target for f in obs.faults if fault_kind(f.kind).role == "spine"}
    report.violations += violations(report, slo, lost, spines)
    report.passed = not report.violations
    return report
