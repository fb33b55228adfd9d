"""What a node kind is (NodeKind) and what starting one node of it is given and gives back.

A runtime makes a node exist (a namespace, a container) and hands its kind a NodeStart and a
NodeProcesses (how to run things in that node); the kind prepares the node and returns its
NodeLaunch. The containerlab topology asks the kind for the node's `exec:` lines instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from twin.kinds.facts import KindFacts
from twin.kinds.held_start import HeldStart
from twin.model.errors import RuntimeBackendError
from twin.model.plan import InterfacePlan, NodePlan, Plan

# A prepared node's launch: starts its routing daemons (or whatever else is its start) and returns
# warnings and what was run, for `twin up` to report.
NodeLaunch = Callable[[], list[str]]


class NodeProcesses(Protocol):
    """How to run things inside a node: what a runtime gives a kind's `prepare`."""

    def prepare_rundir(self, lab: str, node: NodePlan, rundir: Path) -> None:
        ...

    def mgmt_lines(self, mgmt_ip: str, plen: int) -> list[str]:
        """`ip -b` lines giving eth0 its management address (none when the runtime did)."""
        ...

    def start_daemon(self, lab: str, node: NodePlan, argv: list[str]) -> None:
        ...

    def exec_line(self, lab: str, node: NodePlan, line: str) -> str:
        """Run one of an imported host's `exec:` lines in the node; returns what `twin up` reports."""
        ...


class NodeKind(Protocol):
    """One kind of node: its facts (from its data file), how it is started, and the few hooks data
    cannot express."""

    facts: KindFacts

    def container_iface(self, iface: InterfacePlan) -> str:
        """The interface name inside the node's container for one of its plan interfaces."""
        ...

    def plan_problems(self, plan: Plan) -> list[str]:
        """What this kind cannot run of `plan` (one line each), checked before anything is created."""
        ...

    def agent_backend(self, rundir: Path) -> dict[str, str]:
        """How the gNMI agent reaches the databases of a switch of this kind ({}: twin's own)."""
        ...

    def prepare(self, start: NodeStart, procs: NodeProcesses, rundir: Path) -> NodeLaunch:
        """Prepare a node whose processes the runtime runs (in its namespace or its container), up
        to its routing daemons; returns its launch. RuntimeBackendError when this kind cannot be
        started so (a kind that boots whole in its own container)."""
        ...

    def clab_exec(self, plan: Plan, node: NodePlan) -> list[str]:
        """The node's containerlab `exec:` lines, run in its container once containerlab deployed
        it (without a shell, in order, each once)."""
        ...

    def before_container(self, lab: str, plan: Plan, node: NodePlan) -> None:
        """What a container runtime must find in the node's run directory before it creates the node's
        container (nothing for most kinds)."""
        ...

    def boot_in_container(self, start: NodeStart, container: str, run_in: Callable[[list[str]], str],
                          supervisord: bool) -> NodeLaunch | None:
        """A kind that boots whole in its own container (its databases, then FRR) boots there, its links
        wired, and returns its launch; None for a kind whose processes the runtime runs (`prepare`).
        `run_in(argv)` runs a command in the container; `supervisord`: start the image's services
        (containerlab's own kind may have started them)."""
        ...


@dataclass(frozen=True)
class NodeStart:
    """Everything starting one node needs: the lab, its plan, the node, its kind, its namespace and
    management address."""

    lab: str
    plan: Plan
    node: NodePlan
    kind: NodeKind
    netns: str            # the node's network namespace, as the runtime attached it (tw.<lab>.<node>)
    mgmt_ip: str          # "" for nodes without management (servers)
    mgmt_plen: int
    templates: Path | None  # a SONiC release's FRR templates; None: twin's own renderer
    held: HeldStart | None = None   # bfdd held until every node has started; None: started at once


def cannot_start(start: NodeStart) -> RuntimeBackendError:
    """What a kind's `prepare` raises when the runtime cannot start a node of it."""
    facts = start.kind.facts
    return RuntimeBackendError(f"{start.node.name}: this runtime cannot start a node of kind "
                               f"'{facts.name}' (boot: {facts.boot})")
