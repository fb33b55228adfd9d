"""Run a drill: watch, inject, restore, verify; then assemble the report and judge it.

Everything is recorded on one clock (wall time): FIB changes from netlink, session changes from
bgpd's log, uplink counters and the probe's packets (drills/observe/). Waiting is done by watching
those records, never by sleeping a fixed time. What was recorded becomes one `Observations`; the
report is assembled (assemble.py) and judged (judge.py) from it alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from twin.checks.fibwatch import FibWatch
from twin.checks.health import check_health
from twin.drills import measure, timeline
from twin.drills.assemble import assemble
from twin.drills.faults.injector import Injector, check_tools
from twin.drills.faults.registry import fault_kind
from twin.drills.judge import judge
from twin.drills.lab_health import record_lab_health, record_unrestored
from twin.drills.observations import During, Observations, ProbeSpec
from twin.drills.observe.counters import SpineCounters
from twin.drills.observe.logwatch import LogWatch
from twin.drills.observe.probe_traffic import ProbeProcess, flow_paths, probe_hosts, probe_spec
from twin.drills.oracle import Expectation, expected_fibs, mismatches
from twin.drills.schedule import Action, plan_actions
from twin.drills.targets import resolve
from twin.host.poll import poll_until
from twin.host.rundir import lab_dir, node_dir
from twin.lab import events
from twin.lab.running import RunningLab
from twin.model.drill import DrillReport, Scenario, Slo
from twin.model.errors import DrillError
from twin.model.results import Health
from twin.runtime.registry import Runtime
from twin.switch.frr.frr_daemons import EVENT_LOG

Progress = Callable[[str], None]
# Told "before" (probe running, fabric at baseline), "during" (the untimed faults in place and the fabric
# converged) and "after" (restored and settled): another layer's snapshot (twin traffic's flows).
Moment = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    flows: int = 128
    rate_hz: float = 100.0
    warmup_s: float = 1.0
    recovery_timeout_s: float = 60.0
    at_moment: Moment | None = None


class Drill:
    """One drill on a running lab: `run` executes the schedule while the observers record, restores
    whatever is still in place after an error, and returns the judged report."""

    _run = ""   # this run's id on the lab's event log (timeline.run_id), set when the run starts

    def __init__(self, runtime: Runtime, lab: RunningLab, scenario: Scenario, slo: Slo,
                 progress: Progress = lambda s: None, options: Options = Options()) -> None:
        self.runtime, self.lab, self.state, self.plan = runtime, lab, lab.state, lab.plan
        state, plan = lab.state, lab.plan
        self.scenario, self.slo, self.progress, self.opt = scenario, slo, progress, options
        self.steps, self.actions = plan_actions(scenario)
        self.faults = [resolve(plan, s) for s in self.steps]
        check_tools(dict.fromkeys(f.kind for f in self.faults))
        self.injector = Injector(runtime, lab)
        self.workdir = lab_dir(state.lab) / "drill"
        self.bgp_switches = [n for n in plan.switches if n.asn is not None]
        self.baseline = expected_fibs(plan)
        self.expected = Expectation(plan, self.faults)
        self.checks: dict[str, bool] = {}
        self.notes: list[str] = []
        self.figures: dict[str, float] = {}
        self.detect_by_check: dict[int, float | None] = {}
        self.spec: ProbeSpec | None = None
        self._active: set[int] = set()
        self._injecting: set[int] = set()

    # -- running -------------------------------------------------------------------------------

    def run(self) -> DrillReport:
        obs = self.observe()
        report = judge(assemble(self.plan, self.scenario.name, self.state.lab, self.slo, obs, self.expected),
                       self.slo, obs)
        record_lab_health(self.state, report, obs.why)
        events.record(self.state.lab, timeline.judged_events(report, obs.zero, self._run))
        return report

    def observe(self) -> Observations:
        """Run the drill with every observer recording; what they recorded."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        netns = {n.name: self.state.node(n.name).netns for n in self.bgp_switches}
        logs = {n.name: node_dir(self.state.lab, n.name) / EVENT_LOG for n in self.bgp_switches}
        names = {n.name: {str(nb.ip): nb.name for nb in n.neighbors} for n in self.bgp_switches}
        lost_leaves = {f.target for f in self.faults if f.target in f.nodes and fault_kind(f.kind).role == "leaf"}
        spec = probe_spec(probe_hosts(self.plan, self.state, lost_leaves), self.opt.flows, self.opt.rate_hz)
        self.spec = spec
        pids = {leaf.name: pids[0] for leaf in self.plan.by_role("leaf")
                if (pids := self.runtime.node_pids(self.state, leaf.name))}
        unhealthy = _broken(check_health(self.lab))
        if unhealthy:
            more = f" (and {len(unhealthy) - 5} more)" if len(unhealthy) > 5 else ""
            raise DrillError(f"lab '{self.state.lab}' is not healthy, so a drill would measure a fault on top of "
                             f"another: {'; '.join(unhealthy[:5])}{more}; run 'twin verify' and bring the lab "
                             "back first")
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
                before = (started, time.time())
                self._moment("before")
                paths_before = flow_paths(self.plan, self.runtime, self.state, spec)
                fib_before = fibs.snapshot()
                zero = time.time()
                self._run = timeline.run_id(self.scenario.name, zero)
                try:
                    during = self._execute(zero)
                except BaseException as exc:
                    self._cut_short(exc)
                    raise
                restored, recovered_at, why = self._await_recovery()
                self._wait(self.scenario.settle_ms / 1000)
                paths_after = flow_paths(self.plan, self.runtime, self.state, spec) if restored else {}
                if restored:
                    self._moment("after")
                fib_after = fibs.snapshot()
                self.logs.poll()
                result = probe.stop()
        if restored:
            health = check_health(self.lab)
            self.checks["health_after"] = health.healthy
            if not health.healthy:
                restored = False
                why = "; ".join(_broken(health)[:6])
        return Observations(
            faults=self.faults, steps=self.steps, actions=self.actions, spec=spec, probe=result,
            started=started, zero=zero, before=before, during=during, recovered_at=recovered_at,
            restored=restored, why=why, ended=time.time(), paths_before=paths_before, paths_after=paths_after,
            fib_before=fib_before, fib_after=fib_after, fib_history=fibs.history, samples=counters.samples,
            events=self.logs.events, checks=self.checks, notes=self.notes, figures=self.figures,
            detect_by_check=self.detect_by_check)

    def _moment(self, name: str) -> None:
        if self.opt.at_moment is not None:
            self.progress(f"{name}: snapshot")
            self.opt.at_moment(name)

    def _cut_short(self, exc: BaseException) -> None:
        """An error or a signal (Ctrl-C, SIGTERM, SIGHUP: a KeyboardInterrupt) mid-drill: restore everything;
        when a signal ended it and something could not be restored, mark the lab unhealthy and say what
        (a DrillError, which the caller sees instead of the bare interrupt)."""
        failed = self._restore_all()
        if failed and isinstance(exc, KeyboardInterrupt):
            why = "interrupted, and " + "; ".join(failed)
            record_unrestored(self.state, self.scenario.name, why)
            raise DrillError(f"the drill was {why}; the lab is marked unhealthy") from exc

    def _restore_all(self) -> list[str]:
        """After an error or Ctrl-C mid-drill: take back every fault still in place, best effort; what could
        not be taken back (also in the notes)."""
        before = len(self.notes)
        for index in sorted(self._active | self._injecting, reverse=True):
            fault = self.faults[index]
            try:
                self.injector.apply(fault, self.steps[index], inject=False)
            except Exception as exc:  # keep restoring the others; say what could not be undone
                self.notes.append(
                    f"{fault.kind} {fault.target} was cut short while being injected and may be partly "
                    f"in place; its restore failed: {exc}" if index in self._injecting else
                    f"could not restore {fault.kind} {fault.target}: {exc}")
        self._active.clear()
        self._injecting.clear()
        return self.notes[before:]

    def _wait(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Watch for `seconds` (or until the condition holds); True if the condition was met. bgpd's
        logs are read at every look, so their events carry the time they were seen."""
        def met() -> bool:
            self.logs.poll()
            return until is not None and until()

        return poll_until(met, max(0.0, seconds), 0.01)

    def _do(self, action: Action, active: set[int]) -> None:
        fault, step = self.faults[action.index], self.steps[action.index]
        verb = "inject" if action.inject else "restore"
        self.progress(f"{verb} {fault.kind} {fault.target}")
        action.t = time.time()
        timeline.action_event(self.state.lab, self._run, fault.kind, fault.target, verb, action.t)
        # an inject cut short (Ctrl-C while its command runs) may already be in place: restore it too
        self._injecting = {action.index} if action.inject else set()
        try:
            action.how = self.injector.apply(fault, step, action.inject)
        except Exception as exc:
            if action.inject:
                raise DrillError(f"could not inject {fault.kind} on {fault.target}: {exc}") from exc
            raise DrillError(f"could not restore {fault.kind} on {fault.target}: {exc}; "
                             "the lab is left as it is for inspection") from exc
        (active.add if action.inject else active.discard)(action.index)
        self._active = set(active)
        self._injecting = set()
        own = self.injector.verify(fault, injected=action.inject)
        if own is not None:
            self.checks.update(own.checks)
            self.notes.append(own.note)
            self.figures.update(own.figures)
            if action.inject:
                self.detect_by_check[action.index] = own.detect_ms

    def _converged(self, active: frozenset[int]) -> bool:
        expected, ignore = self.expected(active)
        return not mismatches(expected, self.fibs.snapshot(), ignore)

    def _sessions_down(self, active: frozenset[int], since: float) -> bool:
        want = [s for i in active for s in self.faults[i].sessions if self.faults[i].topology_change]
        got = measure.first_events(self.logs.events, want, "down", since, time.time())
        return len(got) == len(set(want))

    def _execute(self, zero: float) -> During | None:
        """Run every action; what was seen while the untimed faults were in place (None: none)."""
        assert self.spec is not None
        active: set[int] = set()
        timed = sorted((a for a in self.actions if a.at is not None), key=lambda a: (a.at, not a.inject))
        settle = self.scenario.settle_ms / 1000
        timeout = self.plan.fabric.bgp.holdtime + 10
        for action in timed:
            assert action.at is not None
            self._wait(zero + action.at - time.time())
            self._do(action, active)
        adaptive = [a for a in self.actions if a.at is None]
        if not adaptive:
            return None
        frozen = frozenset(active)
        self._wait(timeout, lambda: self._converged(frozen) and self._sessions_down(frozen, zero))
        self._wait(settle)
        window, fib = (time.time() - settle, time.time()), self.fibs.snapshot()
        during = During(window=window, fib=fib, paths=flow_paths(self.plan, self.runtime, self.state, self.spec))
        self._moment("during")
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


def _broken(health: Health) -> list[str]:
    """What is wrong with the lab, one line per failed item: `check: subject message`."""
    return [f"{r.name}: {i.subject} {i.message}" for r in health.results for i in r.failures]
