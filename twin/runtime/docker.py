"""The docker runtime: every node is a container, wired by veth pairs as containerlab wires them.

Containers are created through the Docker Engine API from the locally built switch image
(`twin-switch:<version>`, see image.py) or from `docker-sonic-vs:<tag>` (see sonic_vs.py).
Each container's network namespace is also attached under the name the embedded runtime uses
(`ip netns attach tw.<lab>.<node> <pid>`), so links are made, faults injected, FIBs watched and
gNMI served exactly as on the embedded runtime, while the switch OS runs inside the container:
its own FRR binaries, filesystem and process tree. The node's run directory is bind-mounted at
the same path, so FRR's vty sockets, pid files and logs are where the rest of twin looks.

Management: a Docker bridge network per lab (bridge `tw-<lab>` on the host, the lab's
management subnet, static addresses), attached to switches as `eth0`. Servers get no management.
Containers get NET_ADMIN and NET_RAW (FRR programs routes, BFD and ping need raw sockets) and
SYS_ADMIN, never `--privileged` (which fails where CAP_SYS_RESOURCE is not in the bounding set).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

import docker.errors

from twin.host.dockerapi import LAB_LABEL, NODE_LABEL, client, container_name, engine_running, network_name
from twin.host.rundir import LabState, node_dir
from twin.host.shell import run
from twin.kinds import sonic_vs
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.plan import NodePlan, Plan
from twin.runtime.image import ImageSpec, ensure_image
from twin.runtime.netns import WORKERS, NetnsRuntime, node_netns
from twin.runtime.registry import ProgressFn
from twin.switch.frr_daemons import daemon_env, vtysh
from twin.switch.sonic_cli import tool_argv

CAPABILITIES = ["NET_ADMIN", "NET_RAW", "SYS_ADMIN"]
MEMORY_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_ARENA_MAX")


def container_spec(lab: str, node: NodePlan, image: str) -> dict[str, Any]:
    """Keyword arguments of the Engine API's create_container (host config added by the caller)."""
    return {"image": image, "name": container_name(lab, node.name), "hostname": node.name,
            "labels": {LAB_LABEL: lab, NODE_LABEL: node.name, "org.twin.role": node.role},
            "detach": True}


def host_config_spec(node: NodePlan, rundir: Path, sonic: bool) -> dict[str, Any]:
    """Keyword arguments of create_host_config: capabilities, binds, init; no --privileged."""
    binds = {str(rundir): {"bind": str(rundir), "mode": "rw"}}
    if sonic:
        binds.update(sonic_vs.binds(rundir))
    return {"cap_add": CAPABILITIES, "binds": binds, "init": not sonic,
            "network_mode": "none" if node.kind == "host" else None,
            "security_opt": ["apparmor=unconfined"] if sonic else None}


def docker_labs() -> list[str]:
    """Labs that have containers (none when there is no Docker engine to ask)."""
    if not engine_running():
        return []
    return sorted({c.labels[LAB_LABEL] for c in client().containers.list(all=True, filters={"label": LAB_LABEL})})


