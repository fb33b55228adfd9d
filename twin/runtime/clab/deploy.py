"""The clab runtime: containerlab deploys the lab's containers and links; twin does the rest.

`up` writes `<run dir>/<lab>/<lab>.clab.yml` (the same topology `twin export clab` writes, built by
twin.runtime.clab.topology, with the nodes' files in their run directories) and runs `containerlab
deploy`. The inventory and management addresses come back from `containerlab inspect --format json`.
Each container's network namespace is then attached as `tw.<lab>.<node>`, as on the docker runtime,
so the gNMI agent, the checks and the drills work unchanged. FRR in the local image is started by
the topology's own `exec:` lines (`frrinit.sh start`). SONiC-VS nodes run their config_db.json (their
own when they bring one, else twin's rendering): the topology binds it at /var/sonic and its
`exec:` lines copy it in once start.sh has loaded CONFIG_DB (twin.runtime.clab.topology says why),
then the sonic-vs boot steps check it is loaded and wait for FRR's `router bgp`.
`down` runs `containerlab destroy --cleanup`, then removes whatever is left as the docker runtime does.

containerlab runs natively or as its container image; without either, `up` says so and points
to `--runtime docker`.
"""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

from twin.host.dockerapi import LAB_LABEL, NODE_LABEL, client
from twin.host.poll import wait_until
from twin.host.rundir import lab_dir, node_dir
from twin.host.shell import run
from twin.kinds.protocol import NodeLaunch, NodeStart
from twin.kinds.registry import kind_of, switch_kind
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.plan import Plan
from twin.model.state import LabState
from twin.runtime import containers, wiring
from twin.runtime.bringup import bring_up, tear_down
from twin.runtime.clab.command import ClabCommand, clab_inspect_nodes, missing_message
from twin.runtime.clab.topology import clab_topology, dump_yaml, node_files
from twin.runtime.protocol import NO_HOOKS, ProgressFn, UpHooks
from twin.stages.render.write import write_tree
from twin.switch.frr.frr_daemons import EVENT_LOG

DEPLOY_TIMEOUT = 900.0


def clab_name(lab: str) -> str:
    """containerlab's lab name; its containers are `clab-<that>-<node>`."""
    return f"tw-{lab}"


def clab_container(lab: str, node: str) -> str:
    return f"clab-{clab_name(lab)}-{node}"


def topology_path(lab: str) -> Path:
    return lab_dir(lab) / f"{lab}.clab.yml"


def runtime_topology(lab: str, plan: Plan, image: str, subnet: IPv4Network) -> dict[str, Any]:
    """The exported topology, adapted to run under twin: files in the run directories, FRR's
    sockets and logs where twin reads them, our labels, the lab's management subnet and bridge."""
    switches = switch_kind(image)
    doc = clab_topology(plan, kind=switches.facts.clab_kind, image=image, files_dir=str(lab_dir(lab) / "nodes"),
                        mgmt_subnet=str(subnet), lab_name=clab_name(lab))
    doc["mgmt"]["bridge"] = f"tw-{lab}"
    for name, entry in doc["topology"]["nodes"].items():
        rundir = node_dir(lab, name)
        entry.setdefault("labels", {}).update({LAB_LABEL: lab, NODE_LABEL: name})
        kind = kind_of(plan.node(name), switches)
        extra: list[str] = []
        if kind.facts.container.run_dir_binds:  # the kind says where its run directory goes
            extra = [f"{target}:{mount['bind']}" for target, mount in kind.facts.container.binds(rundir).items()]
        elif kind.facts.plan_kind != "host":       # twin's FRR: sockets and logs in the run directory
            extra = [f"{rundir}:/var/run/frr", f"{rundir}:{rundir}"]
        if extra:
            entry["binds"] = [*entry.get("binds", []), *extra]
    return doc


