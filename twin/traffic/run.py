"""`twin traffic`: a collective pattern's flows through a running lab, and what a fault does to them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from twin.checks.collect_gnmi import running_configs
from twin.checks.fibwatch import Fib, FibWatch
from twin.drills.api import run_drill
from twin.drills.faults.injector import Injector, check_tools
from twin.drills.oracle import Expectation, expected_fibs, mismatches
from twin.drills.runner import Options
from twin.drills.targets import resolve as resolve_target
from twin.host.poll import wait_until
from twin.lab.running import RunningLab
from twin.model.drill import KINDS, DrillReport, Scenario, Slo, Step
from twin.model.errors import DrillError, TwinError
from twin.model.traffic import (
    CollectiveFigures,
    FailureIteration,
    Flow,
    Gpu,
    Metrics,
    PatternName,
    RoceWhatIf,
    TrafficReport,
)
from twin.runtime.registry import runtime_of
from twin.traffic import completion, metrics, patterns
from twin.traffic.collectives import DEFAULT_MESSAGE_BYTES, Schedule, schedule
from twin.traffic.confirm import confirm_paths
from twin.traffic.gpus import lab_gpus, select
from twin.traffic.links import capacities
from twin.traffic.resolve import NodeArgv, resolve
from twin.traffic.resolve import Path as FlowPath
from twin.traffic.roce import roce_what_if
from twin.traffic.seeds import SeedMode, hash_seeds

Progress = Callable[[str], None]


@dataclass
class Snapshot:
    """The pattern's flows as the fabric forwards them at one moment."""

    paths: list[FlowPath]
    metrics: Metrics


@dataclass
class Pattern:
    """A pattern on one lab: its GPUs, its flows, and how to ask the switches where they go."""

    lab: RunningLab
    name: PatternName
    qps: int
    gpus: dict[str, Gpu]
    flows: list[Flow]
    sched: Schedule
    configs: dict[str, dict[str, Any]] | None = None   # the switches' running CONFIG_DB, read once

    @classmethod
    def build(cls, lab: RunningLab, name: PatternName, qps: int, gpu_spec: str | None = None,
              pairs_file: Path | None = None, message_bytes: int = DEFAULT_MESSAGE_BYTES) -> Pattern:
        chosen = select(lab_gpus(lab.plan), gpu_spec)
        pairs = patterns.gpu_pairs(name, chosen if name != "pairs" else lab_gpus(lab.plan), pairs_file)
        involved = {g.name: g for pair in pairs for g in pair}
        flows = patterns.flows(pairs, qps)
        return cls(lab=lab, name=name, qps=qps, gpus=involved, flows=flows,
                   sched=schedule(name, flows, involved, message_bytes))

    def argv(self) -> NodeArgv:
        runtime = runtime_of(self.lab.state)
        return lambda node, cmd: runtime.exec_argv(self.lab.state, node, list(cmd))

    def snapshot(self, failed_nodes: set[str] | None = None,
                 failed_links: set[frozenset[str]] | None = None) -> Snapshot:
        paths = resolve(self.lab.plan, self.flows, self.gpus, self.argv())
        return Snapshot(paths, metrics.measure(self.lab.plan, self.flows, paths, self.gpus, failed_nodes,
                                               failed_links, self.sched))

    def roce(self, now: Snapshot) -> RoceWhatIf | None:
        """RoCE's class and incast queues on `now`'s paths, from the switches' running config (read over
        gNMI once); None when no switch's config can be read."""
        if self.configs is None:
            self.configs = running_configs(self.lab)
        if not self.configs:
            return None
        return roce_what_if(self.lab.plan, self.flows, self.gpus, now.paths, self.sched, self.configs,
                            self.lab.settings.roce.compute_dscp)

    def report(self, now: Snapshot, **extra: object) -> TrafficReport:
        m = now.metrics
        figures = {name: getattr(m, name) for name in CollectiveFigures.model_fields}
        return TrafficReport.model_validate({
            **figures, "lab": self.lab.name, "pattern": self.name, "qps": self.qps, "gpus": len(self.gpus),
            "flows": len(self.flows), "links": m.links, "mmr": m.mmr, "jfi": m.jfi,
            "idle_uplinks": m.idle_uplinks, "busbw_share": m.busbw_share, "uplinks": m.uplinks,
            "paths": {flow_key(f): p.nodes for f, p in zip(self.flows, now.paths, strict=True)},
            "flow_table": m.flow_table, **extra})

    def failure_iteration(self, before: Snapshot, during: Snapshot, outage_ms: float, nodes: set[str],
                          links: set[frozenset[str]]) -> FailureIteration:
        """The iteration the fault lands in: the sends over `before`'s paths, those crossing the fault
        standing still for `outage_ms`, then every send over `during`'s paths."""
        caps = capacities(self.lab.plan, self.gpus.values())
        outcome = completion.run(self.lab.plan, self.sched, self.flows, self.gpus, before.paths, caps,
                                 completion.Fault(outage_ms, nodes, links, during.paths))
        return FailureIteration(**dict(outcome.figures), outage_ms=outage_ms,
                                busbw_share=completion.share(outcome.figures), flow_table=outcome.rows)


