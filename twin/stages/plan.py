"""Turn a Topology into a Plan: ports, ASNs, loopbacks, /31s, sessions (RFC 7938 style).

Allocation is deterministic and stable when a node is added: a link's /31 is a function of
its leaf's number and the leaf's port number, a loopback of the node's role and number.
Links that touch no leaf take /31s from the top of the pool down, in file order.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Literal

from twin.model.errors import PlanError, Problem
from twin.model.plan import InterfacePlan, LinkPlan, NeighborPlan, NodeKind, NodePlan, Plan
from twin.model.topology import Endpoint, FabricSettings, Link, Node, Topology
from twin.stages.exec_conflicts import exec_conflicts
from twin.stages.load.generators import sonic_port

_ROLE_BLOCK = {"spine": 0, "leaf": 1, "router": 2}
_LOOPBACK_BLOCK = 1024
_PRIVATE_2B = (64512, 65534)
_PRIVATE_4B = (4200000000, 4294967294)


def node_kind(node: Node) -> NodeKind:
    if node.role in ("server", "host"):
        return "host"
    return "router" if node.user_frr else "switch"


def _port_no(iface: str, fabric: FabricSettings) -> int:
    """The port's position in the hwsku (validate_topology refused names the SKU lacks)."""
    n = fabric.sku.number(iface)
    return -1 if n is None else n


class _Pool:
    """/31 slots of one pool; keyed slots first, then the rest from the top down."""

    def __init__(self, name: str, net: IPv4Network, source: str) -> None:
        self.name, self.net, self.source = name, net, source
        self.size = net.num_addresses // 2
        self.used: set[int] = set()
        self.next_top = self.size - 1
        self.problems: list[Problem] = []
        self.overflow: list[str] = []

    def report(self) -> list[Problem]:
        """One problem per exhausted pool, however many links did not fit."""
        problems = list(self.problems)
        if self.overflow:
            problems.append(Problem(self.source, f"fabric.{self.name}", f"{self.net} is exhausted: it holds "
                                    f"{self.size} /31s and {len(self.overflow)} links do not fit (first: "
                                    f"{self.overflow[0]})", f"use a larger fabric.{self.name}"))
        return problems

    def _subnet(self, slot: int) -> IPv4Network:
        return IPv4Network((int(self.net.network_address) + 2 * slot, 31))

    def keyed(self, slot: int, what: str) -> IPv4Network | None:
        if slot >= self.size or slot in self.used:
            self.overflow.append(f"{what} needs /31 number {slot}")
            return None
        self.used.add(slot)
        return self._subnet(slot)

    def top(self, what: str) -> IPv4Network | None:
        while self.next_top in self.used:
            self.next_top -= 1
        if self.next_top < 0:
            self.overflow.append(what)
            return None
        self.used.add(self.next_top)
        return self._subnet(self.next_top)


def _check_asn(asn: int, node: str, source: str) -> list[Problem]:
    if not 1 <= asn <= 4294967294 or asn in (23456, 65535):
        return [Problem(source, f"nodes.{node}.asn", f"ASN {asn} is out of range",
                        "use a private ASN: 64512-65534 or 4200000000-4294967294")]
    return []


def _asn_problems(topo: Topology, leaves: int) -> list[Problem]:
    f = topo.fabric
    problems = []
    for field, base, count in (("leaf_asn_base", f.leaf_asn_base, leaves),
                               ("spine_asn", f.spine_asn, 1),
                               ("router_asn_base", f.router_asn_base, len(topo.by_role("router")))):
        if count == 0:
            continue
        last = base + count - 1
        for lo, hi in (_PRIVATE_2B, _PRIVATE_4B):
            if lo <= base <= hi and last > hi:
                problems.append(Problem(topo.source, f"fabric.{field}", f"ASNs {base}..{last} run past {hi}, "
                                        "the end of the private range", f"lower fabric.{field} or use "
                                        "4-byte private ASNs (4200000000 and up)"))
        if not 1 <= base <= 4294967294 or base in (23456, 65535):
            problems.append(Problem(topo.source, f"fabric.{field}", f"ASN {base} is out of range",
                                    "use a private ASN: 64512-65534 or 4200000000-4294967294"))
    return problems


