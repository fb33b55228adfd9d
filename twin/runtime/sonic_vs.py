"""docker-sonic-vs as a switch: its port naming, its binds and the boot order it needs.

The boot order follows containerlab's sonic-vs kind: the container starts with `/bin/bash` as
its entrypoint (kept alive by a terminal), every link is wired first, then `supervisord` starts
SONiC's services and `supervisorctl start bgpd` its FRR. The rendered config is bind-mounted at
/etc/sonic/config_db.json (the kind ignores startup-config) and loaded with `config load -y`
(a merge into CONFIG_DB), then the ports are brought up; the switch is configured when `router
bgp` appears in FRR's running config.

Port naming (HWSKU Force10-S6000, lanes of 4): `eth0` is management, `ethN` is SONiC's port
`Ethernet(4*(N-1))`.

docker-sonic-vs runs no gNMI server: twin's agent fronts it over its redis, whose unix socket
directory (/var/run/redis) is bind-mounted from the node's run directory.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from twin.errors import RuntimeBackendError
from twin.plan.models import NodePlan, Plan
from twin.render.config_db import build_config_db, dumps
from twin.runtime.dockerapi import client, container_name
from twin.runtime.state import node_dir

IMAGE_PATTERN = re.compile(r"(^|/)docker-sonic-vs(:|$)")
STEP = 4  # lanes per port on the Force10-S6000 HWSKU sonic-vs uses
REDIS_DIR = "redis"   # under the node's run directory, bound at /var/run/redis
REDIS_SOCKET = "redis.sock"
BOOT_TIMEOUT = 180.0


def is_sonic_image(image: str) -> bool:
    return bool(IMAGE_PATTERN.search(image))


def eth_of(port: str) -> str:
    """SONiC port name -> the container's interface: Ethernet0 -> eth1, Ethernet4 -> eth2."""
    m = re.fullmatch(r"Ethernet(\d+)", port)
    if not m or int(m.group(1)) % STEP:
        raise ValueError(f"'{port}' is not a sonic-vs port: sonic-vs ports are Ethernet0, Ethernet4, ... "
                         f"(steps of {STEP})")
    return f"eth{int(m.group(1)) // STEP + 1}"


def port_of(iface: str) -> str:
    """The container's interface -> SONiC port name: eth1 -> Ethernet0 (eth0 is management)."""
    m = re.fullmatch(r"eth(\d+)", iface)
    if not m or int(m.group(1)) == 0:
        raise ValueError(f"'{iface}' is not a sonic-vs data port: they are eth1, eth2, ... (eth0 is management)")
    return f"Ethernet{(int(m.group(1)) - 1) * STEP}"


def with_container_names(plan: Plan) -> Plan:
    """The plan with every switch port's kernel name as sonic-vs names it (ethN)."""
    nodes = []
    for node in plan.nodes:
        if node.kind == "switch":
            ifaces = [i.model_copy(update={"kernel": eth_of(i.name)}) for i in node.interfaces]
            node = node.model_copy(update={"interfaces": ifaces})
        nodes.append(node)
    return plan.model_copy(update={"nodes": nodes})


def binds(rundir: Path) -> dict[str, dict[str, str]]:
    """FRR's sockets into the run directory (vtysh from the host), the config, redis's socket."""
    (rundir / REDIS_DIR).mkdir(parents=True, exist_ok=True)
    return {str(rundir): {"bind": "/var/run/frr", "mode": "rw"},
            str(rundir / "config_db.json"): {"bind": "/etc/sonic/config_db.json", "mode": "rw"},
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


def boot(run_in: Callable[[list[str]], str], lab: str, node: NodePlan) -> list[str]:
    """Start SONiC in a container whose links are wired; wait until FRR runs the BGP config.

    `run_in(argv)` runs a command in the node's container and fails loudly on a non-zero exit.
    """
    rundir = node_dir(lab, node.name)
    ctr = client().containers.get(container_name(lab, node.name))
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
