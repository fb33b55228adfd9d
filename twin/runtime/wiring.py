"""Shared wiring of every runtime: namespace names, links as veth pairs, the management subnet,
and the processes a lab leaves behind.

Names: node namespaces are `tw.<lab>.<node>`, the management namespace `tw.<lab>` (a bridge
`br0` with one veth per switch, `eth0` inside the switch) and the host's end `tw-<lab>`.
Dots are not allowed in lab names, so one lab's prefix never matches another's.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from ipaddress import IPv4Network
from pathlib import Path

from twin.host.rundir import known_labs
from twin.host.shell import ip_batch, list_netns, run
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.plan import NodePlan, Plan
from twin.model.state import LabState

MGMT_SPACE = IPv4Network("172.20.0.0/14")
# Nodes are prepared 8 at a time and launch 8 at a time (the staged start; while preparation runs,
# the nodes launched early take a pool of 8 of their own: twin.runtime.launch_order): each step waits
# on processes it runs (redis, ip, FRR's config check and daemons), so 8 keep 2 CPUs busy, and a
# 192-switch lab launches its switches as fast as the machine can peer them. A load-adaptive hold on
# top (each launch waiting up to 1 s for the run queue to shorten) was measured and removed: with
# SONiC's 10 s connect timer at 64 x 128 the run queue never shortened, every launch waited its full
# second, and the lab was healthy after 407 s against 359 s without it (16 x 64: 23.3 s against
# 19.1-20.6 s, with 2-3x the idle CPU).
WORKERS = 8
# Interface indexes of link and management veth ends. Links start far above what a host hands out:
# a docker container's eth0 keeps the index its host gave it, and on a host that had made a thousand
# interfaces (a few labs) that index fell among the links' (from 1000: `RTNETLINK answers: File exists`).
LINK_INDEX, MGMT_INDEX = 1 << 24, 900000


def node_netns(lab: str, node: str) -> str:
    return f"tw.{lab}.{node}"


def mgmt_netns(lab: str) -> str:
    return f"tw.{lab}"


def owned_netns(lab: str) -> list[str]:
    prefix = f"tw.{lab}."
    return [ns for ns in list_netns() if ns == mgmt_netns(lab) or ns.startswith(prefix)]


def link_lines(lab: str, plan: Plan) -> list[str]:
    """`ip -b` lines creating every link as a veth pair with its ends in the two nodes' namespaces.

    Both ends of every veth get their own ifindex. When the two ends of a pair share one (easy
    across namespaces), the kernel's linkwatch treats a carrier change as non-urgent and may sit on
    it for up to a second: a spine's link going down would then reach the leaf late.
    """
    lines = []
    for k, link in enumerate(plan.links):
        a, b = plan.node(link.a_node), plan.node(link.b_node)
        lines.append(f"link add name {a.iface(link.a_iface).kernel} index {LINK_INDEX + 2 * k} "
                     f"netns {node_netns(lab, a.name)} type veth "
                     f"peer name {b.iface(link.b_iface).kernel} index {LINK_INDEX + 2 * k + 1} "
                     f"netns {node_netns(lab, b.name)}")
    return lines


def pick_mgmt_subnet(count: int, taken: Iterable[IPv4Network]) -> IPv4Network:
    """The first subnet of 172.20.0.0/14 big enough for the host and `count` switches, unused."""
    prefixlen = 24
    while (2 ** (32 - prefixlen)) - 3 < count:
        prefixlen -= 1
    busy = list(taken)
    for net in MGMT_SPACE.subnets(new_prefix=prefixlen):
        if net.network_address == IPv4Network("172.20.0.0/24").network_address and prefixlen == 24:
            continue  # leave 172.20.0.0/24 alone; containerlab's default is 172.20.20.0/24
        if not any(net.overlaps(b) for b in busy):
            return net
    raise RuntimeBackendError("no free management subnet in 172.20.0.0/14; remove other labs")


def host_routes() -> list[IPv4Network]:
    out = run(["ip", "-4", "route", "show", "table", "all"], check=False).stdout
    nets = []
    for line in out.splitlines():
        word = line.split()[0] if line.split() else ""
        if word in ("local", "broadcast", "unreachable", "blackhole"):
            word = line.split()[1]
        try:
            nets.append(IPv4Network(word if "/" in word or word == "default" else f"{word}/32"))
        except ValueError:
            continue
    return [n for n in nets if n.prefixlen > 0]


def preflight() -> None:
    if os.geteuid() != 0:
        raise TwinError("the netns runtime needs root (network namespaces, veth pairs); run as root")
    if not Path("/usr/lib/frr/zebra").exists() or shutil.which("vtysh") is None:
        raise TwinError("FRR is not installed: run 'make lab-up' (it installs it) or "
                        "'apt-get install frr frr-pythontools'")


def parallel(nodes: list[NodePlan], fn: Callable[[NodePlan], list[str]],
              tick: Callable[[], None]) -> list[str]:
    out: list[str] = []
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for result in pool.map(fn, nodes):
            out += result
            tick()
    return out


def pidfile_pids(root: Path) -> set[int]:
    """PIDs from the lab's pid files, only where that process is still one the lab started."""
    pids = set()
    for pidfile in [*root.glob("*.pid"), *root.glob("nodes/*/*.pid")]:
        try:
            pid = int(pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError):
            continue
        if str(pidfile.parent) in cmdline:
            pids.add(pid)
    return pids


def netns_labs() -> list[str]:
    """Labs with a run directory or namespaces on this machine."""
    names = set(known_labs())
    for ns in list_netns():
        if ns.startswith("tw."):
            names.add(ns.split(".")[1])
    return sorted(names)


def set_link_state(state: LabState, node: str, ifaces: Sequence[str], up: bool) -> None:
    """Link ends of one node up or down in one batch, in its namespace (every runtime attaches one)."""
    ip_batch([f"link set dev {i} {'up' if up else 'down'}" for i in ifaces], netns=state.node(node).netns)


def netns_pids(state: LabState, node: str) -> list[int]:
    out = run(["ip", "netns", "pids", state.node(node).netns], check=False).stdout.split()
    return sorted(int(p) for p in out if p.isdigit())
