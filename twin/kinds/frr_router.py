"""A router imported from a .clab.yml (kind linux, /etc/frr bound): it runs the user's own frr.conf
and daemons files (NodePlan.frr_conf, NodePlan.daemons). Facts in frr_router.yaml.

Prepared where the runtime runs its processes (`prepare`: its namespace, or its container on docker):
its links up (its FRR config holds its addresses); its launch starts the daemons its `daemons` file
names and loads its frr.conf with vtysh, which reports all FRR refuses. Under containerlab its
`exec:` lines bring the links up and start FRR's init script.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from twin.host import userfile
from twin.host.shell import ip_batch, sysctl
from twin.kinds.facts import load_facts
from twin.kinds.linux_start import FRR_INIT, ip_commands, links_up, named, sysctl_commands
from twin.kinds.plain import PlainKind
from twin.kinds.protocol import NodeLaunch, NodeProcesses, NodeStart
from twin.model import phases
from twin.model.plan import NodePlan, Plan
from twin.switch.frr.frr_daemons import launch_frr, load_frr, node_daemons

FACTS = load_facts("frr_router")


class FrrRouterKind(PlainKind):
    def prepare(self, start: NodeStart, procs: NodeProcesses, rundir: Path) -> NodeLaunch:
        """The user's own FRR files, loaded by vtysh once its daemons run."""
        node = start.node
        sysctl(start.netns, self.facts.sysctls)
        procs.prepare_rundir(start.lab, node, rundir)
        assert node.frr_conf is not None
        conf = userfile.read_text(node.frr_conf)  # checked when the topology was loaded; again here
        ip_batch(links_up(node) + procs.mgmt_lines(start.mgmt_ip, start.mgmt_plen), netns=start.netns)
        return lambda: _launch(start, procs, rundir, conf)

    def clab_exec(self, plan: Plan, node: NodePlan) -> list[str]:
        """Its FRR config holds its addresses: the links only need to be up, then FRR starts."""
        return [*sysctl_commands(self.facts.sysctls), *ip_commands(links_up(node)), f"{FRR_INIT} start"]


def _launch(start: NodeStart, procs: NodeProcesses, rundir: Path, conf: str) -> list[str]:
    node = start.node
    with named(node.name):
        skipped = launch_frr(rundir, start.netns, node_daemons(node, start.plan.fabric.bfd.enabled),
                             partial(procs.start_daemon, start.lab, node))
        phases.reach("daemon_launch")
        load_frr(rundir, conf)
    phases.reach("config_applied")
    return [f"{node.name}: {w}" for w in skipped]


KIND = FrrRouterKind(FACTS)
