"""Run a drill: watch, inject, measure, restore, verify, judge.

Everything is recorded on one clock (wall time): FIB changes from netlink, session changes from
bgpd's log, uplink counters and the probe's packets. Waiting is done by watching those records,
never by sleeping a fixed time; the judgement is made afterwards from the records alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twin.checks.health import check_health
from twin.drills import measure
from twin.drills.faults.base import LinkKey
from twin.drills.faults.injector import Injector, check_tools
from twin.drills.observe.counters import SpineCounters
from twin.drills.observe.fibwatch import FibWatch
from twin.drills.observe.logwatch import LogWatch
from twin.drills.observe.probe_traffic import ProbeProcess, flow_paths, probe_hosts, probe_spec
from twin.drills.oracle import Fib, ecmp_widths, expected_fibs, mismatches
from twin.drills.schedule import Action, fault_scope, plan_actions
from twin.drills.targets import resolve
from twin.host.rundir import LabState, lab_dir, node_dir, save_state
from twin.model.drill import ActionReport, DrillReport, Scenario, Slo
from twin.model.errors import DrillError
from twin.model.plan import Plan
from twin.runtime.registry import Runtime
from twin.switch.frr_daemons import EVENT_LOG

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    flows: int = 128
    rate_hz: float = 100.0
    warmup_s: float = 1.0
    recovery_timeout_s: float = 60.0


class Drill:
    def __init__(self, runtime: Runtime, state: LabState, plan: Plan, scenario: Scenario, slo: Slo,
                 progress: Progress = lambda s: None, options: Options = Options()) -> None:
        self.runtime, self.state, self.plan = runtime, state, plan
        self.scenario, self.slo, self.progress, self.opt = scenario, slo, progress, options
        self.steps, self.actions = plan_actions(scenario)
        self.faults = [resolve(plan, s) for s in self.steps]
        check_tools(dict.fromkeys(f.kind for f in self.faults))
        self.injector = Injector(runtime, state, plan)
        self.workdir = lab_dir(state.lab) / "drill"
        self.bgp_switches = [n for n in plan.switches if n.asn is not None]
        self.baseline = expected_fibs(plan)
        self._expected: dict[frozenset[int], tuple[Fib, set[str]]] = {}
        self.checks: dict[str, bool] = {}
        self.notes: list[str] = []
        self.spec: dict[str, Any] = {}
        self.mtu_detect_ms: float | None = None
        self._active: set[int] = set()

    # -- the oracle for a set of active faults -------------------------------------------------

    def expected(self, active: frozenset[int]) -> tuple[Fib, set[str]]:
        if active not in self._expected:
            nodes, links = fault_scope([self.faults[i] for i in active])
            self._expected[active] = (expected_fibs(self.plan, nodes, links), nodes)
        return self._expected[active]

    # -- running -------------------------------------------------------------------------------

    def run(self) -> DrillReport:
        self.workdir.mkdir(parents=True, exist_ok=True)
        netns = {n.name: self.state.node(n.name).netns for n in self.bgp_switches}
        logs = {n.name: node_dir(self.state.lab, n.name) / EVENT_LOG for n in self.bgp_switches}
        names = {n.name: {str(nb.ip): nb.name for nb in n.neighbors} for n in self.bgp_switches}
        lost_leaves = {f.target for f in self.faults if f.kind == "leaf-loss"}
        spec = probe_spec(probe_hosts(self.plan, self.state, lost_leaves), self.opt.flows, self.opt.rate_hz)
        self.spec = spec
        pids = {leaf.name: pids[0] for leaf in self.plan.by_role("leaf")
                if (pids := self.runtime.node_pids(self.state, leaf.name))}
        started = time.time()
        with FibWatch(netns) as fibs:
            off = mismatches(self.baseline, fibs.snapshot())
            if off:
                raise DrillError(f"lab '{self.state.lab}' is not at its healthy baseline, so a drill would "
                                 f"measure nothing meaningful: {'; '.join(off[:3])}"
                                 f"{f' (and {len(off) - 3} more)' if len(off) > 3 else ''}; "
                                 "run 'twin verify' and bring the lab back first")
            self.logs = LogWatch(logs, names)
            self.fibs = fibs
            with SpineCounters(self.plan, pids) as counters, ProbeProcess(spec, self.workdir) as probe:
                self.progress("probe traffic running")
                self._wait(self.opt.warmup_s)
                t_before = (started, time.time())
                paths_before = flow_paths(self.plan, self.runtime, self.state, spec)
                fib_before = fibs.snapshot()
                zero = time.time()
                try:
                    during = self._execute(zero)
                except BaseException:
                    self._restore_all()
                    raise
                paths_during = during.get("paths", {})
                fib_during = during.get("fib", fib_before)
                restored, t_recovered, why = self._await_recovery()
                self._wait(self.scenario.settle_ms / 1000)
                paths_after = flow_paths(self.plan, self.runtime, self.state, spec) if restored else {}
                fib_after = fibs.snapshot()
                self.logs.poll()
                result = probe.stop()
        if restored:
            health = check_health(self.state, self.plan)
            self.checks["health_after"] = health.healthy
            if not health.healthy:
                restored = False
                why = "; ".join(f"{r.name}: {i.subject} {i.message}" for r in health.results
                                for i in r.failures[:3])
        ended = time.time()
        report = self._report(result, spec, zero, t_before, during, t_recovered, restored, why,
                              paths_before, paths_during, paths_after, fib_before, fib_during, fib_after,
                              counters.samples)
        report.cycle_s = round(ended - zero, 2)
        self._judge(report, result, t_recovered)
        self._mark(report, why)
        return report

    def _restore_all(self) -> None:
        """After an error or Ctrl-C mid-drill: take back every fault still in place, best effort."""
        for index in sorted(self._active, reverse=True):
            try:
                self.injector.apply(self.faults[index], self.steps[index], inject=False)
            except Exception as exc:  # keep restoring the others; say what could not be undone
                self.notes.append(f"could not restore {self.faults[index].kind} {self.faults[index].target}: {exc}")
        self._active.clear()

    def _wait(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Watch for `seconds` (or until the condition holds); True if the condition was met."""
        end = time.time() + seconds
        while True:
            self.logs.poll()
            if until is not None and until():
                return True
            if time.time() >= end:
                return False
            time.sleep(0.01)

    def _do(self, action: Action, active: set[int]) -> None:
        fault, step = self.faults[action.index], self.steps[action.index]
        verb = "inject" if action.inject else "restore"
        self.progress(f"{verb} {fault.kind} {fault.target}")
        action.t = time.time()
        try:
            action.how = self.injector.apply(fault, step, action.inject)
        except Exception as exc:
            if action.inject:
                raise DrillError(f"could not inject {fault.kind} on {fault.target}: {exc}") from exc
            raise DrillError(f"could not restore {fault.kind} on {fault.target}: {exc}; "
                             "the lab is left as it is for inspection") from exc
        (active.add if action.inject else active.discard)(action.index)
        self._active = set(active)
        verdict = self.injector.verify(fault, injected=action.inject)
        if verdict is not None:
            self.checks.update(verdict.checks)
            self.notes.append(verdict.note)
            if action.inject:
                self.mtu_detect_ms = verdict.detect_ms

    def _converged(self, active: frozenset[int]) -> bool:
        expected, ignore = self.expected(active)
        return not mismatches(expected, self.fibs.snapshot(), ignore)

    def _sessions_down(self, active: frozenset[int], since: float) -> bool:
        want = [s for i in active for s in self.faults[i].sessions if self.faults[i].topology_change]
        got = measure.first_events(self.logs.events, want, "down", since, time.time())
        return len(got) == len(set(want))

    def _execute(self, zero: float) -> dict[str, Any]:
        """Run every action; returns what was seen while the faults were in place."""
        active: set[int] = set()
        timed = sorted((a for a in self.actions if a.at is not None), key=lambda a: (a.at, not a.inject))
        settle = self.scenario.settle_ms / 1000
        timeout = self.plan.fabric.bgp.holdtime + 10
        during: dict[str, Any] = {}
        for action in timed:
            assert action.at is not None
            self._wait(zero + action.at - time.time())
            self._do(action, active)
        adaptive = [a for a in self.actions if a.at is None]
        if not adaptive:
            return during
        frozen = frozenset(active)
        self._wait(timeout, lambda: self._converged(frozen) and self._sessions_down(frozen, zero))
        self._wait(settle)
        during = {"window": (time.time() - settle, time.time()), "fib": self.fibs.snapshot()}
        during["paths"] = flow_paths(self.plan, self.runtime, self.state, self.spec)
        for action in reversed(adaptive):
            self._do(action, active)
        return during

    def _await_recovery(self) -> tuple[bool, float | None, str]:
        def back() -> bool:
            if not self._converged(frozenset()):
                return False
            downs = {(e.node, e.peer) for e in self.logs.events if e.state == "down"}
            last: dict[tuple[str, str], str] = {}
            for e in self.logs.events:
                last[(e.node, e.peer)] = e.state
            return all(last.get(k) == "up" for k in downs)

        if self._wait(self.opt.recovery_timeout_s, back):
            return True, time.time(), ""
        off = mismatches(self.baseline, self.fibs.snapshot())
        return False, None, (f"the fabric did not return to its baseline within {self.opt.recovery_timeout_s:.0f} s: "
                             + ("; ".join(off[:3]) if off else "BGP sessions still down"))

    # -- judging -------------------------------------------------------------------------------

    def _action_reports(self, runs: list[Any], period: float, zero: float, end: float) -> list[ActionReport]:
        done = sorted((a for a in self.actions if a.t), key=lambda a: a.t)
        history = self.fibs.history
        out = []
        active: set[int] = set()
        for k, action in enumerate(done):
            (active.add if action.inject else active.discard)(action.index)
            fault = self.faults[action.index]
            until = done[k + 1].t if k + 1 < len(done) else end
            expected, ignore = self.expected(frozenset(active))
            conv = measure.converged_at(history, expected, action.t, until, ignore)
            if action.inject:
                state, wanted = "down", list(fault.sessions) if fault.topology_change else []
            else:  # the sessions of this fault that went down while it was in place
                since = max((a.t for a in done[:k] if a.inject and a.index == action.index), default=zero)
                went = measure.first_events(self.logs.events, fault.sessions, "down", since, action.t)
                state, wanted = "up", list(went)
            seen = measure.first_events(self.logs.events, wanted, state, action.t, until)
            node_fault = bool(fault.nodes)
            others = [t for s, t in seen.items() if not (node_fault and s.node == fault.target)]
            own = [t for s, t in seen.items() if node_fault and s.node == fault.target]
            all_seen = len(seen) == len(set(wanted))
            loss, lost = measure.longest_loss(runs, period, action.t, until)
            detect = measure.ms(max(others), action.t) if others and all_seen else None
            if fault.kind == "mtu-mismatch" and action.inject:
                detect = self.mtu_detect_ms
            out.append(ActionReport(
                action="inject" if action.inject else "restore", kind=fault.kind, target=fault.target,
                t_ms=round((action.t - zero) * 1000, 1), detect_ms=detect,
                detect_target_ms=measure.ms(max(own), action.t) if own else None,
                converge_ms=measure.ms(conv, action.t), loss_ms=loss, lost_packets=lost,
                settled=conv is not None and all_seen, timed=action.timed, how=action.how))
        return out

    def _report(self, result: dict[str, Any], spec: dict[str, Any], zero: float, t_before: tuple[float, float],
                during: dict[str, Any], t_recovered: float | None, restored: bool, why: str,
                paths_before: dict[int, str | None], paths_during: dict[int, str | None],
                paths_after: dict[int, str | None], fib_before: Fib, fib_during: Fib, fib_after: Fib,
                samples: list[tuple[float, dict[str, int]]]) -> DrillReport:
        period = 1 / result["rate_hz"]
        runs = measure.loss_runs(result)
        end = result["stopped"]
        actions = self._action_reports(runs, period, zero, end)
        injects = [a for a in actions if a.action == "inject"]
        restores = [a for a in actions if a.action == "restore"]
        first = injects[0]
        last = restores[-1] if restores else None
        nodes, links = fault_scope(self.faults)
        failed_spines = {n for n in nodes if self.plan.node(n).role == "spine"}
        alive = [s for s in sorted({n.name for n in self.plan.by_role("spine")}) if s not in failed_spines]
        if "window" in during:
            a, b = during["window"]
        else:  # timed scenario: from the first injection's convergence to the next action
            a = zero + (first.t_ms + (first.converge_ms or 0)) / 1000
            b = zero + (actions[1].t_ms / 1000 if len(actions) > 1 else end - zero)
            fib_during = measure.fib_at(self.fibs.history, a)
        dist = measure.shares(samples, a, b)
        broken = self._broken_flows(spec, nodes, links, paths_before)
        moved, moved_healthy = measure.moved_flows(paths_before, paths_during, broken) if paths_during else (0, 0)
        timeline = {"delivery": measure.delivery_timeline(result, zero)}
        timeline.update({f"share:{k}": v for k, v in measure.share_timeline(samples, zero).items()})
        timeline["actions"] = [[a.t_ms, 1.0 if a.action == "inject" else 0.0] for a in actions]
        fault_names = ", ".join(f"{f.kind} {f.target}" for f in dict.fromkeys(self.faults))
        sent = sum(f["sent"] for f in result["flows"])
        received = sum(f["received"] for f in result["flows"])
        noticed = any(a.detect_ms is not None or (a.converge_ms or 0) > 0 for a in injects) or any(
            e.state == "down" for e in self.logs.events)
        report = DrillReport(
            drill=self.scenario.name, target=", ".join(dict.fromkeys(f.target for f in self.faults)),
            lab=self.state.lab, passed=False, restored=restored,
            detect_ms=first.detect_ms, detect_target_ms=first.detect_target_ms, converge_ms=first.converge_ms,
            loss_ms=max((a.loss_ms for a in injects), default=0.0),
            recovery={"detect_ms": last.detect_ms if last else None,
                      "converge_ms": last.converge_ms if last else None,
                      "loss_ms": max((a.loss_ms for a in restores), default=0.0)},
            noticed=noticed,
            paths_before=ecmp_widths(self.plan, fib_before),
            paths_during=ecmp_widths(self.plan, fib_during, exclude=nodes),
            paths_after=ecmp_widths(self.plan, fib_after),
            distribution=dist, distribution_before=measure.shares(samples, *t_before),
            distribution_after=measure.shares(samples, t_recovered, end) if t_recovered else {},
            imbalance=measure.imbalance(dist, alive), flows=len(result["flows"]), flows_moved=moved,
            flows_moved_healthy=moved_healthy,
            probe={"rate_hz_per_flow": result["rate_hz"], "sent": sent, "received": received,
                   "lost": sum(r.count for r in runs), "send_errors": result["send_errors"],
                   "reordered": sum(f["reordered"] for f in result["flows"])},
            actions=actions, sessions=list(self.logs.events), checks=dict(self.checks),
            slo=self.slo.model_dump(exclude_none=True), timeline=timeline, notes=list(self.notes))
        if not restored:
            report.notes.append(f"NOT RESTORED: {why}")
        if self.faults[0].kind == "link-gray":
            report.notes.append(self._gray_note(result, spec, paths_before, report.noticed))
        report.notes.insert(0, f"faults: {fault_names}")
        return report

    def _broken_flows(self, spec: dict[str, Any], nodes: set[str], links: set[LinkKey],
                      paths: dict[int, str | None]) -> set[int]:
        """Flows whose path before the fault crossed a failed spine or link."""
        dead_pairs = set()
        for (a, _), (b, _) in links:
            dead_pairs |= {(a, b), (b, a)}
        broken = set()
        fid = 0
        for pair in spec["pairs"]:
            for _ in pair["sports"]:
                spine = paths.get(fid)
                if spine is None or spine in nodes or (pair["src_leaf"], spine) in dead_pairs or \
                        (spine, pair["dst_leaf"]) in dead_pairs:
                    broken.add(fid)
                fid += 1
        return broken

    def _gray_note(self, result: dict[str, Any], spec: dict[str, Any], paths: dict[int, str | None],
                   noticed: bool) -> str:
        fault = self.faults[0]
        assert fault.link is not None
        ends = {fault.link.a_node, fault.link.b_node}
        crossing = set()
        fid = 0
        for pair in spec["pairs"]:
            for _ in pair["sports"]:
                spine = paths.get(fid)
                if spine in ends and (pair["src_leaf"] in ends or pair["dst_leaf"] in ends):
                    crossing.add(fid)
                fid += 1
        injected = [a.t for a in self.actions if a.inject and a.t]
        restored = [a.t for a in self.actions if not a.inject and a.t]
        start, stop = injected[0], (restored[-1] if restored else result["stopped"])
        sent = len(crossing) * (stop - start) * result["rate_hz"]
        lost = sum(r.count for r in measure.loss_runs(result) if r.flow in crossing and start <= r.t_start < stop)
        pct = 100 * lost / sent if sent else 0.0
        return (f"gray link: {len(crossing)} probe flows crossed it and lost {pct:.2f}% of their packets "
                f"({self.steps[0].loss_pct:g}% injected); the fabric "
                + ("noticed (sessions or routes changed)" if noticed else
                   "did NOT notice: BGP and BFD stayed up and every FIB kept the link, so traffic kept "
                   "being hashed onto it"))

    def _judge(self, report: DrillReport, result: dict[str, Any], t_recovered: float | None) -> None:
        v = report.violations
        slo = self.slo
        limits = {"detect_ms": report.detect_ms, "converge_ms": report.converge_ms, "loss_ms": report.loss_ms,
                  "recovery_converge_ms": report.recovery.get("converge_ms"),
                  "recovery_loss_ms": report.recovery.get("loss_ms"), "imbalance": report.imbalance,
                  "cycle_s": report.cycle_s}
        for key, value in limits.items():
            limit = getattr(slo, key)
            if limit is None:
                continue
            if value is None:
                v.append(f"{key}: not measured (limit {limit:g})")
            elif value > limit:
                v.append(f"{key}: {value:g} > {limit:g}")
        for a in report.actions:
            if a.action == "inject" and not a.timed and a.converge_ms is None:
                v.append(f"{a.action} {a.kind} {a.target} at {a.t_ms:g} ms: the FIBs never matched the "
                         "expected state before the next action")
        if not report.restored:
            v.append("the fabric was not restored to its baseline")
        if t_recovered is not None:
            post = [r for r in measure.loss_runs(result) if r.t_start >= t_recovered]
            if post:
                v.append(f"probe lost {sum(r.count for r in post)} packets after recovery")
        for spine in {f.target for f in self.faults if f.kind in ("spine-loss", "spine-silent")}:
            share = report.distribution.get(spine)
            if share is not None and share > 0.01:
                v.append(f"{spine} still carried {share:.1%} of probe traffic after convergence")
        v += [f"check failed: {name}" for name, ok in report.checks.items() if not ok]
        report.passed = not v

    def _mark(self, report: DrillReport, why: str) -> None:
        if not report.restored:
            self.state.unhealthy = f"drill {report.drill} on {report.target} could not restore the fabric: {why}"
        elif self.state.unhealthy:
            self.state.unhealthy = None
        else:
            return
        save_state(self.state)