class DockerRuntime(NetnsRuntime):
    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        self.image = image or ImageSpec().name
        self.sonic = sonic_vs.is_sonic_image(self.image)
        # Servers run the switch image when it is a Linux one; beside SONiC-VS switches, twin's FRR image.
        self.host_image = ImageSpec().name if self.sonic else self.image

    # -- the protocol, where it differs from the embedded runtime -----------------------------

    def labs(self) -> list[str]:
        return sorted(set(super().labs()) | set(docker_labs()))

    def exec_argv(self, state: LabState, node: str, cmd: Sequence[str]) -> list[str]:
        argv = list(cmd)
        if not self._sonic_node(state, node):
            tool = tool_argv(node_dir(state.lab, node), argv)  # the switch's databases are on its run dir
            if tool is not None:
                return tool
            if argv and argv[0] == "vtysh" and "--vty_socket" not in argv:
                argv = vtysh(node_dir(state.lab, node), *argv[1:])
        return ["docker", "exec", "-i", self.container(state.lab, node), *argv]

    def node_loss(self, state: LabState, node: str, ifaces: Sequence[str], lost: bool) -> str:
        """Power loss of a container: carrier drops on every link and its processes freeze."""
        ctr = client().containers.get(self.container(state.lab, node))
        if lost:
            self.set_link_state(state, node, ifaces, False)
            ctr.pause()
        else:
            ctr.unpause()
            self.set_link_state(state, node, ifaces, True)
        return f"docker pause of {ctr.name} and its {len(ifaces)} links down"

    # -- hooks of the shared bring-up ---------------------------------------------------------

    def up(self, lab: str, plan: Plan, progress: ProgressFn) -> LabState:
        if self.sonic:
            missing = sonic_vs.missing_ports(plan)
            if missing:
                raise TwinError(f"{plan.source}: {missing[0]}")
            plan = sonic_vs.with_container_names(plan)
        self._images_ready(progress)
        return super().up(lab, plan, progress)

    def _images_ready(self, progress: ProgressFn) -> None:
        local = ImageSpec().name
        if self.image != local:
            try:
                client().images.get(self.image)
            except docker.errors.ImageNotFound:
                how = ("load it with 'docker load -i docker-sonic-vs.gz' (SONiC's build artifacts)" if self.sonic
                       else "load it with 'docker load'")
                raise TwinError(f"image {self.image} is not on this machine and no registry can be reached: "
                                f"{how}, or use the local FRR image {local} (omit --image)") from None
        if self.host_image == local:
            ensure_image(progress=lambda step: progress(f"switch image: {step}", 0, 1))

    def _describe(self, state: LabState) -> None:
        state.image = self.image

    def _create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
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
            sonic = self.sonic and node.kind == "switch"
            if sonic:
                sonic_vs.write_config(state.lab, plan, node)
            host_config = api.create_host_config(**host_config_spec(node, rundir, sonic))
            spec = container_spec(state.lab, node, self.image if node.kind != "host" else self.host_image)
            if sonic:
                spec.update(sonic_vs.container_overrides())
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
            run(["ip", "netns", "attach", node_netns(state.lab, node.name), str(pid)])

        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            list(pool.map(create, plan.nodes))

    def _prepare_rundir(self, lab: str, node: NodePlan, rundir: Path) -> None:
        # FRR inside the image runs as the image's frr user, whose uid is not the host's.
        rundir.chmod(0o777)
        if not (self.sonic and node.kind == "switch"):
            self.run_in(lab, node.name, ["sh", "-c", "mkdir -p /var/run/frr && chown frr:frr /var/run/frr"])

    def _mgmt_lines(self, mgmt_ip: str, plen: int) -> list[str]:
        return []  # Docker gave eth0 its address on the lab's network

    def _start_daemon(self, lab: str, node: NodePlan, argv: list[str]) -> None:
        env = {k: v for k, v in daemon_env().items() if k in MEMORY_ENV}
        self.run_in(lab, node.name, argv, env)

    def _start_node(self, lab: str, plan: Plan, node: NodePlan, mgmt_ip: str, plen: int) -> list[str]:
        if self.sonic and node.kind == "switch":
            return sonic_vs.boot(lambda argv: self.run_in(lab, node.name, argv), self.container(lab, node.name),
                                 lab, node)
        return super()._start_node(lab, plan, node, mgmt_ip, plen)

    def _exec_line(self, lab: str, node: NodePlan, line: str) -> str:
        self.run_in(lab, node.name, ["sh", "-c", line])  # inside the node's container, as containerlab runs it
        return f"{node.name}: ran exec line '{line}' (in its container)"

    def _remove_nodes(self, lab: str) -> list[str]:
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

    # -- helpers ------------------------------------------------------------------------------

    def container(self, lab: str, node: str) -> str:
        """The name of a node's container."""
        return container_name(lab, node)

    def run_in(self, lab: str, node: str, argv: Sequence[str], env: dict[str, str] | None = None) -> str:
        code, out = client().containers.get(self.container(lab, node)).exec_run(list(argv), environment=env)
        text = out.decode(errors="replace") if isinstance(out, bytes) else str(out)
        if code != 0:
            raise RuntimeBackendError(f"{node}: {' '.join(argv)} failed in its container (exit {code}): "
                                      f"{text.strip()[-500:]}")
        return text

    def _sonic_node(self, state: LabState, node: str) -> bool:
        return sonic_vs.is_sonic_image(state.image or "") and state.node(node).kind == "switch"

