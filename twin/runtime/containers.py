"""What the container runtimes (docker, clab) share: nodes are containers whose network namespaces are
attached as `tw.<lab>.<node>`, so links, faults and FIB watching work as on the embedded runtime.

Helpers here are composed by twin.runtime.docker and twin.runtime.clab; neither inherits the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import docker.errors

from twin.host.dockerapi import LAB_LABEL, client, engine_running
from twin.host.rundir import node_dir
from twin.host.shell import run
from twin.kinds.protocol import NodeKind
from twin.kinds.registry import switch_kind
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.plan import NodePlan, Plan
from twin.model.state import LabState
from twin.runtime.image import ImageSpec, ensure_image
from twin.runtime.protocol import ProgressFn
from twin.runtime.wiring import node_netns, set_link_state
from twin.switch.cli.sonic_cli import tool_argv
from twin.switch.frr.frr_daemons import vtysh


def docker_labs() -> list[str]:
    """Labs that have containers (none when there is no Docker engine to ask)."""
    if not engine_running():
        return []
    return sorted({c.labels[LAB_LABEL] for c in client().containers.list(all=True, filters={"label": LAB_LABEL})})


class SwitchImage:
    """The lab's switch image, the kind of switch it makes, and the image servers and routers run."""

    def __init__(self, image: str | None) -> None:
        self.image = image or ImageSpec().name
        self.switches: NodeKind = switch_kind(self.image)
        # Servers run the switch image when it is a Linux one; beside SONiC-VS switches, twin's FRR image.
        self.host_image = self.image if self.switches.facts.runs_linux_nodes else ImageSpec().name

    def check_plan(self, plan: Plan) -> Plan:
        """The plan as the switch kind runs it (its container interface names); TwinError when it cannot."""
        problems = self.switches.plan_problems(plan)
        if problems:
            raise TwinError(f"{plan.source}: {problems[0]}")
        return container_names(plan, self.switches)

    def ready(self, progress: ProgressFn) -> None:
        """The switch image is on this machine and twin's FRR image is built when the lab needs it."""
        local = ImageSpec().name
        if self.image != local:
            try:
                client().images.get(self.image)
            except docker.errors.ImageNotFound:
                raise TwinError(f"image {self.image} is not on this machine and no registry can be reached: "
                                f"{self.switches.facts.image_hint}, or use the local FRR image {local} "
                                "(omit --image)") from None
        if self.host_image == local:
            ensure_image(progress=lambda step: progress(f"switch image: {step}", 0, 1))

    def image_of(self, node: NodePlan) -> str:
        return self.host_image if node.kind == "host" else self.image


def container_names(plan: Plan, switches: NodeKind) -> Plan:
    """The plan with every switch port's kernel name as the switch kind names it in its container."""
    nodes = []
    for node in plan.nodes:
        if node.kind == "switch":
            ifaces = [i.model_copy(update={"kernel": switches.container_iface(i)}) for i in node.interfaces]
            if ifaces != node.interfaces:
                node = node.model_copy(update={"interfaces": ifaces})
        nodes.append(node)
    return plan.model_copy(update={"nodes": nodes})


def own_cli(state: LabState, node: str) -> bool:
    """Whether the node's vtysh and CLI run as they are (SONiC-VS), not pointed at its run directory."""
    return state.node(node).kind == "switch" and switch_kind(state.image).facts.own_cli


def exec_argv(state: LabState, node: str, container: str, cmd: Sequence[str]) -> list[str]:
    """`docker exec` of `cmd` in the node's container, pointed at twin's daemons where twin runs them."""
    argv = list(cmd)
    if not own_cli(state, node):
        tool = tool_argv(node_dir(state.lab, node), argv)  # the switch's databases are on its run dir
        if tool is not None:
            return tool
        if argv and argv[0] == "vtysh" and "--vty_socket" not in argv:
            argv = vtysh(node_dir(state.lab, node), *argv[1:])
    return ["docker", "exec", "-i", container, *argv]


def run_in(container: str, node: str, argv: Sequence[str], env: dict[str, str] | None = None) -> str:
    """Run `argv` in a container; RuntimeBackendError with its output when it fails."""
    code, out = client().containers.get(container).exec_run(list(argv), environment=env)
    text = out.decode(errors="replace") if isinstance(out, bytes) else str(out)
    if code != 0:
        raise RuntimeBackendError(f"{node}: {' '.join(argv)} failed in its container (exit {code}): "
                                  f"{text.strip()[-500:]}")
    return text


def attach_netns(lab: str, node: str, pid: int) -> None:
    """Name the container's network namespace as the embedded runtime names a node's."""
    run(["ip", "netns", "attach", node_netns(lab, node), str(pid)])


def pause_node(state: LabState, node: str, container: str, ifaces: Sequence[str], lost: bool) -> str:
    """Power loss of a container: carrier drops on every link and its processes freeze."""
    ctr = client().containers.get(container)
    if lost:
        set_link_state(state, node, ifaces, False)
        ctr.pause()
    else:
        ctr.unpause()
        set_link_state(state, node, ifaces, True)
    return f"docker pause of {ctr.name} and its {len(ifaces)} links down"


def remove_containers(lab: str) -> list[str]:
    """Remove the lab's containers and networks (found by label); nothing without a Docker engine."""
    try:
        c = client()
    except TwinError:
        return []
    removed = []
    containers = c.containers.list(all=True, filters={"label": f"{LAB_LABEL}={lab}"})
    for ctr in containers:
        ctr.remove(force=True, v=True)
    if containers:
        removed.append(f"{len(containers)} containers")
    for net in c.networks.list(filters={"label": f"{LAB_LABEL}={lab}"}):
        net.remove()
        removed.append(f"network {net.name}")
    return removed


def runner(container: str, node: str) -> Callable[[list[str]], str]:
    """run_in bound to one node's container: how a kind that boots in its container runs commands there."""
    return lambda argv: run_in(container, node, argv)
