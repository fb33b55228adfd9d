"""Hosts whose `exec:` lines address them against twin's plan, refused before anything starts.

A host with `exec:` lines (an imported containerlab `linux` node, or an explicit host) gets no
address from twin: its lines set it up. The switch it links to, when twin plans that switch, takes
the /31 twin plans for the link (fabric.server_pool, keyed by leaf and port) and the health checks
ping from the host's planned address. A line that gives the host's NIC another address, or a
gateway other than the switch's planned one, can only fail: before this check it failed as a
health timeout after `twin up` had waited a minute. The lines read here are `ip` commands (each
part of a line split at `;`, `&&` and `||`): `ip [-4] address add|replace|change ADDR dev IF` and
`ip [-4] route add|replace|change|append PREFIX via GW [dev IF]`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Interface

from twin.model.errors import Problem
from twin.model.plan import InterfacePlan, NodePlan, Plan
from twin.model.topology import Topology

_SPLIT = re.compile(r"\s*(?:;|&&|\|\|)\s*")
_ADD = ("add", "replace", "change", "append")
_ADDR_OBJECTS = ("a", "ad", "add", "addr", "addre", "addres", "address")
_ROUTE_OBJECTS = ("r", "ro", "rou", "rout", "route")
# Words of `ip address add` / `ip route add` that take a value (so the value is not the address).
_VALUED = frozenset({"dev", "label", "scope", "broadcast", "brd", "peer", "local", "valid_lft",
                     "preferred_lft", "metric", "table", "proto", "protocol", "src", "via", "mtu",
                     "type", "tos", "realm", "onlink", "weight", "nexthop", "priority", "preference"})


@dataclass(frozen=True)
class IpCommand:
    """One `ip address` or `ip route` add of an exec line."""

    what: str                      # "address" or "route"
    value: str                     # the address (with its prefix) or the route's prefix
    dev: str | None
    via: str | None


def ip_commands(line: str) -> list[IpCommand]:
    """The address and route adds in one exec line (other commands are not read)."""
    out = []
    for part in _SPLIT.split(line.strip()):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if words[:1] == ["sudo"]:
            words = words[1:]
        if not words or words[0] != "ip":
            continue
        rest = [w for w in words[1:] if not w.startswith("-")]
        if len(rest) < 3 or rest[1] not in _ADD:
            continue
        what = "address" if rest[0] in _ADDR_OBJECTS else "route" if rest[0] in _ROUTE_OBJECTS else None
        if what is None:
            continue
        args, values, value = rest[2:], {}, None
        i = 0
        while i < len(args):
            if args[i] in _VALUED and i + 1 < len(args):
                values[args[i]] = args[i + 1]
                i += 2
                continue
            if value is None:
                value = args[i]
            i += 1
        if value is None and what == "address":
            value = values.get("local")
        if value is not None:
            out.append(IpCommand(what, value, values.get("dev"), values.get("via")))
    return out


def exec_conflicts(plan: Plan, topo: Topology) -> list[Problem]:
    """One problem per exec line that addresses a host against twin's plan: it names the node, the
    line, what twin plans and the line to write instead."""
    owners: dict[IPv4Address, str] = {}
    for node in plan.nodes:
        if node.loopback is not None:
            owners[node.loopback] = f"{node.name}'s loopback"
        for i in node.interfaces:
            if i.address is not None:
                owners[i.address.ip] = f"{node.name}:{i.name}"
    problems = []
    for host in plan.hosts:
        commands = [(n, line, cmd) for n, line in enumerate(host.exec) for cmd in ip_commands(line)]
        given = {(cmd.dev, a) for _, _, cmd in commands if cmd.what == "address" and (a := _ipv4(cmd.value))}
        for n, line, cmd in commands:
            found = _conflict(host, cmd, owners, given)
            if found is not None:
                problems.append(Problem(topo.source, _field(topo, host, n),
                                        f"{host.name}: exec line '{line}' {found[0]}", found[1]))
    return problems


def _field(topo: Topology, host: NodePlan, n: int) -> str:
    """The exec line's own field when the node's lines all come from the node itself (its line
    number is known then), else the node's `exec` (a containerlab file merges defaults, kinds and
    groups into it)."""
    own = [k for k in topo.lines if re.fullmatch(rf"(topology\.)?nodes\.{re.escape(host.name)}\.exec\.\d+", k)]
    return f"nodes.{host.name}.exec.{n}" if len(own) == len(host.exec) else f"nodes.{host.name}.exec"


def _conflict(host: NodePlan, cmd: IpCommand, owners: dict[IPv4Address, str],
              given: set[tuple[str | None, IPv4Interface]]) -> tuple[str, str] | None:
    """(what is wrong, the fix), or None when the command agrees with the plan."""
    nic = next((i for i in host.interfaces if cmd.dev is not None and i.kernel == cmd.dev
                and i.address is not None and i.peer_address is not None), None)
    if cmd.what == "address":
        return _address_conflict(cmd, nic, owners, given)
    try:
        gateway = IPv4Address(cmd.via or "")
    except ValueError:
        return None  # no gateway, or an IPv6 one: twin plans neither
    if cmd.dev is not None:
        if nic is None or nic.peer_address is None or gateway == nic.peer_address.ip:
            return None
        return (f"routes via {gateway}, but twin plans {nic.peer_address.ip} for {nic.peer_node}:{nic.peer_iface}, "
                f"{host.name}'s gateway on {nic.kernel}",
                f"route via {nic.peer_address.ip} instead (ip route add {cmd.value} via {nic.peer_address.ip} "
                f"dev {nic.kernel})")
    nics = [i for i in host.interfaces if i.address is not None and i.peer_address is not None]
    if not nics or len(nics) != len(host.interfaces) or any(
            i.address is not None and gateway in i.address.network for i in nics):
        return None  # on a NIC twin addresses, or one it does not (whose addresses the lines give)
    gateways = ", ".join(f"{i.peer_address.ip} ({i.peer_node}) on {i.kernel}" for i in nics if i.peer_address)
    first = nics[0]
    assert first.peer_address is not None
    return (f"routes via {gateway}, which no NIC of {host.name} reaches: twin plans its gateways as {gateways}",
            f"route via one of them (ip route add {cmd.value} via {first.peer_address.ip} dev {first.kernel})")


def _address_conflict(cmd: IpCommand, nic: InterfacePlan | None, owners: dict[IPv4Address, str],
                      given: set[tuple[str | None, IPv4Interface]]) -> tuple[str, str] | None:
    address = _ipv4(cmd.value)
    if address is None:
        return None  # IPv6, or not an address: twin plans neither
    if nic is not None and nic.address is not None and (cmd.dev, nic.address) not in given:
        return (f"gives {cmd.dev} {address}, but twin plans {nic.address} for {cmd.dev} (its link to "
                f"{nic.peer_node}:{nic.peer_iface}, which twin addresses {nic.peer_address})",
                f"write 'ip addr add {nic.address} dev {cmd.dev}' instead, or give {nic.peer_node} its own "
                "config_db.json so twin plans nothing on that link")
    owner = owners.get(address.ip)
    if owner is not None and (nic is None or address != nic.address):
        return (f"gives {cmd.dev or 'a NIC'} {address.ip}, the address twin plans for {owner}",
                "pick an address outside fabric.loopback_pool, fabric.fabric_pool and fabric.server_pool")
    return None


def _ipv4(text: str) -> IPv4Interface | None:
    try:
        return IPv4Interface(text)
    except ValueError:
        return None
