"""The docker runtime: every node is a container, wired by veth pairs as containerlab wires them.

Containers are created through the Docker Engine API from the locally built switch image
(`twin-switch:<version>`, see twin.runtime.image) or from `docker-sonic-vs:<tag>` (twin.kinds.sonic_vs).
Each container's network namespace is also attached under the name the embedded runtime uses
(`ip netns attach tw.<lab>.<node> <pid>`), so links are made, faults injected, FIBs watched and
gNMI served exactly as on the embedded runtime, while the switch OS runs inside the container:
its own FRR binaries, filesystem and process tree. The node's run directory is bind-mounted at
the same path, so FRR's vty sockets, pid files and logs are where the rest of twin looks.

Management: a Docker bridge network per lab (bridge `tw-<lab>` on the host, the lab's
management subnet, static addresses), attached to switches as `eth0`. Servers get no management.
Containers get NET_ADMIN and NET_RAW (FRR programs routes, BFD and ping need raw sockets) and
SYS_ADMIN, never `--privileged` (which fails where CAP_SYS_RESOURCE is not in the bounding set).

The bring-up is twin.runtime.bringup's with ContainerPlacement; container helpers shared with the
clab runtime are in twin.runtime.containers.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

import docker.types

from twin.host.dockerapi import LAB_LABEL, NODE_LABEL, client, container_name, network_name
from twin.host.rundir import lab_dir, node_dir
from twin.host.shell import ip_batch
from twin.kinds.protocol import NodeKind, NodeLaunch, NodeStart
from twin.kinds.registry import kind_of
from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan, Plan
from twin.model.state import LabState
from twin.runtime import containers, wiring
from twin.runtime.bringup import bring_up, prepare_linux_node, tear_down
from twin.runtime.protocol import NO_HOOKS, ProgressFn, UpHooks
from twin.switch.frr.frr_daemons import daemon_env

CAPABILITIES = ["NET_ADMIN", "NET_RAW", "SYS_ADMIN"]
MEMORY_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_ARENA_MAX")


def container_spec(lab: str, node: NodePlan, image: str) -> dict[str, Any]:
    """Keyword arguments of the Engine API's create_container (host config added by the caller)."""
    return {"image": image, "name": container_name(lab, node.name), "hostname": node.name,
            "labels": {LAB_LABEL: lab, NODE_LABEL: node.name, "org.twin.role": node.role},
            "detach": True}


def host_config_spec(kind: NodeKind, rundir: Path) -> dict[str, Any]:
    """Keyword arguments of create_host_config: capabilities, binds, init; no --privileged."""
    facts = kind.facts.container
    binds = {str(rundir): {"bind": str(rundir), "mode": "rw"}}
    binds.update(facts.binds(rundir))
    return {"cap_add": CAPABILITIES, "binds": binds, "init": facts.init, "network_mode": facts.network_mode,
            "security_opt": facts.security_opt}


