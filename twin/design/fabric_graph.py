"""The fabric as a drawing sees it: nodes with role, pod and rail; links end to end. Built from a Plan."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from twin.model.plan import Plan

SWITCHES = frozenset({"spine", "leaf", "router"})
HOSTS = frozenset({"server", "host"})


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GraphNode(Frozen):
    name: str
    role: str
    index: int
    pod: int | None = None
    rail: int | None = None


class GraphLink(Frozen):
    a: str
    a_iface: str
    b: str
    b_iface: str

    @property
    def key(self) -> str:
        """One name per link, whichever way round it is written: 'leaf1:Ethernet128--spine1:Ethernet0'."""
        return link_key(self.a, self.a_iface, self.b, self.b_iface)


def link_key(a: str, a_iface: str, b: str, b_iface: str) -> str:
    ends = sorted([f"{a}:{a_iface}", f"{b}:{b_iface}"])
    return f"{ends[0]}--{ends[1]}"


class FabricGraph(Frozen):
    name: str
    kind: str
    nodes: list[GraphNode]
    links: list[GraphLink]

    def node(self, name: str) -> GraphNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def switches(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.role in SWITCHES]

    @property
    def hosts(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.role in HOSTS]


def from_plan(plan: Plan) -> FabricGraph:
    return FabricGraph(
        name=plan.name, kind=plan.kind,
        nodes=[GraphNode(name=n.name, role=n.role, index=n.index, pod=n.pod, rail=n.rail) for n in plan.nodes],
        links=[GraphLink(a=lk.a_node, a_iface=lk.a_iface, b=lk.b_node, b_iface=lk.b_iface) for lk in plan.links])