def flow_key(f: Flow) -> str:
    return f"{f.src}->{f.dst}#{f.qp}:{f.sport}"


def run_traffic(lab: RunningLab, name: PatternName, qps: int, gpu_spec: str | None = None,
                pairs_file: Path | None = None, seed_mode: SeedMode = "kernel", confirm: bool = False,
                progress: Progress = lambda s: None, message_bytes: int = DEFAULT_MESSAGE_BYTES) -> TrafficReport:
    """The pattern on the fabric as it is; with `confirm`, its packets sent and counted too (under the
    same hash seeds as the resolution)."""
    pattern = Pattern.build(lab, name, qps, gpu_spec, pairs_file, message_bytes)
    with hash_seeds(lab.plan, pattern.argv(), seed_mode):
        progress(f"resolving {len(pattern.flows)} flows through the switches' forwarding")
        now = pattern.snapshot()
        progress("reading the switches' QoS and buffer config for RoCE's what-ifs")
        report = pattern.report(now, before=now.metrics, seed_mode=seed_mode, roce=pattern.roce(now))
        if confirm:
            progress("sending the flows' packets and counting them per switch port")
            report = report.model_copy(update={"confirmation": confirm_paths(lab, report)})
    return report


def run_sweep(lab: RunningLab, name: PatternName, qps_list: list[int], gpu_spec: str | None = None,
              pairs_file: Path | None = None, seed_mode: SeedMode = "kernel",
              progress: Progress = lambda s: None, message_bytes: int = DEFAULT_MESSAGE_BYTES) -> list[TrafficReport]:
    """The same pattern with each number of queue pairs per GPU pair (how many until MMR <= 1.2?)."""
    reports = []
    for qps in qps_list:
        progress(f"{qps} QP(s) per pair")
        reports.append(run_traffic(lab, name, qps, gpu_spec, pairs_file, seed_mode, message_bytes=message_bytes))
    return reports


def parse_fault(text: str) -> Step:
    """`KIND:TARGET` (`spine-loss:spine1`, `link-down:leaf1:spine1`) as a drill step."""
    kind, _, target = text.partition(":")
    if kind not in KINDS or not target:
        raise TwinError(f"--fault {text}: write KIND:TARGET with KIND one of {', '.join(KINDS)}, "
                        "e.g. spine-loss:spine1 or link-down:leaf1:spine1")
    return Step.model_validate({"kind": kind, "target": target})


def _wait_converged(fibs: FibWatch, expected: Fib, ignore: set[str], timeout_s: float) -> float:
    """Seconds until every switch's FIB is what the oracle expects; DrillError past `timeout_s`."""
    def off() -> list[str]:
        return mismatches(expected, fibs.snapshot(), ignore)

    return wait_until(lambda: not off(), timeout_s, 0.02, lambda: DrillError(
        f"the fabric did not converge within {timeout_s:.0f} s: {'; '.join(off()[:3])}"))


def run_with_fault(lab: RunningLab, name: PatternName, qps: int, fault_text: str, gpu_spec: str | None = None,
                   pairs_file: Path | None = None, iteration_ms: float = 1000.0, timeout_s: float = 60.0,
                   seed_mode: SeedMode = "kernel", progress: Progress = lambda s: None,
                   message_bytes: int = DEFAULT_MESSAGE_BYTES) -> TrafficReport:
    """The pattern before the fault, during it (once every FIB has converged) and after its restore."""
    pattern = Pattern.build(lab, name, qps, gpu_spec, pairs_file, message_bytes)
    with hash_seeds(lab.plan, pattern.argv(), seed_mode):
        report = _with_fault(pattern, fault_text, iteration_ms, timeout_s, progress)
    return report.model_copy(update={"seed_mode": seed_mode})


