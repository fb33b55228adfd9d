"""The bring-up every runtime shares, composed with the runtime's own Placement.

`bring_up`: check the name, recover from a crashed `up`, pick the management subnet, record the
lab's state before anything exists, create the nodes, wire the links, prepare every node and
launch its daemons, in parallel and in the order twin.runtime.launch_order gives; on any failure
remove everything (`tear_down`).
`tear_down`: kill what runs in the lab's namespaces, remove what the placement made (containers),
the namespaces, the run directory.

What differs between runtimes is a Placement: how nodes come to exist, how links are made and how
one node is prepared and launched. A node whose processes the runtime runs (twin's FRR switch, an FRR
router, a server) is prepared by its kind (`prepare_linux_node`: NodeKind.prepare, twin.kinds), given a
NodeProcesses: how to run things in that node.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Protocol

from twin.host.processes import processes_using, stop_processes
from twin.host.rundir import (
    known_labs,
    lab_dir,
    load_state,
    node_dir,
    remove_lab_dir,
    save_plan,
    save_state,
)
from twin.host.shell import ip_batch, list_netns, run
from twin.kinds.held_start import HeldStart
from twin.kinds.protocol import NodeKind, NodeLaunch, NodeProcesses, NodeStart
from twin.kinds.registry import kind_of
from twin.model import phases
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.names import check_lab_name
from twin.model.plan import NodePlan, Plan
from twin.model.state import LabState, NodeState
from twin.runtime import neighbours
from twin.runtime.frr_statedirs import remove_statedirs
from twin.runtime.launch_order import start_nodes
from twin.runtime.protocol import NO_HOOKS, ProgressFn, StateFn, UpHooks
from twin.runtime.wiring import (
    host_routes,
    node_netns,
    owned_netns,
    pick_mgmt_subnet,
    pidfile_pids,
    preflight,
)


class Placement(Protocol):
    """How one runtime makes a lab's nodes and links exist and starts each node."""

    def describe(self, state: LabState) -> None:
        """Fill in the state fields this runtime adds before anything is created."""
        ...

    def create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
                     mgmt_ip: dict[str, IPv4Address]) -> None:
        """Make every node exist with its namespace attached as `tw.<lab>.<node>`, and management."""
        ...

    def wire_links(self, lab: str, plan: Plan) -> None:
        ...

    def prepare_node(self, start: NodeStart) -> NodeLaunch:
        """Prepare one node up to its routing daemons (a switch's databases loaded, its kernel
        programmed, its FRR config checked); returns its launch. What a node needs besides its
        daemons is done before they start, and apart from converging bgpds: only nodes prepared
        within the first bgpd's first second launch before every node is prepared
        (twin.runtime.launch_order)."""
        ...

    def remove_nodes(self, lab: str) -> list[str]:
        """Remove what create_nodes made beyond namespaces and processes; returns what was removed."""
        ...


# -- the lab ------------------------------------------------------------------------------------

def bring_up(runtime: str, lab: str, plan: Plan, switches: NodeKind, placement: Placement,
             progress: ProgressFn, templates: Path | None, hooks: UpHooks = NO_HOOKS) -> LabState:
    """Create every node and link of `plan` and start them, calling `hooks` on the way (UpHooks);
    on failure leave nothing behind. `switches`: the kind of the lab's switches (twin's FRR switch,
    or SONiC-VS)."""
    check_lab_name(lab)
    preflight()
    old = load_state(lab)
    if old is not None and old.phase == "up" and owned_netns(lab):
        raise TwinError(f"lab '{lab}' is already up; 'twin down --name {lab}' first, "
                        "or pick another --name")
    if old is not None or owned_netns(lab):
        tear_down(lab, placement)  # recover from a crash half-way through an earlier `up`
    try:
        return _up(runtime, lab, plan, switches, placement, progress, templates, hooks)
    except BaseException:
        tear_down(lab, placement)
        raise


def tear_down(lab: str, placement: Placement) -> list[str]:
    """Remove everything the lab created; idempotent. Returns what was removed."""
    state = load_state(lab)
    namespaces = set(owned_netns(lab))
    if state is not None:
        namespaces |= {ns for ns in state.netns if ns in set(list_netns())}
    removed: list[str] = []
    pids: set[int] = set()
    for ns in namespaces:
        out = run(["ip", "netns", "pids", ns], check=False).stdout.split()
        pids |= {int(p) for p in out if p.isdigit()}
    pids |= pidfile_pids(lab_dir(lab))
    pids |= set(processes_using(lab_dir(lab)))  # helpers in the host's namespaces: a drill's probe
    stop_processes(sorted(pids), grace=3.0)
    if pids:
        removed.append(f"{len(pids)} processes")
    removed += placement.remove_nodes(lab)
    if namespaces:
        ip_batch([f"netns delete {ns}" for ns in sorted(namespaces)], force=True)
        removed.append(f"{len(namespaces)} namespaces")
    host_if = f"tw-{lab}"
    if run(["ip", "link", "show", "dev", host_if], check=False).returncode == 0:
        run(["ip", "link", "delete", "dev", host_if], check=False)
    if lab_dir(lab).exists():
        remove_lab_dir(lab)
        removed.append(str(lab_dir(lab)))
    removed += remove_statedirs(lab)
    removed += neighbours.restore_when_idle(lab)
    left = owned_netns(lab)
    if left:
        raise RuntimeBackendError(f"could not remove namespaces of lab '{lab}': {', '.join(left)}")
    return removed


