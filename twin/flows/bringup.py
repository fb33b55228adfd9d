"""Bring a lab up and wait until it is healthy (what `twin up`, `twin ci` and the pytest plugin share),
and verify a running lab (`twin verify`)."""

from __future__ import annotations

import gc
from pathlib import Path

from twin.checks.bgp_resets import reset_reasons, resets_note
from twin.checks.catalog import verify_checks
from twin.checks.collect_local import collect_local
from twin.checks.daemons import AgentServing, process_checks
from twin.checks.health import HealthProgress, evaluate, wait_healthy
from twin.host.rundir import save_state
from twin.lab.agent import settle_agent
from twin.lab.agent_preload import PreloadedAgent
from twin.lab.lifecycle import start_lab
from twin.lab.running import RunningLab
from twin.model import phases
from twin.model.lab import Lab
from twin.model.results import CheckResult, Health, ItemResult
from twin.runtime.registry import ProgressFn, down_lab


def bring_up(lab: Lab, name: str, runtime: str | None, on_step: ProgressFn, on_poll: HealthProgress,
             timeout: float | None = None, image: str | None = None,
             templates: Path | None = None, preloaded: PreloadedAgent | None = None) -> tuple[RunningLab, Health]:
    """Start the lab (twin.lab.lifecycle.start_lab) and wait until it is healthy. Interrupted (Ctrl-C,
    or SIGTERM/SIGHUP through twin.host.signals) before the lab is judged, it removes the lab: an
    interrupted bring-up leaves nothing behind. A lab judged unhealthy stays up for inspection."""
    # The plan, then the lab's state, outlive the bring-up: held out of the cyclic garbage
    # collector's reach meanwhile (gc.freeze; given back after), the preparation's and the health
    # poll's collections do not traverse them (a third of the poll's CPU at 64 x 128, taken from
    # the converging fabric).
    gc.freeze()
    try:
        return _bring_up(lab, name, runtime, on_step, on_poll, timeout, image, templates, preloaded)
    finally:
        gc.unfreeze()


def _bring_up(lab: Lab, name: str, runtime: str | None, on_step: ProgressFn, on_poll: HealthProgress,
              timeout: float | None, image: str | None, templates: Path | None,
              preloaded: PreloadedAgent | None) -> tuple[RunningLab, Health]:
    running = start_lab(lab, name, runtime, on_step, image, templates, preloaded)
    gc.freeze()
    limit = timeout or lab.health.timeout_s
    try:
        health = wait_healthy(running, limit, on_poll)
        if health.resets:   # sessions reset on the way: said beside the time to healthy, with bgpd's reasons
            running.state.notes.append(resets_note(health.resets, health.bgp.get("total", 0),
                                                   reset_reasons(running, health.resets)))
            save_state(running.state)
        on_step("waiting for the switches' state tables", 0, 0)
        # an unhealthy lab stays up for inspection: its agent is told, not waited for
        wait = max(STATE_WAIT_MIN_S, limit - (health.seconds or 0.0)) if health.healthy else 0.0
        written = settle_agent(name, wait)
    except KeyboardInterrupt:
        down_lab(name)
        raise
    if written:
        phases.reach("state_written")
    elif health.healthy:
        health.healthy = False
        health.results.append(state_not_written())
    return running, health


# However long the health wait took, the agent's first pass over every switch gets at least this long.
STATE_WAIT_MIN_S = 60.0


def state_not_written() -> CheckResult:
    return CheckResult(name="state-tables", status="failure",
                       description="the gNMI agent has written every switch's STATE_DB, APPL_DB and COUNTERS_DB tables",
                       items=[ItemResult(subject="agent", status="failure",
                                         message="not written within the health timeout: gNMI would serve them "
                                                 "incomplete (see agent.log in the lab's run directory)")])


def verify_lab(lab: RunningLab) -> Health:
    """What `twin verify` judges: the processes the lab runs on (its gNMI agent, every switch's
    daemons), then, when the agent serves, the check catalog over gNMI. With the agent down the
    catalog's checks are reported skipped (nothing can be read over gNMI) and the agent check fails."""
    from twin.checks.collect_gnmi import (
        collect_gnmi,  # pygnmi and grpc: only when verifying
        running_configs,
    )

    plan = lab.plan
    processes = process_checks(lab)
    local = collect_local(lab, processes)
    agent = [c for c in processes if isinstance(c, AgentServing)]
    if agent and agent[0].evaluate(local).status != "success":
        skipped = [CheckResult(name=c.name, description=c.description, status="skipped",
                               items=[ItemResult(subject="gnmi", status="skipped",
                                                 message="not read: the lab's gNMI agent does not serve")])
                   for c in verify_checks(plan)]
        health = evaluate(plan, processes, local)
        health.results = skipped + health.results
        return health
    checks = verify_checks(plan, running_configs(lab), lab.settings.accept_not_emulated, lab.settings.roce.compute_dscp)
    outputs = collect_gnmi(lab, checks)
    for node, values in local.items():
        outputs.setdefault(node, {}).update(values)
    return evaluate(plan, checks + processes, outputs)
