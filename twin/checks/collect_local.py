"""Read what checks need from a running netns lab: FRR JSON, kernel FIBs, pings. I/O only.

FRR is asked on its daemons' vty sockets and the FIB is dumped over rtnetlink, in this process:
`twin up` polls these until the lab converges, and a vtysh or `ip` process per switch per poll
took most of a CPU away from the convergence it was waiting for (0.7 CPU-seconds a poll on the
default lab; now a few hundredths).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from twin.checks.base import Check, Outputs
from twin.checks.collect_frr import frr_config_facts
from twin.checks.collect_processes import agent_facts, daemon_facts
from twin.host.processes import ProcessTable
from twin.host.rundir import node_dir
from twin.host.shell import netns_argv, run
from twin.lab.running import RunningLab
from twin.model.errors import TwinError
from twin.model.state import LabState
from twin.switch.frr.frr_vty import ask_json
from twin.switch.state import netlink, rtnl
from twin.switch.state.producers import PROTOCOLS, RT_TABLE_MAIN
from twin.switch.state.statedb import SwitchState

WORKERS = 8
# (lab, node, the check's argument for the node, the host's process table when a check reads daemons)
Reader = Callable[[RunningLab, str, Any, "ProcessTable | None"], Any]


def _frr_json(state: LabState, node: str, daemon: str, command: str) -> Any:
    """`command`'s JSON answer from one daemon, as vtysh would relay it; None when it cannot answer."""
    return ask_json(node_dir(state.lab, node), daemon, command)


def fib_entry(msg: netlink.Message) -> dict[str, Any] | None:
    """One BGP route of the main table as `ip -j route show proto bgp` lists it: dst, and nexthops
    when there are several; None for any other route."""
    if msg["table"] != RT_TABLE_MAIN or PROTOCOLS.get(msg["proto"]) != "bgp":
        return None
    dst = msg.get_attr("RTA_DST")
    entry: dict[str, Any] = {"dst": "default" if dst is None else
                             dst if msg["dst_len"] == 32 else f"{dst}/{msg['dst_len']}"}
    multipath = msg.attrs.get(rtnl.RTA_MULTIPATH)
    if multipath:
        entry["nexthops"] = _nexthops(multipath)
    else:
        entry["gateway"] = msg.get_attr("RTA_GATEWAY")
    return entry


@functools.lru_cache(maxsize=rtnl.MULTIPATH_CACHE)
def _nexthops(multipath: bytes) -> tuple[dict[str, Any], ...]:
    """A multipath route's next hops (its RTA_MULTIPATH payload) as `ip -j route` lists them, made
    once per distinct payload: a 64 x 128 leaf's 127 routes share one 64-way set, and a health poll
    that read every leaf built 520,000 of these dicts, 0.5 CPU-s. A tuple, shared by the routes that
    have that set: read only, as all of a check's outputs are."""
    return tuple({"gateway": hop.get_attr("RTA_GATEWAY")} for hop in rtnl.nexthops(multipath))


def _fib(state: LabState, node: str) -> Any:
    try:
        routes = netlink.dump(state.node(node).netns, netlink.RTM_GETROUTE)
    except OSError:
        return None
    return [e for msg in routes if (e := fib_entry(msg)) is not None]


def _interfaces(state: LabState, node: str) -> dict[str, dict[str, str]] | None:
    """A node's kernel interfaces by name, each {"mtu": ...} as STATE_DB's PORT_TABLE has a port's
    (a server's NICs, where no STATE_DB runs); None when its namespace cannot be read."""
    try:
        links = netlink.dump(state.node(node).netns, netlink.RTM_GETLINK)
    except OSError:
        return None
    return {name: {"mtu": str(msg.get_attr("IFLA_MTU") or 0)}
            for msg in links if (name := msg.get_attr("IFLA_IFNAME"))}


def _df_ping(state: LabState, node: str, sizes: dict[str, int]) -> list[str]:
    """The addresses of `sizes` that answer a ping of that many bytes of ICMP data with Don't Fragment
    set (fping -M -b, one fping per size; a frame too large for the far end's MTU is dropped there,
    one too large for the node's own is never sent). An unanswered address costs the 300 ms timeout
    and one retry."""
    answered: list[str] = []
    ns = state.node(node).netns
    for size in sorted(set(sizes.values())):
        targets = sorted(address for address, wanted in sizes.items() if wanted == size)
        proc = run(netns_argv(ns, ["fping", "-a", "-M", "-b", str(size), "-r", "1", "-t", "300", "-i", "1",
                                   *targets]), check=False, timeout=60)
        answered += proc.stdout.split()
    return answered


