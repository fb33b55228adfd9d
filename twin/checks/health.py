"""Run the health checks once, or poll until the lab is healthy."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from twin.checks.base import Check, Outputs
from twin.checks.bfd import BfdInput, BfdSessionsUp
from twin.checks.bgp import established_counts, session_resets
from twin.checks.catalog import expected_bfd, expected_ecmp, expected_sessions, health_checks
from twin.checks.collect_local import WORKERS, collect_local
from twin.checks.configured import configured_bfd
from twin.checks.daemons import AgentServing, SwitchDaemonsRunning, process_checks
from twin.checks.ecmp import ecmp_summary
from twin.lab.running import RunningLab
from twin.model import phases
from twin.model.config_db import ConfigDb
from twin.model.plan import Plan
from twin.model.results import CheckResult, Health


@dataclass(frozen=True)
class Expected:
    """What a plan's health is counted against: each switch's sessions (peer ip -> peer) and each
    leaf's ECMP widths. Worked out once per poll loop, not once per poll: at 64 x 128 that is
    16,384 session ends and 16,256 prefixes turned into strings, on the CPUs the fabric converges on."""

    sessions: dict[str, dict[str, str]]
    ecmp: dict[str, dict[str, int]]

    @classmethod
    def of(cls, plan: Plan) -> Expected:
        return cls(expected_sessions(plan), expected_ecmp(plan))


def evaluate(plan: Plan, checks: list[Check[Any]], outputs: Outputs, expected: Expected | None = None) -> Health:
    """The checks' results over `outputs`, with the session, ECMP and reset counts (`expected`: the
    plan's, worked out here when not given)."""
    results = [c.evaluate(outputs) for c in checks]
    want = expected if expected is not None else Expected.of(plan)
    counted = _counts(want, outputs)
    healthy = counted is not None and bool(results) and all(r.status in ("success", "skipped") for r in results)
    bgp, ecmp, resets = counted or _uncounted(want)
    health = Health(healthy=healthy, results=results, bgp=bgp, ecmp=ecmp, resets=resets)
    for check in checks:
        if isinstance(check, AgentServing):
            health.agent = check.summary(outputs)
        elif isinstance(check, SwitchDaemonsRunning):
            health.daemons = check.summary(outputs)
    return health


Counts = tuple[dict[str, int], dict[str, dict[str, int]], dict[str, int]]   # bgp, ecmp, resets (as in Health)


def progress(plan: Plan, outputs: Outputs, expected: Expected | None = None) -> Health:
    """The session, ECMP and reset counts over `outputs`, the checks not judged: not healthy, no results.
    A poll that already found a failing node needs only these for its progress; judging every check
    builds an item per session end and per prefix, at 64 x 128 16,384 and 16,256 pydantic models,
    about 170 ms of CPU a poll (18 ms for the counts), polls back to back while the fabric converges."""
    want = expected if expected is not None else Expected.of(plan)
    bgp, ecmp, resets = _counts(want, outputs) or _uncounted(want)
    return Health(healthy=False, results=[], bgp=bgp, ecmp=ecmp, resets=resets)


def _counts(want: Expected, outputs: Outputs) -> Counts | None:
    """None where the outputs are malformed (the checks report it as an error)."""
    try:
        up, total = established_counts(want.sessions, outputs)
        return {"established": up, "total": total}, ecmp_summary(want.ecmp, outputs), \
            session_resets(want.sessions, outputs)
    except (AttributeError, TypeError, KeyError, ValueError):
        return None


def _uncounted(want: Expected) -> Counts:
    return {"established": 0, "total": sum(len(p) for p in want.sessions.values())}, {}, {}


def check_health(lab: RunningLab) -> Health:
    """The health checks and the process checks (the agent, every switch's daemons), once."""
    checks = health_checks(lab.plan) + process_checks(lab)
    return evaluate(lab.plan, checks, collect_local(lab, checks))


READ_BATCH = WORKERS  # nodes read at once while polling for health (read_until_failing)
# Between two polls wait as long as the last one took, between these two: a small lab is polled as
# often as the floor's convergence test polls (a fixed 0.25 s added 0.13 s on average to the default
# lab's 4 s), and a poll that read many switches of a large one (up to 5 s at 64 x 128) is not
# followed by as long a wait, which would delay seeing the fabric converged by as much.
POLL_MIN_S, POLL_MAX_S = 0.05, 0.25

# (bgp established, bgp total, leaves at full width, leaves): for a progress display
HealthProgress = Callable[[Health], None]