def _assign_ports(topo: Topology) -> tuple[list[Link], list[Problem]]:
    """Give every endpoint without an interface the next free port of its node."""
    taken: dict[str, set[str]] = {}
    for link in topo.links:
        for end in (link.a, link.b):
            if end.iface:
                taken.setdefault(end.node, set()).add(end.iface)
    nodes = {n.name: n for n in topo.nodes}
    half = topo.fabric.radix // 2

    def next_iface(end: Endpoint, peer: Endpoint, line: int | None) -> str:
        node, peer_node = nodes.get(end.node), nodes.get(peer.node)
        used = taken.setdefault(end.node, set())
        if node is not None and node.config is not None:  # the ports its own config_db.json lists
            free = [p for p in sorted(node.config.ports, key=_port_key) if p not in used]
            if not free:
                full.append(Problem(str(node.config_db), "PORT", f"{end.node} has no free port for the link to "
                                    f"{peer.node}: every port of its PORT table is taken",
                                    "add a port to PORT or connect fewer links", line))
            name = free[0] if free else f"{end.node}-noport{len(used)}"
        elif node is not None and node.is_switch and not node.user_frr:
            uplink = node.role == "leaf" and peer_node is not None and peer_node.role == "spine"
            start = half if uplink else 0
            n = start
            while sonic_port(n, topo.fabric) in used:
                n += 1
            name = sonic_port(n, topo.fabric)
            if n >= topo.fabric.radix:
                full.append(Problem(topo.source, "fabric.radix", f"{end.node} has no free port for the link to "
                                    f"{peer.node}: the switch has fabric.radix={topo.fabric.radix} ports",
                                    "raise fabric.radix or connect fewer links", line))
        else:
            n = 1
            while f"eth{n}" in used:
                n += 1
            name = f"eth{n}"
        used.add(name)
        return name

    full: list[Problem] = []
    out = []
    for link in topo.links:
        a = link.a if link.a.iface else Endpoint(node=link.a.node, iface=next_iface(link.a, link.b, link.line))
        b = link.b if link.b.iface else Endpoint(node=link.b.node, iface=next_iface(link.b, link.a, link.line))
        out.append(Link(a=a, b=b, line=link.line))
    return out, full


def plan_topology(topo: Topology) -> Plan:
    """The plan of `topo`, in named stages, each with its checkpoint: a stage collects every problem
    it finds and the plan stops after it with one PlanError listing them (a later stage builds on its
    results), so a user sees each stage's mistakes in one run."""
    planner = _Planner(topo)
    for stage in (planner.number_switches, planner.address_links, planner.address_management):
        stage()
        planner.checkpoint()
    plan = planner.plan()
    conflicts = exec_conflicts(plan, topo)  # hosts whose exec: lines address them against the plan
    if conflicts:
        raise PlanError(topo.locate(conflicts))
    return plan


