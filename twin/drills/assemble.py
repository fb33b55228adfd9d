"""A drill's report from what it observed: per action, when the fabric detected, converged and how long
traffic was lost; over the drill, ECMP widths, traffic shares, moved flows, the probe's totals and the
timeline. Pure: reads `Observations` and the plan, does no I/O. The verdict is judge.py's."""

from __future__ import annotations

from twin.drills import measure
from twin.drills.faults.base import LinkKey
from twin.drills.observations import FlowPaths, Observations, ProbeSpec
from twin.drills.oracle import Expectation, ecmp_widths, mismatches
from twin.drills.schedule import fault_scope
from twin.model.drill import ActionReport, DrillReport, LossRun, Slo
from twin.model.plan import Plan

UNMATCHED_SHOWN = 5   # FIB differences named when an action's FIBs never matched


def action_reports(obs: Observations, expectation: Expectation, runs: list[LossRun]) -> list[ActionReport]:
    """Each injection and restore, in the order done, with what the fabric did until the next one."""
    done = sorted((a for a in obs.actions if a.t), key=lambda a: a.t)
    period = 1 / obs.probe.rate_hz
    end = obs.probe.stopped
    out = []
    active: set[int] = set()
    for k, action in enumerate(done):
        (active.add if action.inject else active.discard)(action.index)
        fault = obs.faults[action.index]
        until = done[k + 1].t if k + 1 < len(done) else end
        expected, ignore = expectation(frozenset(active))
        conv = measure.converged_at(obs.fib_history, expected, action.t, until, ignore)
        if action.inject:
            state, wanted = "down", list(fault.sessions) if fault.topology_change else []
        else:  # the sessions of this fault that went down while it was in place
            since = max((a.t for a in done[:k] if a.inject and a.index == action.index), default=obs.zero)
            went = measure.first_events(obs.events, fault.sessions, "down", since, action.t)
            state, wanted = "up", list(went)
        seen = measure.first_events(obs.events, wanted, state, action.t, until)
        node_fault = bool(fault.nodes)
        others = [t for s, t in seen.items() if not (node_fault and s.node == fault.target)]
        own = [t for s, t in seen.items() if node_fault and s.node == fault.target]
        all_seen = len(seen) == len(set(wanted))
        loss, lost = measure.longest_loss(runs, period, action.t, until)
        detect = measure.ms(max(others), action.t) if others and all_seen else None
        if action.inject and action.index in obs.detect_by_check:  # the kind's own check saw it (MTU)
            detect = obs.detect_by_check[action.index]
        out.append(ActionReport(
            action="inject" if action.inject else "restore", kind=fault.kind, target=fault.target,
            t_ms=round((action.t - obs.zero) * 1000, 1), detect_ms=detect,
            detect_target_ms=measure.ms(max(own), action.t) if own else None,
            converge_ms=measure.ms(conv, action.t), loss_ms=loss, lost_packets=lost,
            unmatched=[] if conv is not None else mismatches(expected, measure.fib_at(obs.fib_history, until),
                                                             set(ignore))[:UNMATCHED_SHOWN],
            settled=conv is not None and all_seen, timed=action.timed, how=action.how))
    return out


def broken_flows(spec: ProbeSpec, nodes: set[str], links: set[LinkKey], paths: FlowPaths) -> set[int]:
    """Flows whose path before the fault crossed a failed spine or link (or had none)."""
    dead_pairs = set()
    for (a, _), (b, _) in links:
        dead_pairs |= {(a, b), (b, a)}
    broken = set()
    for fid, pair, _ in spec.flows():
        spine = paths.get(fid)
        if spine is None or spine in nodes or (pair.src_leaf, spine) in dead_pairs or \
                (spine, pair.dst_leaf) in dead_pairs:
            broken.add(fid)
    return broken


def gray_note(obs: Observations, noticed: bool) -> str:
    """What a gray link (the drill's first fault) cost the flows that crossed it, and whether the
    fabric noticed it at all."""
    fault = obs.faults[0]
    assert fault.link is not None
    ends = {fault.link.a_node, fault.link.b_node}
    crossing = set()
    for fid, pair, _ in obs.spec.flows():
        spine = obs.paths_before.get(fid)
        if spine in ends and (pair.src_leaf in ends or pair.dst_leaf in ends):
            crossing.add(fid)
    injected = [a.t for a in obs.actions if a.inject and a.t]
    restored = [a.t for a in obs.actions if not a.inject and a.t]
    start, stop = injected[0], (restored[-1] if restored else obs.probe.stopped)
    sent = len(crossing) * (stop - start) * obs.probe.rate_hz
    lost = sum(r.count for r in obs.probe.loss_runs() if r.flow in crossing and start <= r.t_start < stop)
    pct = 100 * lost / sent if sent else 0.0
    return (f"gray link: {len(crossing)} probe flows crossed it and lost {pct:.2f}% of their packets "
            f"({obs.steps[0].loss_pct:g}% injected); the fabric "
            + ("noticed (sessions or routes changed)" if noticed else
               "did NOT notice: BGP and BFD stayed up and every FIB kept the link, so traffic kept "
               "being hashed onto it"))


