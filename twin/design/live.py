"""Read a running lab's state for the drawing: what `twin status` reads (the health checks and the
processes), plus each node's interfaces (`ip -j link show` inside the node). I/O only; the mapping is
in live_state.py."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

from twin.checks.catalog import health_checks
from twin.checks.collect_local import collect_local
from twin.checks.daemons import process_checks
from twin.checks.health import evaluate
from twin.design.live_state import LiveState, link_states, node_states, operstates_of, session_states
from twin.host.shell import run
from twin.lab.running import RunningLab
from twin.model.errors import TwinError
from twin.model.state import LabState
from twin.runtime.registry import runtime_of

WORKERS = 8


def running(lab: str) -> RunningLab:
    found = RunningLab.read(lab)
    if found is None:
        raise TwinError(f"lab '{lab}' is not running; start it with 'twin up' or draw a topology file instead")
    return found


def _interfaces(state: LabState, node: str) -> dict[str, str] | None:
    argv = runtime_of(state).exec_argv(state, node, ["ip", "-j", "link", "show"])
    proc = run(argv, check=False, timeout=30)
    try:
        return operstates_of(json.loads(proc.stdout)) if proc.returncode == 0 else None
    except json.JSONDecodeError:
        return None


def collect_live(lab: RunningLab) -> LiveState:
    state, plan = lab.state, lab.plan
    checks = health_checks(plan) + process_checks(lab)
    outputs = collect_local(lab, checks)
    health = evaluate(plan, checks, outputs)
    names = [n.name for n in plan.nodes]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        operstates = dict(zip(names, pool.map(lambda n: _interfaces(state, n), names), strict=True))
    problems = [f"{r.name}: {i.subject}: {i.message}" for r in health.results for i in r.items
                if i.status not in ("success", "skipped")]
    return LiveState(lab=state.lab, runtime=state.runtime, taken_at=time.time(),
                     healthy=health.healthy and state.unhealthy is None, bgp=health.bgp,
                     links=link_states(plan, operstates), sessions=session_states(plan, outputs),
                     nodes=node_states(plan, health.daemons, operstates),
                     problems=([f"lab: {state.unhealthy}"] if state.unhealthy else []) + problems)