class _Planner:
    """The state the planning stages share (twin.stages.plan.plan_topology runs them in order)."""

    def __init__(self, topo: Topology) -> None:
        self.topo, self.f = topo, topo.fabric
        self.nodes = {n.name: n for n in topo.nodes}
        self.problems: list[Problem] = []
        self.links: list[Link] = []
        self.asn: dict[str, int] = {}
        self.loopback: dict[str, IPv4Address] = {}
        self.ifaces: dict[str, list[InterfacePlan]] = {n.name: [] for n in topo.nodes}
        self.neighbors: dict[str, list[NeighborPlan]] = {n.name: [] for n in topo.nodes}
        self.networks: dict[str, list[IPv4Network]] = {n.name: [] for n in topo.nodes}
        self.link_plans: list[LinkPlan] = []
        self.mgmt: dict[str, IPv4Interface] = {}

    def checkpoint(self) -> None:
        if self.problems:
            raise PlanError(self.topo.locate(self.problems))

    # -- stage 1: ASNs, loopbacks and ports -------------------------------------------------------

    def number_switches(self) -> None:
        topo, f = self.topo, self.f
        self.problems += _asn_problems(topo, len(topo.by_role("leaf")))
        self.links, port_problems = _assign_ports(topo)
        self.problems += port_problems
        short_of: list[str] = []
        for node in topo.nodes:
            if node_kind(node) != "switch":
                continue
            if node.user_config:  # its own config_db.json numbers it
                self._number_configured(node)
                continue
            if node.asn is not None:
                self.asn[node.name] = node.asn
                self.problems += _check_asn(node.asn, node.name, topo.source)
            else:
                self.asn[node.name] = {"spine": f.spine_asn, "leaf": f.leaf_asn_base + node.index - 1,
                                       "router": f.router_asn_base + node.index - 1}[node.role]
            offset = _ROLE_BLOCK[node.role] * _LOOPBACK_BLOCK + node.index
            if offset >= f.loopback_pool.num_addresses - 1 or node.index >= _LOOPBACK_BLOCK:
                short_of.append(node.name)
                continue
            self.loopback[node.name] = f.loopback_pool.network_address + offset
        if short_of:
            self.problems.append(Problem(topo.source, "fabric.loopback_pool", f"{f.loopback_pool} is exhausted: "
                                         f"{len(short_of)} switches get no loopback (first: {short_of[0]})",
                                         "use a larger fabric.loopback_pool (a /16 holds 1023 nodes per role)"))

    def _number_configured(self, node: Node) -> None:
        if node.config is None:
            self.problems.append(Problem(self.topo.source, f"nodes.{node.name}", f"the config_db.json of "
                                         f"{node.name} was not read", "load the topology with "
                                         "twin.stages.load.loader.load_topology"))
            return
        if node.config.asn is not None:
            self.asn[node.name] = node.config.asn
        if node.config.loopback is not None:
            self.loopback[node.name] = node.config.loopback

    # -- stage 2: the links' subnets, interfaces, sessions and networks ----------------------------

    def address_links(self) -> None:
        f, source = self.f, self.topo.source
        fabric_pool = _Pool("fabric_pool", f.fabric_pool, source)
        server_pool = _Pool("server_pool", f.server_pool, source)
        for link in self.links:
            na, nb = self.nodes[link.a.node], self.nodes[link.b.node]
            assert link.a.iface and link.b.iface
            if na.config is not None or nb.config is not None:
                _configured_link(link, na, nb, self.ifaces, self.link_plans, f)
                continue
            self._address_link(link, na, nb, fabric_pool, server_pool)
        self.problems += fabric_pool.report() + server_pool.report()
        for node in self.topo.nodes:
            if node.config is not None:
                self.neighbors[node.name] = _configured_neighbors(node, self.ifaces[node.name], self.nodes,
                                                                  self.ifaces)
                self.networks[node.name] = list(node.config.networks)

    def _address_link(self, link: Link, na: Node, nb: Node, fabric_pool: _Pool, server_pool: _Pool) -> None:
        f = self.f
        ka, kb = node_kind(na), node_kind(nb)
        assert link.a.iface and link.b.iface
        subnet: IPv4Network | None = None
        # The "owner" is the end whose (number, port) keys the /31: the leaf, else the switch.
        a_owns = not (nb.role == "leaf" and na.role != "leaf") and ka == "switch"
        owner, owner_iface = (na, link.a.iface) if a_owns else (nb, link.b.iface)
        what = f"link {link.a} - {link.b}"
        if ka == "switch" and kb == "switch":
            if owner.role == "leaf":
                slot = (owner.index - 1) * f.radix + _port_no(owner_iface, f)
                subnet = fabric_pool.keyed(slot, what)
            else:
                subnet = fabric_pool.top(what)
            role: Literal["fabric", "server", "other"] = "fabric"
        elif {ka, kb} == {"switch", "host"}:
            sw, sw_iface = (na, link.a.iface) if ka == "switch" else (nb, link.b.iface)
            if sw.role == "leaf":
                subnet = server_pool.keyed((sw.index - 1) * f.radix + _port_no(sw_iface, f), what)
            else:
                subnet = server_pool.top(what)
            role = "server"
        else:
            role = "other"
        self.link_plans.append(LinkPlan(a_node=na.name, a_iface=link.a.iface, b_node=nb.name,
                                        b_iface=link.b.iface, subnet=subnet))
        hosts = list(subnet.hosts()) if subnet else []
        # The upper tier (spine, or the switch facing a server) takes the even address.
        upper_is_a = (na.role == "spine" or kb == "host") if a_owns else not (nb.role == "spine" or ka == "host")
        addr_a = addr_b = None
        if hosts:
            lo, hi = (IPv4Interface(f"{h}/31") for h in hosts)
            addr_a, addr_b = (lo, hi) if upper_is_a else (hi, lo)
        for me, myif, mykind, peer, peerif, mine, theirs in (
            (na, link.a.iface, ka, nb, link.b.iface, addr_a, addr_b),
            (nb, link.b.iface, kb, na, link.a.iface, addr_b, addr_a),
        ):
            self.ifaces[me.name].append(InterfacePlan(
                name=myif, kernel=myif, peer_node=peer.name, peer_iface=peerif, address=mine,
                peer_address=theirs, mtu=f.mtu, speed=f.speed if mykind == "switch" else None,
                role=role,
            ))
            if role == "fabric" and mine and theirs:
                self.neighbors[me.name].append(NeighborPlan(ip=theirs.ip, asn=self.asn[peer.name], name=peer.name,
                                                            local_addr=mine.ip, iface=myif))
            if role == "server" and mykind == "switch" and mine:
                self.networks[me.name].append(mine.network)

    # -- stage 3: management addresses ------------------------------------------------------------

    def address_management(self) -> None:
        f = self.f
        switch_names = [n.name for n in self.topo.nodes if node_kind(n) == "switch"]
        mgmt_hosts = list(f.mgmt_pool.hosts())[1:]  # the first host address is the gateway
        if len(switch_names) > len(mgmt_hosts):
            self.problems.append(Problem(self.topo.source, "fabric.mgmt_pool", f"{f.mgmt_pool} holds "
                                         f"{len(mgmt_hosts)} management addresses besides its gateway; "
                                         f"{len(switch_names)} switches need one", "use a larger fabric.mgmt_pool"))
        self.mgmt = {name: IPv4Interface(f"{ip}/{f.mgmt_pool.prefixlen}")
                     for name, ip in zip(switch_names, mgmt_hosts, strict=False)}

    # -- the plan -----------------------------------------------------------------------------------

    def plan(self) -> Plan:
        topo, f = self.topo, self.f
        uplinks = max((len(self.neighbors[n.name]) for n in topo.by_role("leaf")), default=1)
        max_paths = f.max_paths or max(uplinks, 1)
        plans = []
        for node in topo.nodes:
            loop = self.loopback.get(node.name)
            own = node.config is not None  # a switch's own config_db.json says what it advertises
            plans.append(NodePlan(
                name=node.name, role=node.role, kind=node_kind(node), index=node.index, asn=self.asn.get(node.name),
                loopback=loop, mgmt=self.mgmt.get(node.name), pod=node.pod, rail=node.rail,
                interfaces=sorted(self.ifaces[node.name], key=_iface_order),
                neighbors=sorted(self.neighbors[node.name], key=lambda nb: nb.ip),
                networks=([IPv4Network(f"{loop}/32")] if loop and not own else []) + sorted(self.networks[node.name]),
                image=node.image, frr_conf=node.frr_conf, daemons=node.daemons, exec=node.exec,
                config_db=node.config_db, max_paths=node.config.max_paths if node.config else None,
            ))
        return Plan(name=topo.name, kind=topo.kind, source=topo.source, fabric=f, max_paths=max_paths,
                    nodes=plans, links=self.link_plans)