def _ping(state: LabState, node: str, probes: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """The targets that answer, by source address. fping sends to one target every `-i` ms (10 by
    default: 0.14 s a server on the default lab, more than the replies take); 1 ms here."""
    alive: dict[str, list[str]] = {}
    ns = state.node(node).netns
    for src, targets in probes.items():
        proc = run(netns_argv(ns, ["fping", "-a", "-r", "1", "-t", "300", "-i", "1", "-S", src,
                                        *sorted(targets)]),
                   check=False, timeout=60)
        alive[src] = proc.stdout.split()
    return alive


Job = tuple[str, str, Any]  # (node, source, what the check gives that source's reader for the node)


def jobs_of(check: Check[Any], nodes: Iterable[str]) -> list[Job]:
    """What reading `nodes` for `check` takes: each node's sources (Check.sources) with their arguments."""
    return [(node, source, check.argument(node, source)) for node in nodes for source in check.sources(node)]


def collect_local(lab: RunningLab, checks: Iterable[Check[Any]], only: Collection[str] | None = None) -> Outputs:
    """What the checks need, read locally: FRR JSON on the daemons' vty sockets, kernel FIBs, pings,
    processes; of the nodes in `only` when given."""
    return read_local(lab, [job for check in checks
                            for job in jobs_of(check, [n for n in check.nodes() if only is None or n in only])])


def read_local(lab: RunningLab, jobs: list[Job]) -> Outputs:
    """Each job's source read by its LOCAL_READERS reader, WORKERS at a time."""
    unknown = sorted({source for _, source, _ in jobs} - set(LOCAL_READERS))
    if unknown:  # before any I/O: a check asking for a source no reader serves is twin's bug, said as such
        raise TwinError(f"no reader for the check source(s) {', '.join(unknown)}: add one to "
                        "twin.checks.collect_local.LOCAL_READERS (sources are declared in twin.checks.base.Source)")
    table = ProcessTable() if any(source == "daemons" for _, source, _ in jobs) else None

    def one(job: Job) -> tuple[str, str, Any]:
        node, source, arg = job
        return node, source, LOCAL_READERS[source](lab, node, arg, table)

    outputs: Outputs = {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for node, source, value in pool.map(one, jobs):
            outputs.setdefault(node, {})[source] = value
    return outputs


def _switch_state(lab: RunningLab, node: str) -> SwitchState:
    return SwitchState(lab.state.node(node).netns, node_dir(lab.state.lab, node))


# Each source a check can ask for (twin.checks.base.Source), with where it is read locally: a new
# source is its name in Source and its reader here (over gNMI too: twin.checks.collect_gnmi.GNMI_READERS).
LOCAL_READERS: dict[str, Reader] = {
    "bgp_summary": lambda lab, node, _arg, _t: _frr_json(lab.state, node, "bgpd", "show bgp summary json"),
    "bfd_sessions": lambda lab, node, _arg, _t: _switch_state(lab, node).bfd_sessions(),
    "port_table": lambda lab, node, _arg, _t: _switch_state(lab, node).port_table(),
    "daemons": lambda lab, node, _arg, table: daemon_facts(lab.state, node, table),
    "agent": lambda lab, node, _arg, _t: agent_facts(lab, node),
    "ospf_neighbors": lambda lab, node, _arg, _t: _frr_json(lab.state, node, "ospfd", "show ip ospf neighbor json"),
    "fib": lambda lab, node, _arg, _t: _fib(lab.state, node),
    "frr_config": lambda lab, node, _arg, _t: frr_config_facts(lab, node),
    "ping": lambda lab, node, probes, _t: _ping(lab.state, node, probes),
    "interfaces": lambda lab, node, _arg, _t: _interfaces(lab.state, node),
    "df_ping": lambda lab, node, sizes, _t: _df_ping(lab.state, node, sizes),
}
