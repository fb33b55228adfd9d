"""The counters of the links a drill touched, read from the lab's Prometheus once the drill is over
(`twin drill --report`, when the lab's telemetry runs): both ends' rates in and out and their oper
status over the drill's window (`query_range`), with the drill's instants from the lab's event log.

Which run is the drill's: the last run of its scenario on the event log (twin.drills.timeline names a
run `scenario@start`). Which links it touched: each fault's target, a link (`leaf1:Ethernet128`) or a
node (`spine1`: every link of it)."""

from __future__ import annotations

import math
import time
from typing import Any

from twin.host.poll import poll_until
from twin.host.rundir import lab_dir
from twin.lab import events
from twin.lab.events import LabEvent
from twin.lab.running import RunningLab
from twin.model.counters import DrillCounters, DrillInstant, LinkCounters, PortCounters, Series
from twin.model.drill import DrillReport
from twin.model.plan import Plan
from twin.telemetry import prometheus
from twin.telemetry.service import read_state

MAX_LINKS = 8        # a spine's drill touches all its links; the plot shows the first few
LEAD_S = 15.0        # the window opens this long before the first instant
STEP_S = 1.0         # the range query's step (at most the scrape interval)

End = tuple[str, str]   # (switch, port)


def drill_run(lab_events: list[LabEvent], drill: str) -> list[LabEvent]:
    """The drill events of the last run of `drill` on the lab's log ([] when it has none)."""
    mine = [e for e in lab_events if e.source == "drill" and e.run.startswith(f"{drill}@")]
    return [e for e in mine if e.run == mine[-1].run] if mine else []


def touched_links(plan: Plan, targets: list[str]) -> list[list[End]]:
    """Each link the faults' targets name, as its switch ends (the target's own end first), once."""
    switches = {n.name for n in plan.switches}
    links: list[list[End]] = []
    seen: set[frozenset[End]] = set()
    for target in targets:
        node, _, port = target.partition(":")
        if node not in {n.name for n in plan.nodes}:
            continue
        ifaces = [i for i in plan.node(node).interfaces if not port or i.name == port]
        for iface in ifaces:
            ends = [e for e in ((node, iface.name), (iface.peer_node, iface.peer_iface)) if e[0] in switches]
            if ends and frozenset(ends) not in seen:
                seen.add(frozenset(ends))
                links.append(ends)
    return links


def by_end(result: list[dict[str, Any]]) -> dict[End, Series]:
    """A range query's matrix by (switch, port): [t, value] pairs, NaN dropped."""
    out: dict[End, Series] = {}
    for row in result:
        labels = row.get("metric", {})
        points = [[float(t), float(v)] for t, v in row.get("values", []) if v not in ("NaN", "+Inf", "-Inf")]
        out[(labels.get("switch", ""), labels.get("port", ""))] = points
    return out


def _last_scrape(base: str, lab: str) -> float:
    rows = prometheus.query(base, f'max(timestamp(twin_telemetry_switch_up{{lab="{lab}"}}))')
    return float(rows[0]["value"][1]) if rows else 0.0


def drill_counters(report: DrillReport) -> DrillCounters | None:
    """The counters of the links `report`'s drill touched; None when the lab's telemetry does not run
    or its event log has no run of the drill. Waits for Prometheus's first scrape after the drill's
    last instant (at most two scrape intervals), so that the restore is in the window."""
    state = read_state(report.lab)
    if state is None or not prometheus.ready(state["prometheus"]):
        return None
    run = drill_run(events.read(lab_dir(report.lab) / events.EVENTS), report.drill)
    if not run:
        return None
    base, scrape_s = state["prometheus"], float(state.get("scrape_s", prometheus.SCRAPE_S))
    last = max(e.t for e in run)
    poll_until(lambda: _last_scrape(base, report.lab) > last, 2 * scrape_s + 2, 0.5)
    plan = RunningLab.load(report.lab).plan
    links = touched_links(plan, list(dict.fromkeys(e.target for e in run if e.phase == "inject")))
    shown = links[:MAX_LINKS]
    # the last point at the end (now, after that scrape), every `step` back to before the first instant:
    # a sample is then seen from the step after its scrape, however the scrapes fall on the grid
    end, step = time.time(), min(STEP_S, scrape_s)
    start = end - math.ceil((end - min(e.t for e in run) + LEAD_S) / step) * step
    window = 2 * max(scrape_s, float(state.get("sample_s", 5.0))) + scrape_s
    switches = "|".join(sorted({s for ends in shown for s, _ in ends}))
    selector = f'{{lab="{report.lab}", switch=~"{switches}"}}'
    series = {name: by_end(prometheus.query_range(base, expr, start, end, step)) if shown else {}
              for name, expr in (("in", f"rate(sonic_port_in_octets_total{selector}[{window:g}s]) * 8"),
                                 ("out", f"rate(sonic_port_out_octets_total{selector}[{window:g}s]) * 8"),
                                 ("oper", f"sonic_port_oper_status{selector}"))}

    def port(end_: End) -> PortCounters:
        iface = plan.node(end_[0]).iface(end_[1])
        return PortCounters(switch=end_[0], port=end_[1], peer=iface.peer_node, peer_port=iface.peer_iface,
                            in_bps=series["in"].get(end_, []), out_bps=series["out"].get(end_, []),
                            oper_status=series["oper"].get(end_, []))

    return DrillCounters(
        lab=report.lab, drill=report.drill, run=run[-1].run, start=start, end=end, step_s=step,
        rate_window_s=window, links_touched=len(links),
        instants=[DrillInstant(t=e.t, phase=e.phase, kind=e.name, target=e.target) for e in run],
        links=[LinkCounters(name="--".join(f"{s}:{p}" for s, p in ends), ends=[port(e) for e in ends])
               for ends in shown])
