"""docker-sonic-vs as a switch: its port naming, its binds and the boot order it needs.

The boot order follows containerlab's sonic-vs kind: the container starts with `/bin/bash` as
its entrypoint (kept alive by a terminal), every link is wired first, then `supervisord` starts
SONiC's services and `supervisorctl start bgpd` its FRR. The switch's config is put at
/etc/sonic/config_db.json (before supervisord, so start.sh merges and loads it) and loaded again with
`config load -y` (a merge into CONFIG_DB), then its linked ports are brought up (with the switch's
own config, those it sets admin up); the switch is configured when `router bgp` appears in FRR's
running config.

The config is the switch's own config_db.json when it brings one (a containerlab sonic-vs node's
bound file, NodePlan.config_db), else twin's rendering of the plan (render.config_db.node_config_db).
It is copied into the container (Engine API put_archive) rather than bind-mounted: SONiC-VS's
start.sh (`bash -e`) merges init_cfg.json into /etc/sonic/config_db.json with
`sonic-cfggen ... > /tmp/config_db.json; mv /tmp/config_db.json /etc/sonic/config_db.json`, and mv
cannot replace a bind-mounted file (a mount point: "unable to remove target: Device or resource
busy"), so start.sh would stop there, before redis, configdb-load.sh, syncd and orchagent start.

containerlab starts sonic-vs nodes itself (nodes/sonic/sonic.go: entrypoint /bin/bash, then in
PostDeploy `supervisord` and `supervisorctl start bgpd`, neither awaited) and runs a node's `exec:`
lines right after. clab_exec gives those lines for a config bound read-only at
/var/sonic/config_db.json: wait until configdb-load.sh has set CONFIG_DB_INITIALIZED (start.sh is
then done with /etc/sonic/config_db.json), copy the file there, `config load -y` it (a merge into
CONFIG_DB, as SONiC users load a config) and start its linked ports. Images since March 2026 copy
/var/sonic/config_db.json in themselves, before the merge (start.sh: "If a config_db.json is
provided on the persistent volume, use it"); the copy and load then repeat what is already there.

Port naming (HWSKU Force10-S6000, lanes of 4): `eth0` is management, `ethN` is SONiC's port
`Ethernet(4*(N-1))`.

docker-sonic-vs runs no gNMI server: twin's agent fronts it over its redis, whose unix socket
directory (/var/run/redis) is bind-mounted from the node's run directory.

Facts (image, binds, how the container is created) in sonic_vs.yaml; this module holds the quirks.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from twin.host.dockerapi import client
from twin.host.poll import wait_until
from twin.host.rundir import node_dir
from twin.kinds.facts import load_facts
from twin.kinds.protocol import NodeLaunch, NodeProcesses, NodeStart, cannot_start
from twin.model import hwsku
from twin.model.errors import RuntimeBackendError
from twin.model.plan import InterfacePlan, NodePlan, Plan
from twin.stages.load.bound_config import PERSISTENT_CONFIG, SONIC_CONFIG
from twin.stages.render.config_db import dumps, node_config_db

FACTS = load_facts("sonic_vs")
IMAGE_PATTERN = re.compile(FACTS.image_pattern or "")
SKU = "Force10-S6000"  # what docker-sonic-vs's platform x86_64-kvm_x86_64-r0 runs
STEP = 4  # lanes per port on that SKU: Ethernet0, Ethernet4, ... (twin/model/hwsku/data/Force10-S6000.json)
PORTS = hwsku.load(SKU).port_count  # 32: Ethernet0 ... Ethernet124
SONIC_PORT = re.compile(r"^Ethernet(0|[1-9][0-9]*)$")
CLAB_PORT = re.compile(r"^eth(0|[1-9][0-9]*)$")
REDIS_DIR = "redis"   # under the node's run directory, bound at /var/run/redis
REDIS_SOCKET = "redis.sock"
BOOT_TIMEOUT = 180.0


def is_sonic_image(image: str) -> bool:
    return bool(IMAGE_PATTERN.search(image))


def sonic_vs_iface(port: str) -> str:
    """containerlab's sonic-vs interface for a SONiC port: Ethernet0 -> eth1, Ethernet4 -> eth2."""
    m = SONIC_PORT.match(port)
    if not m:
        raise ValueError(f"'{port}' is not a SONiC port name: expected Ethernet<N>, e.g. Ethernet0")
    n = int(m.group(1))
    if n % STEP:
        raise ValueError(f"'{port}' is not a sonic-vs port: Force10-S6000 ports go in steps of "
                         f"{STEP} (Ethernet0, Ethernet4, ...)")
    return f"eth{n // STEP + 1}"


