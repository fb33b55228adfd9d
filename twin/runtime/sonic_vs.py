"""docker-sonic-vs as a switch: its port naming, its binds and the boot order it needs.

The boot order follows containerlab's sonic-vs kind: the container starts with `/bin/bash` as
its entrypoint (kept alive by a terminal), every link is wired first, then `supervisord` starts
SONiC's services and `supervisorctl start bgpd` its FRR. The rendered config is put at
/etc/sonic/config_db.json and loaded with `config load -y` (a merge into CONFIG_DB), then the
ports are brought up; the switch is configured when `router bgp` appears in FRR's running config.

The config is copied into the container (Engine API put_archive) rather than bind-mounted:
SONiC-VS's start script merges init_cfg.json into /etc/sonic/config_db.json and renames the
result over it, and a rename over a bind-mounted file fails with EBUSY under `bash -e`.

Port naming (HWSKU Force10-S6000, lanes of 4): `eth0` is management, `ethN` is SONiC's port
`Ethernet(4*(N-1))`.

docker-sonic-vs runs no gNMI server: twin's agent fronts it over its redis, whose unix socket
directory (/var/run/redis) is bind-mounted from the node's run directory.
"""

from __future__ import annotations

import io
import re
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from twin import hwsku
from twin.errors import RuntimeBackendError
from twin.plan.models import NodePlan, Plan
from twin.render.config_db import build_config_db, dumps
from twin.runtime.dockerapi import client
from twin.runtime.state import node_dir

IMAGE_PATTERN = re.compile(r"(^|/)docker-sonic-vs(:|$)")
SKU = "Force10-S6000"  # what docker-sonic-vs's platform x86_64-kvm_x86_64-r0 runs
STEP = 4  # lanes per port on that SKU: Ethernet0, Ethernet4, ... (twin/hwsku/data/Force10-S6000.json)
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
    if plan.fabric.hwsku != SKU and any(n.kind == "switch" for n in plan.nodes):
        parts.append(f"docker-sonic-vs runs hwsku {SKU} (platform x86_64-kvm_x86_64-r0), not the plan's "
                     f"{plan.fabric.hwsku}, whose port lanes it does not have")
    if not parts:
        return []
    return ["; ".join(parts) + f"; set 'fabric: {{hwsku: {SKU}, radix: {PORTS}}}' in the topology"]


def with_container_names(plan: Plan) -> Plan:
    """The plan with every switch port's kernel name as sonic-vs names it (ethN)."""
    nodes = []
    for node in plan.nodes:
        if node.kind == "switch":
            ifaces = [i.model_copy(update={"kernel": sonic_vs_iface(i.name)}) for i in node.interfaces]
            node = node.model_copy(update={"interfaces": ifaces})
        nodes.append(node)
    return plan.model_copy(update={"nodes": nodes})


def binds(rundir: Path) -> dict[str, dict[str, str]]:
    """FRR's sockets into the run directory (vtysh from the host), the config, redis's socket."""
    (rundir / REDIS_DIR).mkdir(parents=True, exist_ok=True)
    return {str(rundir): {"bind": "/var/run/frr", "mode": "rw"},
            str(rundir / REDIS_DIR): {"bind": "/var/run/redis", "mode": "rw"}}


def container_overrides() -> dict[str, Any]:
    """Entrypoint /bin/bash held open by a terminal, as containerlab's sonic-vs kind creates it."""
    return {"entrypoint": ["/bin/bash"], "tty": True, "stdin_open": True}


def boot_steps(node: NodePlan) -> list[list[str]]:
    """The commands run in the container once its links are wired, in order."""
    steps = [["supervisorctl", "start", "bgpd"],
             ["config", "load", "-y", "/etc/sonic/config_db.json"]]
    steps += [["config", "interface", "startup", i.name] for i in node.interfaces]
    return steps


def redis_socket(rundir: Path) -> Path:
    return rundir / REDIS_DIR / REDIS_SOCKET


def agent_backend(rundir: Path) -> dict[str, str]:
    """How the gNMI agent reaches this switch's databases."""
    return {"backend": "sonic-redis", "redis_socket": str(redis_socket(rundir))}


def write_config(lab: str, plan: Plan, node: NodePlan) -> None:
    """The rendered config_db.json, before the container starts: it is bind-mounted."""
    rundir = node_dir(lab, node.name)
    rundir.mkdir(parents=True, exist_ok=True)
    (rundir / "config_db.json").write_text(dumps(build_config_db(plan, node)))


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
    ctr.put_archive("/etc/sonic", config_archive((rundir / "config_db.json").read_bytes()))
    if supervisord:  # containerlab's sonic-vs kind starts it itself
        ctr.exec_run(["supervisord"], detach=True)
    _wait(lambda: redis_socket(rundir).exists(), f"{node.name}: SONiC's redis did not start")
    for argv in boot_steps(node):
        run_in(argv)

    def bgp_configured() -> bool:
        code, out = ctr.exec_run(["vtysh", "-c", "show running-config"])
        return bool(code == 0 and b"router bgp" in out)

    _wait(bgp_configured, f"{node.name}: FRR never showed 'router bgp' after config load")
    return []


def _wait(ready: Callable[[], bool], message: str, timeout: float = BOOT_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeBackendError(f"{message} within {timeout:.0f} s")