def assemble(plan: Plan, drill: str, lab: str, slo: Slo, obs: Observations,
             expectation: Expectation | None = None) -> DrillReport:
    """The report of drill `drill` on `lab`, unjudged: `passed` False and no violations yet."""
    expectation = expectation or Expectation(plan, obs.faults)
    runs = obs.probe.loss_runs()
    end = obs.probe.stopped
    actions = action_reports(obs, expectation, runs)
    injects = [a for a in actions if a.action == "inject"]
    restores = [a for a in actions if a.action == "restore"]
    first = injects[0]
    last = restores[-1] if restores else None
    nodes, links = fault_scope(obs.faults)
    failed_spines = {n for n in nodes if plan.node(n).role == "spine"}
    alive = [s for s in sorted({n.name for n in plan.by_role("spine")}) if s not in failed_spines]
    if obs.during is not None:
        (a, b), fib_during, paths_during = obs.during.window, obs.during.fib, obs.during.paths
    else:  # timed scenario: from the first injection's convergence to the next action
        a = obs.zero + (first.t_ms + (first.converge_ms or 0)) / 1000
        b = obs.zero + (actions[1].t_ms / 1000 if len(actions) > 1 else end - obs.zero)
        fib_during, paths_during = measure.fib_at(obs.fib_history, a), {}
    dist = measure.shares(obs.samples, a, b)
    broken = broken_flows(obs.spec, nodes, links, obs.paths_before)
    moved, moved_healthy = measure.moved_flows(obs.paths_before, paths_during, broken) if paths_during else (0, 0)
    timeline = {"delivery": measure.delivery_timeline(obs.probe, obs.zero)}
    timeline.update({f"share:{k}": v for k, v in measure.share_timeline(obs.samples, obs.zero).items()})
    timeline["actions"] = [[x.t_ms, 1.0 if x.action == "inject" else 0.0] for x in actions]
    fault_names = ", ".join(f"{f.kind} {f.target}" for f in dict.fromkeys(obs.faults))
    flows = obs.probe.flows
    noticed = any(x.detect_ms is not None or (x.converge_ms or 0) > 0 for x in injects) or any(
        e.state == "down" for e in obs.events)
    report = DrillReport(
        drill=drill, target=", ".join(dict.fromkeys(f.target for f in obs.faults)),
        lab=lab, passed=False, restored=obs.restored,
        detect_ms=first.detect_ms, detect_target_ms=first.detect_target_ms, converge_ms=first.converge_ms,
        loss_ms=max((x.loss_ms for x in injects), default=0.0),
        recovery={"detect_ms": last.detect_ms if last else None,
                  "converge_ms": last.converge_ms if last else None,
                  "loss_ms": max((x.loss_ms for x in restores), default=0.0)},
        noticed=noticed,
        paths_before=ecmp_widths(plan, obs.fib_before),
        paths_during=ecmp_widths(plan, fib_during, exclude=nodes),
        paths_after=ecmp_widths(plan, obs.fib_after),
        distribution=dist, distribution_before=measure.shares(obs.samples, *obs.before),
        distribution_after=measure.shares(obs.samples, obs.recovered_at, end) if obs.recovered_at else {},
        imbalance=measure.imbalance(dist, alive), flows=len(flows), flows_moved=moved,
        flows_moved_healthy=moved_healthy,
        probe={"rate_hz_per_flow": obs.probe.rate_hz, "sent": sum(f.sent for f in flows),
               "received": sum(f.received for f in flows), "lost": sum(r.count for r in runs),
               "send_errors": obs.probe.send_errors, "reordered": sum(f.reordered for f in flows)},
        actions=actions, sessions=list(obs.events), checks=dict(obs.checks), figures=dict(obs.figures),
        slo=slo.model_dump(exclude_none=True), timeline=timeline, notes=list(obs.notes))
    report.cycle_s = round(obs.ended - obs.zero, 2)
    if not obs.restored:
        report.notes.append(f"NOT RESTORED: {obs.why}")
    if obs.faults[0].kind == "link-gray":
        report.notes.append(gray_note(obs, report.noticed))
    report.notes.insert(0, f"faults: {fault_names}")
    return report