class ClabPlacement:
    """containerlab makes the nodes and links from the topology; twin attaches their namespaces and
    waits for what the topology's exec lines start."""

    def __init__(self, images: containers.SwitchImage, clab: ClabCommand) -> None:
        self.images = images
        self.clab = clab

    def describe(self, state: LabState) -> None:
        state.image = self.images.image

    def create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
                     mgmt_ip: dict[str, IPv4Address]) -> None:
        lab = state.lab
        doc = runtime_topology(lab, plan, self.images.image, subnet)
        files = node_files(plan, self.images.switches.facts.clab_kind)
        for rel in [r for r in files if r.endswith("/frr.conf")]:  # session events for drills, as on netns
            log = node_dir(lab, rel.split("/")[0]) / EVENT_LOG
            files[rel] += f"log file {log} informational\nlog timestamp precision 6\n"
        write_tree(lab_dir(lab) / "nodes", files)
        for node in plan.nodes:
            node_dir(lab, node.name).mkdir(parents=True, exist_ok=True)
            node_dir(lab, node.name).chmod(0o777)
        topo = topology_path(lab)
        topo.write_text(dump_yaml(doc))
        proc = run(self.clab.deploy_argv(topo), check=False, timeout=DEPLOY_TIMEOUT)
        if proc.returncode != 0:
            raise RuntimeBackendError(f"containerlab deploy -t {topo} failed (exit {proc.returncode}): "
                                      f"{(proc.stderr or proc.stdout).strip()[-1500:]}")
        inspected = clab_inspect_nodes(run(self.clab.inspect_argv(topo)).stdout)
        for ns in state.nodes:
            found = inspected.get(ns.name)
            if found is None:
                raise RuntimeBackendError(f"containerlab inspect does not list node {ns.name}")
            if found["mgmt_ipv4"] and ns.mgmt:
                ns.mgmt = found["mgmt_ipv4"]  # containerlab's word, which the agent then listens on
            pid = int(client().api.inspect_container(found["container"])["State"]["Pid"])
            containers.attach_netns(lab, ns.name, pid)

    def wire_links(self, lab: str, plan: Plan) -> None:
        return  # containerlab made them

    def prepare_node(self, start: NodeStart) -> NodeLaunch:
        """containerlab started every node and ran its exec lines: wait for what they started (so the
        nodes are as ready as prepared ones); nothing is left to launch."""
        container = clab_container(start.lab, start.node.name)
        booted = start.kind.boot_in_container(start, container, containers.runner(container, start.node.name),
                                              supervisord=False)   # containerlab's sonic-vs kind started it
        if booted is not None:
            return booted
        if start.kind.facts.plan_kind != "host":
            _wait_for_vty(node_dir(start.lab, start.node.name))
        return lambda: []

    def remove_nodes(self, lab: str) -> list[str]:
        return containers.remove_containers(lab)


class ClabRuntime:
    name = "clab"
    templates: Path | None = None

    def __init__(self, image: str | None = None) -> None:
        self.images = containers.SwitchImage(image)
        self.clab = ClabCommand()
        self.placement = ClabPlacement(self.images, self.clab)

    @property
    def image(self) -> str:
        return self.images.image

    def labs(self) -> list[str]:
        return sorted(set(wiring.netns_labs()) | set(containers.docker_labs()))

    def up(self, lab: str, plan: Plan, progress: ProgressFn, hooks: UpHooks = NO_HOOKS) -> LabState:
        if not self.clab.available():
            raise TwinError(missing_message())
        plan = self.images.check_plan(plan)
        self.images.ready(progress)
        return bring_up(self.name, lab, plan, self.images.switches, self.placement, progress, self.templates, hooks)

    def down(self, lab: str) -> list[str]:
        removed = []
        topo = topology_path(lab)
        if topo.exists() and self.clab.available():
            proc = run(self.clab.destroy_argv(topo), check=False, timeout=DEPLOY_TIMEOUT)
            if proc.returncode == 0:
                removed.append("containerlab lab")
        return removed + tear_down(lab, self.placement)

    def exec_argv(self, state: LabState, node: str, cmd: Sequence[str]) -> list[str]:
        return containers.exec_argv(state, node, self.container(state.lab, node), cmd)

    def set_link_state(self, state: LabState, node: str, ifaces: Sequence[str], up: bool) -> None:
        wiring.set_link_state(state, node, ifaces, up)

    def node_loss(self, state: LabState, node: str, ifaces: Sequence[str], lost: bool) -> str:
        return containers.pause_node(state, node, self.container(state.lab, node), ifaces, lost)

    def node_pids(self, state: LabState, node: str) -> list[int]:
        return wiring.netns_pids(state, node)

    def container(self, lab: str, node: str) -> str:
        """The name of a node's container (containerlab's `clab-<lab>-<node>`)."""
        return clab_container(lab, node)


def _wait_for_vty(rundir: Path, timeout: float = 60) -> None:
    """The topology's exec lines start FRR; wait until zebra and bgpd answer in the run directory."""
    wait_until(lambda: (rundir / "zebra.vty").exists() and (rundir / "bgpd.vty").exists(), timeout, 0.1,
               lambda: RuntimeBackendError(f"FRR did not start in {rundir} within {timeout:.0f} s (see 'docker logs')"))