def _port_key(name: str) -> tuple[str, int]:
    m = re.match(r"([A-Za-z_-]*)(\d*)", name)
    assert m
    return (m.group(1), int(m.group(2) or 0))


def _own_address(node: Node, iface: str) -> IPv4Interface | None:
    """The first IPv4 address a switch's own config gives `iface` (INTERFACE), None for others."""
    if node.config is None:
        return None
    found = node.config.addresses.get(iface, [])
    return found[0] if found else None


def _configured_link(link: Link, na: Node, nb: Node, ifaces: dict[str, list[InterfacePlan]],
                     link_plans: list[LinkPlan], f: FabricSettings) -> None:
    """A link with an end on a switch that brings its own config_db.json: the addresses are the ones
    the files give (a host's come from its `exec:` lines, a router's from its frr.conf), nothing is
    taken from twin's pools. validate_topology refused links to switches twin plans."""
    assert link.a.iface and link.b.iface
    ka, kb = node_kind(na), node_kind(nb)
    addr_a, addr_b = _own_address(na, link.a.iface), _own_address(nb, link.b.iface)
    known = addr_a or addr_b
    subnet = known.network if known is not None else None
    role: Literal["fabric", "server", "other"] = (
        "fabric" if ka == kb == "switch" else "server" if {ka, kb} == {"switch", "host"} else "other")
    link_plans.append(LinkPlan(a_node=na.name, a_iface=link.a.iface, b_node=nb.name, b_iface=link.b.iface,
                               subnet=subnet))
    port_a = na.config.ports.get(link.a.iface) if na.config else None
    port_b = nb.config.ports.get(link.b.iface) if nb.config else None
    mtu = (port_a.mtu if port_a else None) or (port_b.mtu if port_b else None) or f.mtu
    for me, myif, mine, port, peer, peerif, theirs in (
        (na, link.a.iface, addr_a, port_a, nb, link.b.iface, addr_b),
        (nb, link.b.iface, addr_b, port_b, na, link.a.iface, addr_a),
    ):
        ifaces[me.name].append(InterfacePlan(
            name=myif, kernel=myif, peer_node=peer.name, peer_iface=peerif, address=mine, peer_address=theirs,
            mtu=(port.mtu if port and port.mtu else mtu), speed=port.speed if port else None, role=role,
        ))