def _with_fault(pattern: Pattern, fault_text: str, iteration_ms: float, timeout_s: float,
                progress: Progress) -> TrafficReport:
    lab = pattern.lab
    step = parse_fault(fault_text)
    fault = resolve_target(lab.plan, step)
    # what the fault takes out of the fabric (a gray link or an MTU change takes nothing out)
    nodes = set(fault.nodes) if fault.topology_change else set()
    links = {frozenset((a[0], b[0])) for a, b in fault.links} if fault.topology_change else set()
    check_tools([step.kind])
    expected, ignore = Expectation(lab.plan, [fault])(frozenset({0}))
    injector = Injector(runtime_of(lab.state), lab)
    netns = {n.name: lab.state.node(n.name).netns for n in lab.plan.switches if n.asn is not None}
    with FibWatch(netns) as fibs:
        _wait_converged(fibs, expected_fibs(lab.plan), set(), timeout_s)
        progress(f"before: resolving {len(pattern.flows)} flows")
        before = pattern.snapshot()
        roce = pattern.roce(before)   # read while every switch is up
        progress(f"injecting {step.kind} on {fault.target}")
        restored = False
        try:
            injector.apply(fault, step, True)  # inside: an inject cut short by a signal is taken back too
            outage = _wait_converged(fibs, expected, ignore, timeout_s)
            progress(f"during: converged after {outage * 1000:.0f} ms, resolving again")
            during = pattern.snapshot(nodes, links)
            progress(f"restoring {step.kind} on {fault.target}")
            injector.apply(fault, step, False)
            restored = True
            _wait_converged(fibs, expected_fibs(lab.plan), set(), timeout_s)
        finally:
            if not restored:
                injector.apply(fault, step, False)
        after = pattern.snapshot()
    report = fault_report(pattern, before, during, after, f"{step.kind}:{fault.target}", nodes, links,
                          outage * 1000, iteration_ms)
    return report.model_copy(update={"roce": roce})


def fault_report(pattern: Pattern, before: Snapshot, during: Snapshot | None, after: Snapshot | None, fault: str,
                 nodes: set[str], links: set[frozenset[str]], outage_ms: float | None,
                 iteration_ms: float) -> TrafficReport:
    """The pattern's report around a fault: its figures before, during and after, the iteration the
    fault lands in (the outage, as reported, charged to the flows that crossed it), the blast radius and
    JCT."""
    outage = round(outage_ms, 1) if outage_ms is not None else None
    extra: dict[str, object] = {"before": before.metrics, "fault": fault, "iteration_ms": iteration_ms,
                                "outage_ms": outage, "failed_nodes": sorted(nodes),
                                "failed_links": sorted(tuple(sorted(x)) for x in links)}
    if during is not None:
        extra["during"] = during.metrics
        failure = None
        if outage is not None:
            failure = pattern.failure_iteration(before, during, outage, nodes, links)
            extra["failure_iteration"] = failure
            extra["jct_extra_ms"], extra["jct_overhead"] = metrics.jct(
                before.metrics.completion_ms, failure.completion_ms, iteration_ms)
        extra["blast_radius"] = metrics.blast_radius(before.metrics, during.metrics, pattern.flows, pattern.gpus,
                                                     before.paths, during.paths, nodes, links, failure=failure)
    if after is not None:
        extra["after"] = after.metrics
    return pattern.report(before, **extra)


def drill_with_traffic(lab_name: str, scenario: Scenario, name: PatternName, qps: int, gpu_spec: str | None = None,
                       pairs_file: Path | None = None, seed_mode: SeedMode = "kernel", iteration_ms: float = 1000.0,
                       progress: Progress = lambda s: None, options: Options | None = None,
                       slo: Slo | None = None, message_bytes: int = DEFAULT_MESSAGE_BYTES) -> DrillReport:
    """`twin drill ... --traffic PATTERN`: the drill as it runs, with the pattern resolved when the drill
    is at its baseline, while its faults are in place and converged, and after the restore. The outage
    the flows crossing the fault stand still for is the drill's measured data-plane loss (the probe's
    longest gap)."""
    lab = RunningLab.load(lab_name)
    pattern = Pattern.build(lab, name, qps, gpu_spec, pairs_file, message_bytes)
    scope = [f for f in (resolve_target(lab.plan, s) for s in scenario.steps) if f.topology_change]
    nodes = {n for f in scope for n in f.nodes}
    links = {frozenset((a[0], b[0])) for f in scope for a, b in f.links}
    snaps: dict[str, Snapshot] = {}

    def at(moment: str) -> None:
        snaps[moment] = pattern.snapshot(nodes, links) if moment == "during" else pattern.snapshot()

    with hash_seeds(lab.plan, pattern.argv(), seed_mode):
        report = run_drill(lab_name, scenario, progress, replace(options or Options(), at_moment=at), slo)
    if "before" not in snaps:
        return report
    traffic = fault_report(pattern, snaps["before"], snaps.get("during"), snaps.get("after"),
                           f"{report.drill}:{report.target}", nodes, links, report.loss_ms, iteration_ms)
    return report.model_copy(update={"traffic": traffic.model_copy(update={"seed_mode": seed_mode})})
