"""`twin ci`: validate -> up -> push -> verify -> drills -> traffic -> down, as one list of results.

Every stage becomes CheckResults (the one result model), so the JUnit XML has a testsuite per
check and drill with a testcase per node it judged (twin.report.junit), and the Markdown summary
reads the same list. The lab is torn down
whatever happens, including Ctrl-C.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

from twin.checks.catalog import verify_checks
from twin.checks.collect_gnmi import collect_gnmi, running_configs
from twin.checks.health import evaluate
from twin.checks.observed_change import observe_change
from twin.drills.api import as_check_result, run_drill
from twin.drills.slo import scenario_of
from twin.flows.bringup import bring_up
from twin.flows.push import push_observed
from twin.gnmi.push import PushResult
from twin.lab.running import RunningLab
from twin.model.findings import Finding
from twin.model.lab import Lab
from twin.model.results import CheckResult, CiReport, Health, ItemResult, summarize
from twin.model.traffic import LabTraffic, TrafficReport
from twin.runtime.registry import down_lab
from twin.stages.lab_file import load_lab
from twin.stages.validate.api import validate_folder
from twin.traffic.judge import judge as judge_traffic
from twin.traffic.run import run_traffic, run_with_fault

CATEGORIES = ("yang", "schema", "bgp", "addressing", "ecmp", "mtu", "qos", "surface")


def validation_results(findings: list[Finding], yang_skipped: str = "") -> list[CheckResult]:
    out = []
    for cat in CATEGORIES:
        if cat == "yang" and yang_skipped:
            out.append(CheckResult(name="validate yang", description=yang_skipped, status="skipped"))
            continue
        mine = [f for f in findings if f.check == cat]
        items = [ItemResult(subject=f"{f.file}: {f.where}", status="failure", message=f"{f.message}; {f.fix}")
                 for f in mine] or [ItemResult(subject="fabric", status="success", message="every switch's config")]
        out.append(summarize(f"validate {cat}", f"static check: {cat}", items))
    return out


def push_result(results: list[PushResult]) -> CheckResult:
    items = [ItemResult(subject=r.switch, status="success" if r.ok else "failure",
                        message=(f"+{len(r.added)} -{len(r.removed)} ~{len(r.changed)} keys" if r.ok else r.error))
             for r in results]
    return summarize("push", "every switch accepted its config over gNMI", items)


def run_ci(lab_path: Path, configs: Path | None, name: str | None = None, runtime: str | None = None,
           progress: Callable[[str], None] = lambda s: None, image: str | None = None,
           templates: Path | None = None) -> CiReport:
    lab: Lab = load_lab(lab_path)
    scenarios = [(scenario_of(d), d.slo) for d in lab.drills.drills]  # bad scenario files fail before anything runs
    report = CiReport(lab=str(lab_path), name=name or f"ci{uuid.uuid4().hex[:6]}", passed=False)
    start = time.monotonic()

    def stop(stage: str) -> CiReport:
        report.stopped_at = stage
        report.seconds = round(time.monotonic() - start, 2)
        return report

    if configs is not None:
        progress("validate: static checks")
        notes: list[str] = []
        _, findings = validate_folder(configs, lab.roce, notes=notes, accepted=lab.drills.accept_not_emulated)
        report.results += validation_results(findings, yang_skipped="; ".join(notes))
        if findings:
            return stop("validate")
    try:
        progress(f"up: bringing up lab {report.name}")
        running, health = bring_up(lab, report.name, runtime, lambda s, d, t: progress(f"up: {s}"),
                                 lambda h: None, image=image, templates=templates)
        report.results.append(_up_result(health))
        if not health.healthy:
            return stop("up")
        if configs is not None:
            progress("push: configs over gNMI, until they have taken effect")
            pushed, observed = push_observed(running, configs)
            report.results.append(push_result(pushed))
            report.settles["push"] = observed.settle
            report.effects = [e for e in observed.effects if e.fields or not e.no_effect]
            if not all(r.ok for r in pushed):
                return stop("push")
        else:  # judged once every switch's routes and sessions held still for a while, as after a push
            report.settles["up"] = observe_change(running, lambda: None, []).settle
        progress("verify: checks over gNMI")
        checks = verify_checks(lab.plan, running_configs(running), lab.drills.accept_not_emulated,
                               lab.roce.compute_dscp)
        verified = evaluate(lab.plan, checks, collect_gnmi(running, checks))
        report.results += verified.results
        if not verified.healthy:
            return stop("verify")
        for scenario, slo in scenarios:
            progress(f"drill: {scenario.name}")
            drill = run_drill(report.name, scenario, _prefixed(progress, f"drill {scenario.name}"), slo=slo)
            report.drills.append(drill)
            report.results.append(as_check_result(drill))
            if not drill.restored:
                return stop("drills")
        for wanted in lab.traffic:
            progress(f"traffic: {wanted.pattern}" + (f" with {wanted.fault}" if wanted.fault else ""))
            traffic = _traffic(running, wanted)
            report.traffic.append(traffic)
            report.results.append(judge_traffic(traffic, wanted.slo))
        report.passed = all(r.status in ("success", "skipped") for r in report.results)
        return stop("" if report.passed else "drills")
    finally:
        progress(f"down: removing lab {report.name}")
        down_lab(report.name)


def _traffic(running: RunningLab, wanted: LabTraffic) -> TrafficReport:
    pairs = Path(wanted.pairs) if wanted.pairs else None
    if wanted.fault:
        return run_with_fault(running, wanted.pattern, wanted.qps, wanted.fault, pairs_file=pairs)
    return run_traffic(running, wanted.pattern, wanted.qps, pairs_file=pairs)


def _prefixed(progress: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    return lambda step: progress(f"{prefix}: {step}")


def _up_result(health: Health) -> CheckResult:
    items = [ItemResult(subject=r.name, status="success" if r.status in ("success", "skipped") else "failure",
                        message=r.description) for r in health.results]
    return summarize("up", "the lab came up healthy", items, {"seconds_to_healthy": round(health.seconds, 2)})
