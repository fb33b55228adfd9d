"""Turn a drill's target (`spine1`, `leaf1:spine1`, `leaf1:Ethernet128`) into the plan's elements: a `Fault`.

A kind with a `role` (faults/registry.py) takes a node of that role; the others take a link."""

from __future__ import annotations

from twin.drills.faults.base import Fault, Session, link_key
from twin.drills.faults.registry import fault_kind
from twin.model.drill import Step
from twin.model.errors import PlanError, Problem
from twin.model.plan import LinkPlan, Plan


def _problem(message: str, fix: str) -> PlanError:
    return PlanError([Problem("--target", "target", message, fix)])


def fabric_link_of(plan: Plan, link: LinkPlan) -> bool:
    a, b = plan.node(link.a_node), plan.node(link.b_node)
    return a.kind in ("switch", "router") and b.kind in ("switch", "router")


def resolve_link(plan: Plan, target: str) -> tuple[LinkPlan, str]:
    """`leaf1:spine1` (their first link) or `leaf1:Ethernet128`; the link and its canonical name."""
    node, sep, other = target.partition(":")
    names = {n.name for n in plan.nodes}
    if not sep or node not in names:
        raise _problem(f"'{target}' is not a link of lab '{plan.name}'",
                       "name a link as NODE:PEER (leaf1:spine1) or NODE:PORT (leaf1:Ethernet128)")
    for link in plan.links:
        for (n, i, p, _pi) in ((link.a_node, link.a_iface, link.b_node, link.b_iface),
                              (link.b_node, link.b_iface, link.a_node, link.a_iface)):
            if n == node and other in (p, i):
                if not fabric_link_of(plan, link):
                    raise _problem(f"'{target}' connects {n} to server {p}, not two switches",
                                   "pick a leaf-spine link, e.g. leaf1:spine1")
                return link, f"{n}:{i}"
    ports = sorted(i.name for i in plan.node(node).interfaces if i.role == "fabric")
    raise _problem(f"{node} has no link to '{other}'", f"fabric ports of {node}: {', '.join(ports) or 'none'}")


def _default_target(plan: Plan, kind: str) -> str:
    role = fault_kind(kind).role
    if role is not None:
        nodes = plan.by_role(role)
        if not nodes:
            raise _problem(f"lab '{plan.name}' has no {role} for a {kind} drill", "give --target")
        return nodes[0].name
    for link in plan.links:
        if fabric_link_of(plan, link):
            return f"{link.a_node}:{link.b_node}" if plan.node(link.a_node).role == "leaf" \
                else f"{link.b_node}:{link.a_node}"
    raise _problem(f"lab '{plan.name}' has no link between two switches", "give --target")


def _sessions_on(plan: Plan, node: str, iface: str) -> list[Session]:
    """The session `node` runs over `iface`, and its peer's session back."""
    me = plan.node(node)
    port = me.iface(iface)
    out = []
    for nb in me.neighbors:
        if nb.iface == iface:
            out.append(Session(node, nb.name, str(nb.ip)))
    peer = plan.node(port.peer_node)
    for nb in peer.neighbors:
        if nb.iface == port.peer_iface:
            out.append(Session(peer.name, node, str(nb.ip)))
    return out


def resolve(plan: Plan, step: Step) -> Fault:
    target = step.target or _default_target(plan, step.kind)
    role = fault_kind(step.kind).role
    if role is not None:
        names = [n.name for n in plan.by_role(role)]
        if target not in names:
            raise _problem(f"'{target}' is not a {role} of lab '{plan.name}'",
                           f"{role}s: {', '.join(names) or 'none'}")
        links = frozenset(link_key((lk.a_node, lk.a_iface), (lk.b_node, lk.b_iface)) for lk in plan.links
                          if target in (lk.a_node, lk.b_node))
        sessions = tuple(s for i in plan.node(target).interfaces if i.role == "fabric"
                         for s in _sessions_on(plan, target, i.name))
        if not fault_kind(step.kind).changes_topology:  # the node stays in the fabric (warm-reboot)
            return Fault(step.kind, target, sessions=sessions, topology_change=False)
        return Fault(step.kind, target, nodes=frozenset({target}), links=links, sessions=sessions)
    link, name = resolve_link(plan, target)
    end, iface = name.split(":")
    key = link_key((link.a_node, link.a_iface), (link.b_node, link.b_iface))
    sessions = tuple(_sessions_on(plan, end, iface))
    if not fault_kind(step.kind).changes_topology:
        return Fault(step.kind, name, link=link, sessions=sessions, topology_change=False)
    return Fault(step.kind, name, links=frozenset({key}), link=link, sessions=sessions)