def sonic_vs_port(iface: str) -> str:
    """The SONiC port behind containerlab's sonic-vs interface: eth1 -> Ethernet0, eth2 -> Ethernet4."""
    m = CLAB_PORT.match(iface)
    if not m:
        raise ValueError(f"'{iface}' is not a containerlab sonic-vs interface: expected eth<N>, e.g. eth1")
    n = int(m.group(1))
    if n == 0:
        raise ValueError("eth0 is sonic-vs's management interface, not a data port (data ports start at eth1)")
    return f"Ethernet{STEP * (n - 1)}"


def missing_ports(plan: Plan) -> list[str]:
    """What docker-sonic-vs cannot run of the plan, in one warning: ports beyond its HWSKU's 32
    (Ethernet0 ... Ethernet124), or switches declared as another hwsku, whose lanes it lacks."""
    limit = STEP * PORTS
    beyond: dict[str, list[str]] = {}
    for node in plan.nodes:
        ports = [i.name for i in node.interfaces if node.kind == "switch" and SONIC_PORT.match(i.name)
                 and int(i.name.removeprefix("Ethernet")) >= limit]
        if ports:
            beyond[node.name] = ports
    parts = []
    if beyond:
        shown = [f"{name} ({', '.join(ports)})" for name, ports in list(beyond.items())[:2]]
        more = f" and {len(beyond) - 2} more" if len(beyond) > 2 else ""
        parts.append(f"{len(beyond)} switches use ports beyond {SKU}'s {PORTS} (Ethernet0 ... "
                     f"Ethernet{limit - STEP}), which docker-sonic-vs does not create: {'; '.join(shown)}{more}")
    # switches with their own config_db.json run the ports it lists, not the plan's hwsku
    if plan.fabric.hwsku != SKU and any(n.kind == "switch" and n.config_db is None for n in plan.nodes):
        parts.append(f"docker-sonic-vs runs hwsku {SKU} (platform x86_64-kvm_x86_64-r0), not the plan's "
                     f"{plan.fabric.hwsku}, whose port lanes it does not have")
    if not parts:
        return []
    return ["; ".join(parts) + f"; set 'fabric: {{hwsku: {SKU}, radix: {PORTS}}}' in the topology"]


def binds(rundir: Path) -> dict[str, dict[str, str]]:
    """FRR's sockets into the run directory (vtysh from the host), redis's socket (sonic_vs.yaml)."""
    return FACTS.container.binds(rundir)


def container_overrides() -> dict[str, Any]:
    """Entrypoint /bin/bash held open by a terminal, as containerlab's sonic-vs kind creates it."""
    return FACTS.container.create_options()