def _up(runtime: str, lab: str, plan: Plan, switches: NodeKind, placement: Placement, progress: ProgressFn,
        templates: Path | None, hooks: UpHooks) -> LabState:
    others = [state.mgmt_subnet for name in known_labs() if name != lab
              if (state := load_state(name)) is not None and state.mgmt_subnet]
    subnet = pick_mgmt_subnet(len(plan.switches), [IPv4Network(s) for s in others] + host_routes())
    hosts = list(subnet.hosts())
    mgmt_ip = {n.name: hosts[i + 1] for i, n in enumerate(plan.switches)}
    state = LabState(
        lab=lab, runtime=runtime, phase="creating", topology=plan.source, created=time.time(),
        mgmt_subnet=str(subnet), mgmt_host=str(hosts[0]), host_iface=f"tw-{lab}",
        netns=[node_netns(lab, n.name) for n in plan.nodes],
        nodes=[NodeState(name=n.name, role=n.role, kind=n.kind, netns=node_netns(lab, n.name),
                         mgmt=f"{mgmt_ip[n.name]}" if n.name in mgmt_ip else None)
               for n in plan.nodes],
    )
    placement.describe(state)
    save_state(state)  # before anything exists: a crash from here on is recoverable
    save_plan(lab, plan)
    lab_dir(lab).chmod(0o755)
    if hooks.created is not None:
        hooks.created(lab)
    state.notes += neighbours.size_for(plan)

    nodes = len(plan.nodes)
    progress(f"creating {nodes} nodes", 0, nodes)
    placement.create_nodes(state, plan, subnet, mgmt_ip)
    phases.reach("namespaces")
    progress(f"wiring {len(plan.links)} links", 0, nodes)
    placement.wire_links(lab, plan)
    phases.reach("wiring")

    recorder = phases.current()  # the worker threads mark milestones on the caller's recorder
    held = HeldStart()
    launches: dict[str, NodeLaunch] = {}

    def prepare(node: NodePlan) -> None:
        with phases.recording(recorder):
            launches[node.name] = placement.prepare_node(NodeStart(
                lab, plan, node, kind_of(node, switches), node_netns(lab, node.name),
                str(mgmt_ip.get(node.name, "")), subnet.prefixlen, templates, held))

    def launch(node: NodePlan) -> list[str]:
        with phases.recording(recorder):
            return launches[node.name]()

    def prepared() -> None:
        phases.reach("prepared")
        if hooks.prepared is not None:
            hooks.prepared(state)

    state.notes += start_nodes(plan.nodes, prepare, launch, prepared, _counter("preparing nodes", nodes, progress),
                               _counter("starting nodes", nodes, progress))
    _release(held, state, hooks.started)
    state.phase = "up"
    save_state(state)
    progress("all nodes started", nodes, nodes)
    return state


def _counter(what: str, total: int, progress: ProgressFn) -> Callable[[], None]:
    """A tick that reports `what (done/total)`; launches tick from several threads."""
    done = 0
    lock = threading.Lock()

    def tick() -> None:
        nonlocal done
        with lock:
            done += 1
            progress(f"{what} ({done}/{total})", done, total)

    return tick


def _release(held: HeldStart, state: LabState, on_started: StateFn | None) -> None:
    """The held daemons started (bfdd, as each switch's BGP comes up) while `on_started` runs; both
    are done (or failed) when this returns."""
    if on_started is None:
        held.release()
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        releasing = pool.submit(contextvars.copy_context().run, held.release)  # phases marked there too
        try:
            on_started(state)
        except BaseException:
            wait([releasing])
            raise
        releasing.result()


# -- starting one node whose processes the runtime runs: twin's FRR switch, an FRR router, a server --

def prepare_linux_node(start: NodeStart, procs: NodeProcesses) -> NodeLaunch:
    """Prepare a node whose processes the runtime runs (in its namespace or its container), as its
    kind does it (NodeKind.prepare); returns its launch."""
    rundir = node_dir(start.lab, start.node.name)
    rundir.mkdir(parents=True, exist_ok=True)
    return start.kind.prepare(start, procs, rundir)
