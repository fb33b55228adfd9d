"""The health checks a plan implies, with inputs derived from the plan alone.

The plan says what the nodes really have: a switch that brings its own config_db.json (an imported
containerlab sonic-vs node's bound file) has the sessions, addresses, BFD peers, multipath width and
advertised prefixes of that file in its NodePlan (twin/stages/load/bound_config.py), and the hosts on its
links get no planned address, so they are judged by the addresses their own `exec:` lines give them.
The sessions, ECMP widths, BFD peers and pings expected here are then the ones those configs and
lines set up, not twin's address plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from twin.checks.base import Check
from twin.checks.bfd import BfdInput, BfdSessionsUp
from twin.checks.bgp import BgpInput, BgpSessionsEstablished
from twin.checks.configured import (
    ConfiguredSessionsEstablished,
    configured_bfd,
    configured_ecmp,
    configured_sessions,
)
from twin.checks.df_ping import DfPingInput, DfProbe, ServerPortsCarryFullFrames
from twin.checks.ecmp import EcmpInput, EcmpWidth
from twin.checks.frr_config import FrrConfigInput, FrrRunsConfigDb
from twin.checks.mtu import MtuConsistent, MtuInput
from twin.checks.ospf import OspfAdjacencies, OspfInput
from twin.checks.reachability import PingInput, ServerReachability
from twin.checks.roce_queue import roce_queue_check
from twin.checks.surface import surface_check
from twin.host import userfile
from twin.model.config_db import ConfigDb
from twin.model.plan import NodePlan, Plan
from twin.switch.frr.frr_daemons import parse_daemons_file


def expected_sessions(plan: Plan) -> dict[str, dict[str, str]]:
    return {n.name: {str(nb.ip): nb.name for nb in n.neighbors}
            for n in plan.nodes if n.kind == "switch" and n.neighbors}


def expected_ecmp(plan: Plan) -> dict[str, dict[str, int]]:
    leaves = [n for n in plan.nodes if n.role == "leaf" and n.kind == "switch"]
    out: dict[str, dict[str, int]] = {}
    for leaf in leaves:
        width = min(len(leaf.neighbors), leaf.max_paths or plan.max_paths)
        out[leaf.name] = {str(net): width for other in leaves if other.name != leaf.name
                          for net in other.networks}
    return out


_EXEC_ADDR = re.compile(r"\bip\s+(?:-4\s+)?a(?:ddr(?:ess)?)?\s+add\s+([0-9.]+)/\d+\s+dev\s+(\S+)")


def host_addresses(host: NodePlan) -> list[tuple[str, str]]:
    """(address, attached node) per NIC: planned for servers, from `exec:` lines for imported hosts.
    A NIC facing a switch that brings its own config_db.json has no planned address (twin plans
    nothing on that link), so such hosts are judged by their `exec:` lines alone."""
    out = [(str(i.address.ip), i.peer_node) for i in host.interfaces if i.address is not None]
    peers = {i.kernel: i.peer_node for i in host.interfaces}
    for line in host.exec:
        m = _EXEC_ADDR.search(line)
        if m and m.group(2) in peers:
            out.append((m.group(1), peers[m.group(2)]))
    return out


def expected_pings(plan: Plan) -> dict[str, dict[str, dict[str, str]]]:
    """Per host and NIC address: the NIC addresses of other hosts behind another leaf or router."""
    nics = [(h.name, attached, addr) for h in plan.hosts for addr, attached in host_addresses(h)]
    out: dict[str, dict[str, dict[str, str]]] = {}
    for server, leaf, src in nics:
        targets = {addr: f"{other}/{addr}" for other, other_leaf, addr in nics
                   if other != server and other_leaf != leaf}
        if targets:
            out.setdefault(server, {})[src] = targets
    return out


def expected_ospf(plan: Plan) -> dict[str, dict[str, str]]:
    ospf = {n.name for n in plan.nodes if n.kind == "router" and n.daemons is not None
            and "ospfd" in parse_daemons_file(userfile.read_text(n.daemons))}
    out: dict[str, dict[str, str]] = {}
    for name in sorted(ospf):
        for i in plan.node(name).interfaces:
            if i.peer_node in ospf:
                out.setdefault(name, {})[i.kernel] = i.peer_node
    return out


def expected_bfd(plan: Plan) -> dict[str, list[str]]:
    """Peers each switch runs BFD with: every neighbor when fabric.bfd is on, or those a switch's own
    config_db.json marks `bfd: "true"`."""
    out: dict[str, list[str]] = {}
    for n in plan.nodes:
        if n.kind != "switch":
            continue
        peers = [str(nb.ip) for nb in n.neighbors if (plan.fabric.bfd.enabled if nb.bfd is None else nb.bfd)]
        if peers:
            out[n.name] = peers
    return out


def fabric_links(plan: Plan) -> list[tuple[str, str, str, str]]:
    kinds = {n.name: n.kind for n in plan.nodes}
    return [(lk.a_node, lk.a_iface, lk.b_node, lk.b_iface) for lk in plan.links
            if kinds[lk.a_node] == "switch" and kinds[lk.b_node] == "switch"]


def server_links(plan: Plan) -> list[tuple[str, str, str, str]]:
    """(switch, port, server, the server's kernel NIC) of every link between a switch and a server."""
    out = []
    for host in plan.hosts:
        for nic in host.interfaces:
            if plan.node(nic.peer_node).kind == "switch":
                out.append((nic.peer_node, nic.peer_iface, host.name, nic.kernel))
    return out


def df_probes(plan: Plan) -> list[DfProbe]:
    """A DF ping per server link whose switch port has a planned address: from the server's NIC to
    that address, as large as the smaller of the two ends' planned MTUs (the fabric MTU)."""
    out = []
    for host in plan.hosts:
        for nic in host.interfaces:
            peer = plan.node(nic.peer_node)
            if peer.kind != "switch":
                continue
            port = peer.iface(nic.peer_iface)
            if port.address is not None:
                out.append(DfProbe(switch=peer.name, port=port.name, server=host.name, nic=nic.kernel,
                                   address=str(port.address.ip), mtu=min(nic.mtu, port.mtu)))
    return out


# A catalog entry builds its check from the plan (and, when given, the switches' running CONFIG_DBs),
# or returns None when the lab has nothing for it to judge. Adding a check is its module (a Check
# class and such a builder) plus one line in HEALTH or VERIFY below: the order is the report's order.
Builder = Callable[[Plan, Mapping[str, ConfigDb] | None], Check[Any] | None]


def _bgp(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    sessions = expected_sessions(plan)
    return BgpSessionsEstablished(BgpInput(sessions=sessions)) if sessions else None


def _configured_bgp(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    if configs is None:
        return None
    asked = configured_sessions(configs)
    return ConfiguredSessionsEstablished(BgpInput(sessions=asked)) if asked and asked != expected_sessions(plan) \
        else None


def _ecmp(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    ecmp = expected_ecmp(plan) if configs is None else configured_ecmp(plan, configs)
    return EcmpWidth(EcmpInput(expected=ecmp)) if ecmp else None


def _ospf(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    ospf = expected_ospf(plan)
    return OspfAdjacencies(OspfInput(adjacencies=ospf)) if ospf else None


def _reachability(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    pings = expected_pings(plan)
    return ServerReachability(PingInput(probes=pings)) if pings else None


def _bfd(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    bfd = expected_bfd(plan) if configs is None else configured_bfd(configs)
    return BfdSessionsUp(BfdInput(peers=bfd)) if bfd else None


def _mtu(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    links, servers = fabric_links(plan), server_links(plan)
    return MtuConsistent(MtuInput(links=links, server_links=servers)) if links or servers else None


def _df_ping(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    probes = df_probes(plan)
    return ServerPortsCarryFullFrames(DfPingInput(probes=probes)) if probes else None


def _frr_config(plan: Plan, configs: Mapping[str, ConfigDb] | None) -> Check[Any] | None:
    switches = [n.name for n in plan.nodes if n.kind == "switch"]
    return FrrRunsConfigDb(FrrConfigInput(switches=switches)) if switches else None


# What `twin up` waits for and `twin status` shows ...
HEALTH: tuple[Builder, ...] = (_bgp, _configured_bgp, _ecmp, _ospf, _reachability)
# ... and what `twin verify` adds to them. The MTUs and the DF ping stay out of HEALTH although they
# are cheap (about 30 ms more for `twin verify` on the default lab: 16 fping processes, 8 at a time):
# `twin up` sets both ends of every link from one plan, so nothing there converges and a mismatch
# would only make up wait out its whole timeout; they disagree after a change, which verify (and
# rehearse and ci, which run it) judge. In HEALTH the DF ping would also run a process per server at
# every poll while the fabric converges, and at each `twin graph --watch` refresh.
VERIFY: tuple[Builder, ...] = (_bfd, _mtu, _df_ping, _frr_config)


def _built(builders: tuple[Builder, ...], plan: Plan, configs: Mapping[str, ConfigDb] | None) -> list[Check[Any]]:
    return [check for build in builders if (check := build(plan, configs)) is not None]


def verify_checks(plan: Plan, configs: Mapping[str, ConfigDb] | None = None,
                  accepted: Iterable[str] = (), roce_dscp: int | None = None) -> list[Check[Any]]:
    """The health checks plus BFD, MTUs on both ends of every link, a DF ping at the MTU across every
    server port and FRR against CONFIG_DB: what `twin verify` runs.

    With `configs` (each switch's running CONFIG_DB), BFD and the announced prefixes are what those
    configs ask for, and a `configured-bgp-sessions` check is added when their neighbors differ
    from the plan's (twin.checks.configured); with `roce_dscp` too (the lab file's roce.compute_dscp),
    whether RoCE goes to a lossless queue on every port given QoS (twin.checks.roce_queue)."""
    checks = _built(HEALTH + VERIFY, plan, configs)
    roce = roce_queue_check(configs, roce_dscp)
    surface = surface_check(configs, accepted)   # `accepted`: tables the lab file lets pass (accept_not_emulated)
    return checks + [c for c in (roce, surface) if c is not None]


def health_checks(plan: Plan, configs: Mapping[str, ConfigDb] | None = None) -> list[Check[Any]]:
    """What a healthy lab must pass: sessions, ECMP width, OSPF adjacencies, server reachability."""
    return _built(HEALTH, plan, configs)
