"""twin's own switch: SONiC's redis databases and config daemons run by twin, FRR configured from
config_db.json as bgpcfgd/frrcfgd would (twin.switch). Facts in frr_switch.yaml.

Prepared where the runtime runs its processes (`prepare`: its namespace, or its container on docker):
config_db.json, its databases with CONFIG_DB loaded, the kernel programmed from it (ports, addresses, the
ports' egress queues), FRR's config checked and split; FRR is its launch, bfdd held until its BGP is up
(twin.kinds.held_start). Under containerlab its `exec:` lines set the same kernel up, but for the
queues, which the switch's config daemon gives the ports when it starts, and start FRR.
A kind on another image that starts the same way is an FrrSwitchKind over its own facts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from ipaddress import IPv4Interface
from pathlib import Path

from twin.host.shell import ip_batch, sysctl, tc_batch
from twin.kinds.facts import load_facts
from twin.kinds.held_start import BGP_SETTLE_S, HELD_DAEMONS
from twin.kinds.linux_start import FRR_INIT, ip_commands, named, sysctl_commands
from twin.kinds.plain import PlainKind
from twin.kinds.protocol import NodeLaunch, NodeProcesses, NodeStart
from twin.model import phases
from twin.model.config_db import ConfigDb
from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan, Plan
from twin.stages.render.config_db import dumps, node_config_db
from twin.stages.render.frr import render_frr
from twin.switch.config.cfgmgr import PROGRAMMED
from twin.switch.config.kernel import kernel_lines
from twin.switch.config.qdisc import qdisc_lines
from twin.switch.frr.frr_daemons import FrrBoot, launch_later, node_daemons, prepare_boot, wait_bgp_established
from twin.switch.redis import redis_server
from twin.switch.redis.sonic_redis import as_stored
from twin.switch.system_files import mark_booted, write_hostname

FACTS = load_facts("frr_switch")
SWITCH_SYSCTLS = FACTS.sysctls


class FrrSwitchKind(PlainKind):
    def prepare(self, start: NodeStart, procs: NodeProcesses, rundir: Path) -> NodeLaunch:
        """config_db.json, its databases, the kernel programmed from it, FRR's config checked and
        split; FRR is its launch."""
        node = start.node
        sysctl(start.netns, self.facts.sysctls)
        procs.prepare_rundir(start.lab, node, rundir)
        eth0 = IPv4Interface(f"{start.mgmt_ip}/{start.mgmt_plen}")
        db = node_config_db(start.plan, node, mgmt=(eth0, str(eth0.network.network_address + 1)))
        (rundir / "config_db.json").write_text(dumps(db))
        mark_booted(rundir)          # what the switch's uptime counts from
        write_hostname(rundir, db)   # /etc/hostname, as hostname-config.sh writes it at boot
        _start_databases(start, procs, rundir, db)
        conf = render_frr(db, start.templates)
        ifmap = {i.name: i.kernel for i in node.interfaces}
        ip_batch(kernel_lines(db, ifmap) + procs.mgmt_lines(start.mgmt_ip, start.mgmt_plen), netns=start.netns)
        if start.plan.fabric.egress_queues:   # the ports' egress queues, from the QoS maps
            tc_batch(qdisc_lines(db, ifmap), netns=start.netns)
        with named(node.name):  # every daemon starts with its own part of twin's rendering (as the floor does)
            boot = prepare_boot(rundir, node_daemons(node, start.plan.fabric.bfd.enabled), conf,
                                HELD_DAEMONS if start.held is not None else ())
        return lambda: _launch(start, procs, rundir, boot)

    def clab_exec(self, plan: Plan, node: NodePlan) -> list[str]:
        """Sysctls, then ports and addresses from config_db.json, then FRR (which needs the loopback)."""
        db = node_config_db(plan, node)
        ifmap = {i.name: i.kernel for i in node.interfaces}
        return [*sysctl_commands(self.facts.sysctls), *ip_commands(kernel_lines(db, ifmap)), f"{FRR_INIT} start"]


def _launch(start: NodeStart, procs: NodeProcesses, rundir: Path, boot: FrrBoot) -> list[str]:
    node = start.node
    launch = partial(procs.start_daemon, start.lab, node)
    with named(node.name):
        skipped = boot.launch(start.netns, launch)
    if boot.left:
        assert start.held is not None
        start.held.daemons[node.name] = lambda: _start_later(node.name, rundir, start.netns, boot.left, launch)
    phases.reach("daemon_launch")
    phases.reach("config_applied")
    return [f"{node.name}: {w}" for w in skipped]


def _start_later(name: str, rundir: Path, netns: str, daemons: list[str],
                 launch: Callable[[list[str]], None]) -> None:
    """The daemons held back (HELD_DAEMONS), once the switch's BGP sessions are up (or BGP_SETTLE_S passed)."""
    wait_bgp_established(rundir, BGP_SETTLE_S)
    with named(name):
        launch_later(rundir, netns, daemons, launch)


def _start_databases(start: NodeStart, procs: NodeProcesses, rundir: Path, db: ConfigDb) -> None:
    """SONiC's redis databases of a switch, CONFIG_DB loaded from its config_db.json (as
    `config-setup` does at boot); programmed.json records that the kernel and FRR are
    about to be programmed from it, for the config daemon that takes over from here."""
    node = start.node
    redis_server.write_database_config(rundir)
    procs.start_daemon(start.lab, node, redis_server.redis_argv(rundir))
    try:
        databases = redis_server.wait_ready(rundir)
    except TimeoutError as exc:
        raise RuntimeBackendError(f"{node.name}: {exc}") from None
    try:
        redis_server.config_load(databases, db)
    finally:
        databases.close()
    (rundir / PROGRAMMED).write_text(json.dumps(as_stored(db), sort_keys=True))


KIND = FrrSwitchKind(FACTS)