def linked_ports(node: NodePlan, db: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The ports the switch's links use that come up: all of them, or with `db` (its config), those whose
    PORT row says admin_status up (SONiC's default is down: a config that leaves a port down keeps it down)."""
    ports = [i.name for i in node.interfaces]
    if db is None:
        return ports
    rows = db.get("PORT", {})
    return [p for p in ports if isinstance(rows.get(p), dict) and rows[p].get("admin_status") == "up"]


def boot_steps(node: NodePlan, db: dict[str, dict[str, Any]] | None = None) -> list[list[str]]:
    """The commands run in the container once its links are wired, in order."""
    steps = [["supervisorctl", "start", "bgpd"],
             ["config", "load", "-y", SONIC_CONFIG]]
    steps += [["config", "interface", "startup", port] for port in linked_ports(node, db)]
    return steps


def clab_exec(node: NodePlan, db: dict[str, dict[str, Any]]) -> list[str]:
    """containerlab `exec:` lines that make a sonic-vs node run the config bound at PERSISTENT_CONFIG
    (see the module docstring for why it is copied in, and when)."""
    seconds = int(BOOT_TIMEOUT)
    wait = ("bash -c 'for i in $(seq " + str(seconds) + "); do "
            '[ "$(sonic-db-cli CONFIG_DB GET CONFIG_DB_INITIALIZED 2>/dev/null)" = 1 ] && exit 0; sleep 1; done; '
            f'echo "start.sh did not initialise CONFIG_DB within {seconds} s" >&2; exit 1\'')
    return [wait, f"cp {PERSISTENT_CONFIG} {SONIC_CONFIG}", f"config load -y {SONIC_CONFIG}",
            *(f"config interface startup {port}" for port in linked_ports(node, db))]


def redis_socket(rundir: Path) -> Path:
    return rundir / REDIS_DIR / REDIS_SOCKET


def agent_backend(rundir: Path) -> dict[str, str]:
    """How the gNMI agent reaches this switch's databases."""
    return {"backend": "sonic-redis", "redis_socket": str(redis_socket(rundir))}


def write_config(lab: str, plan: Plan, node: NodePlan) -> None:
    """The switch's config_db.json (its own, or twin's rendering) in its run directory, before the
    container starts; boot copies it in."""
    rundir = node_dir(lab, node.name)
    rundir.mkdir(parents=True, exist_ok=True)
    (rundir / "config_db.json").write_text(dumps(node_config_db(plan, node)))


def config_archive(data: bytes) -> bytes:
    """A tar holding config_db.json, as put_archive wants it."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("config_db.json")
        info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def boot(run_in: Callable[[list[str]], str], container: str, lab: str, node: NodePlan,
         supervisord: bool = True) -> list[str]:
    """Start SONiC in a container whose links are wired; wait until FRR runs the BGP config.

    `run_in(argv)` runs a command in the node's container and fails loudly on a non-zero exit.
    `supervisord`: start SONiC's services (containerlab's sonic-vs kind starts them itself).
    """
    rundir = node_dir(lab, node.name)
    ctr = client().containers.get(container)
    data = (rundir / "config_db.json").read_bytes()
    ctr.put_archive("/etc/sonic", config_archive(data))
    if supervisord:  # containerlab's sonic-vs kind starts it itself
        ctr.exec_run(["supervisord"], detach=True)
    _wait(lambda: redis_socket(rundir).exists(), f"{node.name}: SONiC's redis did not start")
    db = json.loads(data) if node.config_db is not None else None  # its own config says which ports come up
    for argv in boot_steps(node, db):
        run_in(argv)

    def bgp_configured() -> bool:
        code, out = ctr.exec_run(["vtysh", "-c", "show running-config"])
        return bool(code == 0 and b"router bgp" in out)

    _wait(bgp_configured, f"{node.name}: FRR never showed 'router bgp' after config load")
    return []


def _wait(ready: Callable[[], bool], message: str, timeout: float = BOOT_TIMEOUT) -> None:
    wait_until(ready, timeout, 0.5, lambda: RuntimeBackendError(f"{message} within {timeout:.0f} s"))


class SonicVsKind:
    """docker-sonic-vs: ports named as containerlab's sonic-vs kind names them, its HWSKU's port
    limits, and the agent fronting its redis. It boots whole in its container (`boot`), never in a
    namespace whose processes the runtime runs."""

    facts = FACTS

    def container_iface(self, iface: InterfacePlan) -> str:
        return sonic_vs_iface(iface.name)

    def plan_problems(self, plan: Plan) -> list[str]:
        return missing_ports(plan)

    def agent_backend(self, rundir: Path) -> dict[str, str]:
        return agent_backend(rundir)

    def prepare(self, start: NodeStart, procs: NodeProcesses, rundir: Path) -> NodeLaunch:
        raise cannot_start(start)

    def clab_exec(self, plan: Plan, node: NodePlan) -> list[str]:
        """Copy the bound config in once start.sh is done with it, load it, start the ports
        (clab_exec above), then the node's own exec lines."""
        lines = clab_exec(node, node_config_db(plan, node))
        return lines + [x for x in node.exec if x not in lines]

    def before_container(self, lab: str, plan: Plan, node: NodePlan) -> None:
        write_config(lab, plan, node)

    def boot_in_container(self, start: NodeStart, container: str, run_in: Callable[[list[str]], str],
                          supervisord: bool) -> NodeLaunch | None:
        """Copy its config in, start SONiC (unless containerlab did), load the config, wait for FRR's
        `router bgp` (boot above)."""
        notes = boot(run_in, container, start.lab, start.node, supervisord=supervisord)
        return lambda: notes


KIND = SonicVsKind()
