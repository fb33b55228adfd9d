"""A traffic run against a lab's bounds (`traffic:` in the lab file), as one CheckResult (pure)."""

from __future__ import annotations

from twin.model.results import CheckResult, ItemResult, summarize
from twin.model.traffic import TrafficReport, TrafficSlo


def judge(report: TrafficReport, slo: TrafficSlo) -> CheckResult:
    subject = f"{report.pattern} {report.qps}qp" + (f" {report.fault}" if report.fault else "")
    items: list[ItemResult] = []

    def bound(ok: bool, what: str) -> None:
        items.append(ItemResult(subject=subject, status="success" if ok else "failure", message=what))

    if slo.mmr_max is not None:
        bound(report.mmr is None or report.mmr <= slo.mmr_max, f"MMR {report.mmr} (at most {slo.mmr_max})")
    if slo.jfi_min is not None:
        bound(report.jfi is None or report.jfi >= slo.jfi_min, f"JFI {report.jfi} (at least {slo.jfi_min})")
    if slo.busbw_min is not None:
        bound(report.busbw_share >= slo.busbw_min,
              f"bus bandwidth {report.busbw_share:.0%} of line rate (at least {slo.busbw_min:.0%})")
    if slo.busbw_drop_max is not None and report.during is not None:
        drop = round(report.busbw_share - report.during.busbw_share, 4)
        bound(drop <= slo.busbw_drop_max,
              f"bus bandwidth drops by {drop:.0%} during {report.fault} (at most {slo.busbw_drop_max:.0%})")
    if report.before is not None and report.before.resolved < report.flows:
        bound(False, f"{report.flows - report.before.resolved} of {report.flows} flows found no path")
    if not items:
        items.append(ItemResult(subject=subject, status="success", message="no bounds set; measured only"))
    figures = {"mmr": report.mmr or 0.0, "jfi": report.jfi or 0.0, "busbw_share": report.busbw_share,
               "idle_uplinks": float(report.idle_uplinks)}
    if report.during is not None:
        figures["busbw_share_during"] = report.during.busbw_share
    return summarize(f"traffic {subject}", f"collective traffic {report.pattern} within the lab's bounds", items,
                     figures)
