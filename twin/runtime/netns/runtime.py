"""The embedded default runtime: one network namespace per node, veth pairs, real FRR.

Names (twin.runtime.wiring): node namespaces are `tw.<lab>.<node>`, the management namespace
`tw.<lab>` (a bridge `br0` with one veth per switch, `eth0` inside the switch) and the host's end
`tw-<lab>`. The bring-up is twin.runtime.bringup's, with the placement below: namespaces made with
`ip netns add`, daemons started with `ip netns exec`, imported hosts' exec lines confined.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

from twin.host.rundir import lab_dir, node_dir
from twin.host.shell import ip_batch, netns_argv, run
from twin.kinds.protocol import NodeKind, NodeLaunch, NodeStart
from twin.kinds.registry import switch_kind
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.plan import NodePlan, Plan
from twin.model.state import LabState
from twin.runtime import wiring
from twin.runtime.bringup import bring_up, prepare_linux_node, tear_down
from twin.runtime.confine import HOW as CONFINED
from twin.runtime.confine import confined_argv
from twin.runtime.protocol import NO_HOOKS, ProgressFn, UpHooks
from twin.switch.cli.sonic_cli import tool_argv
from twin.switch.frr.frr_daemons import daemon_env, vtysh


def create_namespaces(state: LabState, plan: Plan, subnet: IPv4Network) -> None:
    """One namespace per node, and the management bridge in its own namespace (`tw.<lab>`)."""
    lab = state.lab
    ip_batch([f"netns add {ns}" for ns in state.netns])
    mgmt = wiring.mgmt_netns(lab)
    host_lines = [f"link add name tw-{lab} type veth peer name up0 netns {mgmt}"]
    mgmt_lines = ["link set dev lo up", "link add br0 type bridge", "link set dev br0 up",
                  "link set dev up0 master br0 up"]
    for i, n in enumerate(plan.switches):
        index = wiring.MGMT_INDEX + 2 * i
        host_lines.append(f"link add name eth0 index {index} netns {wiring.node_netns(lab, n.name)} "
                          f"type veth peer name m{i} index {index + 1} netns {mgmt}")
        mgmt_lines.append(f"link set dev m{i} master br0 up")
    ip_batch(host_lines)
    ip_batch(mgmt_lines, netns=mgmt)
    ip_batch([f"address add {state.mgmt_host}/{subnet.prefixlen} dev tw-{lab}", f"link set dev tw-{lab} up"])


class NamespacePlacement:
    """Nodes are bare network namespaces; their processes run on the host inside them."""

    # -- Placement ----------------------------------------------------------------------------

    def describe(self, state: LabState) -> None:
        state.mgmt_netns = wiring.mgmt_netns(state.lab)
        state.netns = [wiring.mgmt_netns(state.lab), *state.netns]

    def create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
                     mgmt_ip: dict[str, IPv4Address]) -> None:
        create_namespaces(state, plan, subnet)

    def wire_links(self, lab: str, plan: Plan) -> None:
        ip_batch(wiring.link_lines(lab, plan), path=lab_dir(lab) / "wiring.batch")

    def prepare_node(self, start: NodeStart) -> NodeLaunch:
        return prepare_linux_node(start, self)

    def remove_nodes(self, lab: str) -> list[str]:
        return []  # namespaces and processes are all there is

    # -- NodeProcesses ------------------------------------------------------------------------

    def prepare_rundir(self, lab: str, node: NodePlan, rundir: Path) -> None:
        shutil.chown(rundir, "frr", "frr")

    def mgmt_lines(self, mgmt_ip: str, plen: int) -> list[str]:
        return [f"address add {mgmt_ip}/{plen} dev eth0", "link set dev eth0 up"]

    def start_daemon(self, lab: str, node: NodePlan, argv: list[str]) -> None:
        run(netns_argv(wiring.node_netns(lab, node.name), argv), env=daemon_env())

    def exec_line(self, lab: str, node: NodePlan, line: str) -> str:
        """Run one of an imported host's `exec:` lines inside the node, confined (twin.runtime.confine),
        as containerlab runs it inside the node's container; returns what `twin up` reports it ran."""
        argv = confined_argv(wiring.node_netns(lab, node.name), node_dir(lab, node.name), node.name, line)
        proc = run(argv, check=False)
        if proc.returncode != 0:
            raise RuntimeBackendError(f"{node.name}: exec line '{line}' failed (exit {proc.returncode}): "
                                      f"{(proc.stderr or proc.stdout).strip()[-500:]}")
        return f"{node.name}: ran exec line '{line}' ({CONFINED})"


class NetnsRuntime:
    name = "netns"
    # A SONiC release's FRR templates to render switches with (twin.stages.render.sonic_templates); None:
    # twin's own renderer.
    templates: Path | None = None

    def __init__(self, image: str | None = None) -> None:
        if image:
            raise TwinError("--image needs a container runtime: add --runtime docker (or clab)")
        self.switches: NodeKind = switch_kind(None)
        self.placement = NamespacePlacement()

    def labs(self) -> list[str]:
        return wiring.netns_labs()

    def up(self, lab: str, plan: Plan, progress: ProgressFn, hooks: UpHooks = NO_HOOKS) -> LabState:
        return bring_up(self.name, lab, plan, self.switches, self.placement, progress, self.templates, hooks)

    def down(self, lab: str) -> list[str]:
        return tear_down(lab, self.placement)

    def exec_argv(self, state: LabState, node: str, cmd: Sequence[str]) -> list[str]:
        ns = state.node(node)
        argv = list(cmd)
        tool = tool_argv(node_dir(state.lab, node), argv) if ns.kind == "switch" else None
        if tool is not None:
            return netns_argv(ns.netns, tool)
        if argv and argv[0] == "vtysh" and "--vty_socket" not in argv:
            argv = vtysh(node_dir(state.lab, node), *argv[1:])
        return netns_argv(ns.netns, argv)

    def set_link_state(self, state: LabState, node: str, ifaces: Sequence[str], up: bool) -> None:
        wiring.set_link_state(state, node, ifaces, up)

    def node_loss(self, state: LabState, node: str, ifaces: Sequence[str], lost: bool) -> str:
        wiring.set_link_state(state, node, ifaces, not lost)
        return f"all {len(ifaces)} links of {node} down at once"

    def node_pids(self, state: LabState, node: str) -> list[int]:
        return wiring.netns_pids(state, node)