def _configured_neighbors(node: Node, mine: list[InterfacePlan], nodes: dict[str, Node],
                          ifaces: dict[str, list[InterfacePlan]]) -> list[NeighborPlan]:
    """The BGP sessions a switch's own config_db.json sets up. Each is named after the node that owns
    the peer address (known from its own config, or planned), else the BGP_NEIGHBOR name; `iface` is
    the linked port on the peer's subnet, else the interface holding that subnet (a VLAN), else ''."""
    facts = node.config
    assert facts is not None
    owner: dict[IPv4Address, str] = {}
    for other in nodes.values():
        for addrs in (other.config.addresses.values() if other.config else []):
            owner.update({a.ip: other.name for a in addrs})
        owner.update({i.address.ip: other.name for i in ifaces.get(other.name, []) if i.address is not None})
    out = []
    for s in facts.sessions:
        port = next((i for i in mine if i.address is not None and s.ip in i.address.network
                     and s.ip != i.address.ip), None)
        held = next(((name, a) for name, addrs in sorted(facts.addresses.items()) for a in addrs
                     if s.ip in a.network and s.ip != a.ip and a.network.prefixlen < 32), None)
        if port is not None:
            iface, local, name = port.name, port.address, port.peer_node
        elif held is not None:
            iface, local, name = held[0], held[1], owner.get(s.ip, s.name or str(s.ip))
        else:
            iface, local, name = "", None, owner.get(s.ip, s.name or str(s.ip))
        local_ip = s.local_addr or (local.ip if local is not None else None) or facts.loopback \
            or IPv4Address("0.0.0.0")
        out.append(NeighborPlan(ip=s.ip, asn=s.asn, name=name, local_addr=local_ip, iface=iface, bfd=s.bfd))
    return out


def _iface_order(i: InterfacePlan) -> tuple[str, int]:
    m = re.match(r"([A-Za-z_-]*)(\d*)", i.name)
    assert m
    return (m.group(1), int(m.group(2) or 0))