class ContainerPlacement:
    """Nodes are containers made through the Engine API on a Docker bridge network per lab; links
    are veth pairs between their attached namespaces; daemons start with `docker exec`."""

    def __init__(self, images: containers.SwitchImage) -> None:
        self.images = images

    # -- Placement ----------------------------------------------------------------------------

    def describe(self, state: LabState) -> None:
        state.image = self.images.image

    def create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
                     mgmt_ip: dict[str, IPv4Address]) -> None:
        api = client().api
        api.create_network(
            network_name(state.lab), driver="bridge", internal=True, labels={LAB_LABEL: state.lab},
            ipam=docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(
                subnet=str(subnet), gateway=state.mgmt_host)]),
            options={"com.docker.network.bridge.name": network_name(state.lab)})

        def create(node: NodePlan) -> None:
            rundir = node_dir(state.lab, node.name)
            rundir.mkdir(parents=True, exist_ok=True)
            kind = kind_of(node, self.images.switches)
            kind.before_container(state.lab, plan, node)
            host_config = api.create_host_config(**host_config_spec(kind, rundir))
            spec = container_spec(state.lab, node, self.images.image_of(node))
            spec.update(kind.facts.container.create_options())
            net = None
            if node.name in mgmt_ip:
                net = api.create_networking_config({network_name(state.lab): api.create_endpoint_config(
                    ipv4_address=str(mgmt_ip[node.name]))})  # type: ignore[arg-type]  # stub: a dict of them
            cid = api.create_container(**spec, host_config=host_config, networking_config=net)["Id"]
            api.start(cid)
            pid = int(api.inspect_container(cid)["State"]["Pid"])
            if pid <= 0:
                raise RuntimeBackendError(f"container {container_name(state.lab, node.name)} did not start: "
                                          f"{api.logs(cid, tail=20).decode(errors='replace')}")
            containers.attach_netns(state.lab, node.name, pid)

        with ThreadPoolExecutor(max_workers=wiring.WORKERS) as pool:
            list(pool.map(create, plan.nodes))

    def wire_links(self, lab: str, plan: Plan) -> None:
        ip_batch(wiring.link_lines(lab, plan), path=lab_dir(lab) / "wiring.batch")

    def prepare_node(self, start: NodeStart) -> NodeLaunch:
        container = container_name(start.lab, start.node.name)
        booted = start.kind.boot_in_container(start, container, containers.runner(container, start.node.name),
                                              supervisord=True)   # SONiC-VS boots whole in its container
        return booted if booted is not None else prepare_linux_node(start, self)

    def remove_nodes(self, lab: str) -> list[str]:
        return containers.remove_containers(lab)

    # -- NodeProcesses ------------------------------------------------------------------------

    def prepare_rundir(self, lab: str, node: NodePlan, rundir: Path) -> None:
        # FRR inside the image runs as the image's frr user, whose uid is not the host's.
        rundir.chmod(0o777)
        containers.run_in(container_name(lab, node.name), node.name,
                          ["sh", "-c", "mkdir -p /var/run/frr && chown frr:frr /var/run/frr"])

    def mgmt_lines(self, mgmt_ip: str, plen: int) -> list[str]:
        return []  # Docker gave eth0 its address on the lab's network

    def start_daemon(self, lab: str, node: NodePlan, argv: list[str]) -> None:
        env = {k: v for k, v in daemon_env().items() if k in MEMORY_ENV}
        containers.run_in(container_name(lab, node.name), node.name, argv, env)

    def exec_line(self, lab: str, node: NodePlan, line: str) -> str:
        # inside the node's container, as containerlab runs it
        containers.run_in(container_name(lab, node.name), node.name, ["sh", "-c", line])
        return f"{node.name}: ran exec line '{line}' (in its container)"


class DockerRuntime:
    name = "docker"
    templates: Path | None = None

    def __init__(self, image: str | None = None) -> None:
        self.images = containers.SwitchImage(image)
        self.placement = ContainerPlacement(self.images)

    @property
    def image(self) -> str:
        return self.images.image

    def labs(self) -> list[str]:
        return sorted(set(wiring.netns_labs()) | set(containers.docker_labs()))

    def up(self, lab: str, plan: Plan, progress: ProgressFn, hooks: UpHooks = NO_HOOKS) -> LabState:
        plan = self.images.check_plan(plan)
        self.images.ready(progress)
        return bring_up(self.name, lab, plan, self.images.switches, self.placement, progress, self.templates, hooks)

    def down(self, lab: str) -> list[str]:
        return tear_down(lab, self.placement)

    def exec_argv(self, state: LabState, node: str, cmd: Sequence[str]) -> list[str]:
        return containers.exec_argv(state, node, self.container(state.lab, node), cmd)

    def set_link_state(self, state: LabState, node: str, ifaces: Sequence[str], up: bool) -> None:
        wiring.set_link_state(state, node, ifaces, up)

    def node_loss(self, state: LabState, node: str, ifaces: Sequence[str], lost: bool) -> str:
        return containers.pause_node(state, node, self.container(state.lab, node), ifaces, lost)

    def node_pids(self, state: LabState, node: str) -> list[int]:
        return wiring.netns_pids(state, node)

    def container(self, lab: str, node: str) -> str:
        """The name of a node's container."""
        return container_name(lab, node)