def wait_healthy(lab: RunningLab, timeout: float, on_poll: HealthProgress,
                 configs: Mapping[str, ConfigDb] | None = None) -> Health:
    """Poll the control plane until it converges, then check the data plane; bounded by timeout.
    With `configs` (the switches' running CONFIG_DBs) BFD and ECMP are judged as those configs ask."""
    start = time.monotonic()
    plan = lab.plan
    checks = health_checks(plan, configs) + process_checks(lab)
    # The control plane has settled when BFD is Up as well: BGP can be Established while BFD still
    # comes up (or flaps under bring-up load), and a BFD flap takes BGP down again a moment later.
    bfd = expected_bfd(plan) if configs is None else configured_bfd(configs)
    control = [c for c in checks if "ping" not in c.needs] + ([BfdSessionsUp(BfdInput(peers=bfd))] if bfd else [])
    data = [c for c in checks if "ping" in c.needs]
    outputs: Outputs = {}
    expected = Expected.of(plan)
    everyone = sorted({n for c in control for n in c.nodes()})
    pending = everyone  # the nodes not yet read passing since the last poll that began with every node
    while True:
        fresh, began = pending == everyone, time.monotonic()
        pending = read_until_failing(lab, control, outputs, pending)
        # judged only on a poll that read every node passing; any other poll shows its progress
        health = evaluate(plan, control, outputs, expected) if fresh and not pending else \
            progress(plan, outputs, expected)
        health.seconds = time.monotonic() - start
        on_poll(health)
        if health.bgp["established"] >= health.bgp["total"]:
            phases.reach("sessions_established", first=True)
        if health.healthy and fresh:  # every node read passing in this one poll
            phases.reach("fib_full", first=True)
            # the control plane was just read healthy: only the data plane (pings) is left to read
            for node, values in collect_local(lab, data).items():
                outputs.setdefault(node, {}).update(values)
            health = evaluate(plan, checks, outputs, expected)
            health.seconds = time.monotonic() - start
            on_poll(health)
            if health.healthy:
                phases.reach("servers_reachable")
                return health
        if time.monotonic() - start > timeout:
            full = evaluate(plan, checks, collect_local(lab, checks), expected)
            full.seconds = time.monotonic() - start
            return full
        if not pending:  # each node read passing, at different polls: read them all again in one to judge
            pending = everyone
            if not fresh:
                continue
        time.sleep(min(POLL_MAX_S, max(POLL_MIN_S, time.monotonic() - began)))


# What the kernel answers (a FIB dump, the process table) costs no switch daemon anything; FRR's
# daemons answer on their vty between the updates they process. A batch is read in two stages:
# the checks built on the kernel's answers first, and FRR is asked only where those pass.
KERNEL_SOURCES = frozenset({"fib", "daemons"})


def read_until_failing(lab: RunningLab, checks: list[Check[Any]], outputs: Outputs,
                       pending: list[str]) -> list[str]:
    """Read the nodes of `pending` into `outputs` in order, READ_BATCH of them first and twice as
    many in each batch after, and stop at the first batch in which a node fails: the poll's answer
    (not healthy yet) is known then. Returns the nodes still to be read passing, those that just
    failed first.

    The floor's convergence test stops at its first leaf short of full ECMP; reading every failing
    node each poll instead asked up to 192 bgpds for 16,384 session ends and decoded 128 leaves'
    FIBs of 64-way routes, about 5 s of 2 CPUs a poll, back to back, while the fabric it waited
    for converged on the same CPUs. Growing batches keep a poll that finds everything passing to
    a few batches.

    A batch is judged by the checks narrowed to its nodes (Check.narrowed): judged whole, every batch
    of a poll at 64 x 128 made 16,384 session items and 16,256 prefix items again, 166 ms of CPU for
    a poll whose first batch failed (1.8 ms narrowed) and 691 ms for one that read every switch (155).

    Within a batch the kernel is read first (KERNEL_SOURCES): while a leaf's FIB is short of full
    ECMP, its bgpd and the others of the batch are not asked. At 64 x 128 the first batch of a poll
    asked 8 converging bgpds and took 15 s to answer, and the lab was seen healthy 28 s after its
    last session came up; FIB dumps are answered by the kernel at once."""
    kernel = [c for c in checks if set(c.needs) <= KERNEL_SOURCES]
    stages = [stage for stage in (kernel, [c for c in checks if c not in kernel]) if stage]
    size = READ_BATCH
    while pending:
        batch = pending[:size]
        judged = [c.narrowed(batch) for c in checks]  # the batch's nodes only, not every node read so far
        for stage in stages:
            for node, values in collect_local(lab, stage, batch).items():
                outputs.setdefault(node, {}).update(values)
            if stage is kernel and len(stages) > 1:
                first = [j for j, c in zip(judged, checks, strict=True) if c in kernel]
                failing = failing_nodes(first, [c.evaluate(outputs) for c in first])
                if failing is None or failing.intersection(batch):
                    return pending  # FRR not asked: no node of the batch is known passing
        failing = failing_nodes(judged, [c.evaluate(outputs) for c in judged])
        if failing is None:  # a failure about no one node: nothing is known passing
            return pending
        pending = [n for n in pending if n not in batch or n in failing]
        if failing.intersection(batch):
            return pending
        size *= 2
    return pending


def failing_nodes(checks: list[Check[Any]], results: list[CheckResult]) -> set[str] | None:
    """The nodes the failed items of `results` (those of `checks`, in order) are about, by the first
    word of each item's subject; None when a failure is about no node its check reads (read them all).

    While a large fabric converges, most switches are done long before the last: a poll reads only
    the switches still failing (at 64 x 128 a full poll asks 192 bgpds about 16,384 session ends), and
    the switches read earlier are read again, all at once, before the lab is judged healthy."""
    nodes: set[str] = set()
    for check, result in zip(checks, results, strict=True):
        if result.status in ("success", "skipped"):
            continue
        names = set(check.nodes())
        failed = [item for item in result.items if item.status not in ("success", "skipped")]
        if not failed:
            return None
        for item in failed:
            node = item.subject.split(" ", 1)[0]
            if node not in names:
                return None
            nodes.add(node)
    return nodes
