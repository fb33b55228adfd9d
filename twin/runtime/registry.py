"""The runtime protocol every backend implements, and the registry that finds one by name."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from twin.host.rundir import LabState
from twin.model.errors import PlanError, Problem, TwinError
from twin.model.plan import Plan

# (step description, done, total): how a runtime reports progress to whoever shows it.
ProgressFn = Callable[[str, int, int], None]

LAB_NAME = re.compile(r"^[a-z][a-z0-9-]{0,11}$")


def check_lab_name(name: str, source: str = "--name") -> None:
    """Lab names end up in kernel interface names (15 characters), so they stay short."""
    if not LAB_NAME.match(name):
        raise PlanError([Problem(
            source, "name", f"lab name '{name}' is not usable: lab names are 1-12 characters of a-z, 0-9 "
            "and '-', starting with a letter, because they become part of kernel interface names "
            "(at most 15 characters)", "pick another name with --name")])


class Runtime(Protocol):
    """What `twin` needs from a place that runs switches. One module per backend."""

    name: str
    templates: Path | None  # a SONiC release's FRR templates to render switches with; None: twin's own

    def up(self, lab: str, plan: Plan, progress: ProgressFn) -> LabState:
        """Create every node and link and start the switches. On failure, leave nothing behind."""
        ...

    def down(self, lab: str) -> list[str]:
        """Remove everything the lab created; idempotent. Returns what was removed."""
        ...

    def labs(self) -> list[str]:
        """Names of the labs this runtime has (running, or half-created after a crash)."""
        ...

    def exec_argv(self, state: LabState, node: str, cmd: Sequence[str]) -> list[str]:
        """The argv that runs `cmd` inside `node` (FRR's vtysh finds the node's daemons)."""
        ...

    def set_link_state(self, state: LabState, node: str, ifaces: Sequence[str], up: bool) -> None:
        """Administratively bring link ends of one node up or down at once (the peers lose carrier)."""
        ...

    def node_loss(self, state: LabState, node: str, ifaces: Sequence[str], lost: bool) -> str:
        """Lose a whole node (power loss) or bring it back; returns how, for the drill report."""
        ...

    def node_pids(self, state: LabState, node: str) -> list[int]:
        """Processes running inside a node."""
        ...


RUNTIMES = ("netns", "docker", "clab")


def get_runtime(name: str, image: str | None = None, templates: Path | None = None) -> Runtime:
    """The runtime called `name`; `image` is the switch image of the container runtimes, `templates`
    a SONiC release's FRR templates to render twin's switches with."""
    runtime = _runtime(name, image)
    if templates is not None:
        runtime.templates = templates
    return runtime


def _runtime(name: str, image: str | None) -> Runtime:
    if name == "netns":
        from twin.runtime.netns import NetnsRuntime

        if image:
            raise TwinError("--image needs a container runtime: add --runtime docker (or clab)")
        return NetnsRuntime()
    if name == "docker":
        from twin.runtime.docker import DockerRuntime

        return DockerRuntime(image)
    if name == "clab":
        from twin.runtime.clab import ClabRuntime

        return ClabRuntime(image)
    raise TwinError(f"unknown runtime '{name}'; available: {', '.join(RUNTIMES)}")


def runtime_of(state: LabState) -> Runtime:
    """The runtime a running lab was brought up with."""
    return get_runtime(state.runtime, state.image)


def all_labs() -> list[str]:
    """Every lab on this machine, whatever its runtime (half-created ones included)."""
    from twin.runtime.docker import docker_labs
    from twin.runtime.netns import NetnsRuntime

    return sorted(set(NetnsRuntime().labs()) | set(docker_labs()))


def down_lab(lab: str) -> list[str]:
    """Remove a lab with the runtime that made it (from its state, or its containers after a crash)."""
    from twin.host.rundir import load_state
    from twin.runtime.docker import docker_labs

    state = load_state(lab)
    if state is not None:
        return runtime_of(state).down(lab)
    return get_runtime("docker" if lab in docker_labs() else "netns").down(lab)
