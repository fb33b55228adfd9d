"""What every fault kind is (`FaultKind`), the fault a drill resolved from its target (`Fault`), and
what a kind may use to act on the lab (`LabAccess`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from twin.host.shell import run
from twin.lab.running import RunningLab
from twin.model.drill import Slo, Step
from twin.model.errors import DrillError
from twin.model.plan import LinkPlan, Plan
from twin.model.state import LabState
from twin.runtime.registry import Runtime

# One end of a link: (node, SONiC port name)
End = tuple[str, str]
# A link, its two ends sorted so that either spelling is the same key
LinkKey = tuple[End, End]


def link_key(a: End, b: End) -> LinkKey:
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True)
class Session:
    """One BGP session as seen from `node`: its neighbor `peer` at address `peer_ip`."""

    node: str
    peer: str
    peer_ip: str


@dataclass(frozen=True)
class Fault:
    """One fault of a drill, its target resolved against the plan (drills/targets.py)."""

    kind: str
    target: str                               # canonical: `spine1` or `leaf1:Ethernet128`
    nodes: frozenset[str] = frozenset()       # nodes out of the fabric (lost or silent)
    links: frozenset[LinkKey] = frozenset()   # links (or sessions) out of the fabric
    link: LinkPlan | None = None              # the link a link fault acts on
    sessions: tuple[Session, ...] = field(default=())  # sessions the fault should bring down
    topology_change: bool = True              # routing is expected to change (its kind's changes_topology)


@dataclass(frozen=True)
class LabAccess:
    """The running lab a fault acts on, and the ways in that every kind shares."""

    runtime: Runtime
    running: RunningLab

    @property
    def state(self) -> LabState:
        return self.running.state

    @property
    def plan(self) -> Plan:
        return self.running.plan

    def node_cmd(self, node: str, cmd: list[str], input: str | None = None) -> None:
        """Run `cmd` inside `node`; a DrillError with its output when it fails."""
        proc = run(self.runtime.exec_argv(self.state, node, cmd), input=input, check=False)
        if proc.returncode != 0:
            raise DrillError(f"{node}: {' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")

    def config_field(self, node: str, table: str, key: str, field: str, value: str | None = None,
                     delete: bool = False) -> str | None:
        """Read one field of the switch's running CONFIG_DB (None: absent), then set it to `value` or,
        with `delete`, remove it; returns what it held before.

        Written with `sonic-db-cli CONFIG_DB`, as SONiC's `config interface mtu` and `config bgp shutdown
        neighbor` write: the running config only, which the config daemons program; never saved to
        config_db.json (only `config save` writes that), so a fault can never outlive the switch's next
        boot, whatever happens to the drill."""
        redis_key = f"{table}|{key}"
        if self._db_cli(node, "EXISTS", redis_key).strip() != "1":  # a field set on no entry would create one
            raise DrillError(f"{node} has no {redis_key} in its CONFIG_DB to change")
        old = self._db_cli(node, "HGET", redis_key, field).rstrip("\n") or None
        if delete:
            self._db_cli(node, "HDEL", redis_key, field)
        elif value is not None:
            self._db_cli(node, "HSET", redis_key, field, value)
        return old

    def _db_cli(self, node: str, *args: str) -> str:
        cmd = ["sonic-db-cli", "CONFIG_DB", *args]
        proc = run(self.runtime.exec_argv(self.state, node, cmd), check=False)
        if proc.returncode != 0:
            raise DrillError(f"{node}: {' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
        return proc.stdout

    def link_end(self, fault: Fault) -> tuple[str, str]:
        """The node and kernel interface of a link fault's near end (`leaf1:Ethernet128`)."""
        node, port = fault.target.split(":")
        return node, self.plan.node(node).iface(port).kernel

    def node_links(self, node: str) -> Sequence[str]:
        return [i.kernel for i in self.plan.node(node).interfaces]


@dataclass(frozen=True)
class KindCheck:
    """What a kind's own check saw after an injection or a restore (mtu-mismatch: `twin verify`'s
    MTU check and a jumbo DF ping): named pass/fail checks for the report, a note, and, after an
    injection, when the check first saw the fault (None: it did not) and what it measured
    (warm-reboot: the control plane's downtime)."""

    checks: dict[str, bool]
    note: str
    detect_ms: float | None = None
    figures: dict[str, float] = field(default_factory=dict)  # measurements of the kind's own, named with units


class FaultKind:
    """One kind of fault: how to inject and restore it, and what the rest of a drill must know of it.

    A subclass sets the class attributes and implements `inject` and `restore`; both return how the
    fault was done, in words, for the report. One instance serves every fault of its kind in a drill,
    so it may remember what `inject` changed for `restore` to put back.
    """

    kind: ClassVar[str]                          # the name, one of model.drill.KINDS
    role: ClassVar[str | None] = None            # the role of the node it targets; None: it targets a link
    changes_topology: ClassVar[bool] = True      # False: routing should not change (gray, MTU)
    tool: ClassVar[tuple[str, str] | None] = None  # (program, Debian package) it runs in the nodes
    hold_ms: ClassVar[float | None] = None       # its length when the step sets none; None: until settled
    repeated: ClassVar[bool] = False             # the step's flaps x period_ms make it a train (schedule.py)
    slo: ClassVar[Slo | None] = None             # built-in limits, under the lab's and the scenario's (slo.py)

    def __init_subclass__(cls) -> None:
        """Each kind names itself: a subclass that inherited its parent's `kind` would register twice."""
        super().__init_subclass__()
        if not isinstance(cls.__dict__.get("kind"), str):
            raise TypeError(f"fault kind class {cls.__name__} must set `kind` to its own name")

    def __init__(self, lab: LabAccess) -> None:
        self.lab = lab

    def inject(self, fault: Fault, step: Step) -> str:
        raise NotImplementedError

    def restore(self, fault: Fault, step: Step) -> str:
        raise NotImplementedError

    def verify(self, fault: Fault, injected: bool) -> KindCheck | None:
        """A check of the kind's own, run right after each injection and restore (None: no check)."""
        return None
