"""What `twin` needs from a place that runs switches: the Runtime protocol and its optional capabilities.

A runtime is found by name in twin.runtime.registry; it implements `Runtime` (seven methods) and,
where it has them, the small capability protocols below (checked with isinstance, never by class).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from twin.model.plan import Plan
from twin.model.state import LabState

# (step description, done, total): how a runtime reports progress to whoever shows it.
ProgressFn = Callable[[str, int, int], None]
# Called with the lab's state at a point of its bring-up (UpHooks).
StateFn = Callable[[LabState], None]
# Called with the lab's name once its run directory exists.
CreatedFn = Callable[[str], None]


@dataclass(frozen=True)
class UpHooks:
    """What a caller of Runtime.up runs at three points of the bring-up (each optional):

    - `created`, with the lab's name, once its run directory exists and before any node starts:
      what needs nothing else (the lab's gNMI agent loading itself, idle) starts then;
    - `prepared`, once every node is prepared (a switch's databases serve, its management address
      is set) and before any routing daemon launches: it must return at once; what it starts (the
      agent setting itself up for every switch) goes on while FRR launches;
    - `started`, once every node runs, while the fabric comes up (BGP sessions, bfdd): what waits
      for the nodes (the agent serving) waits then.
    """

    created: CreatedFn | None = None
    prepared: StateFn | None = None
    started: StateFn | None = None


NO_HOOKS = UpHooks()


class Runtime(Protocol):
    """What `twin` needs from a place that runs switches. One package per backend."""

    name: str
    templates: Path | None  # a SONiC release's FRR templates to render switches with; None: twin's own

    def up(self, lab: str, plan: Plan, progress: ProgressFn, hooks: UpHooks = NO_HOOKS) -> LabState:
        """Create every node and link and start the switches, calling `hooks` on the way. On failure
        (of a hook's too), leave nothing behind."""
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


@runtime_checkable
class Containers(Protocol):
    """A runtime whose nodes are containers (docker, clab): the SSH shell runs lines in them."""

    def container(self, lab: str, node: str) -> str:
        """The name of a node's container."""
        ...
