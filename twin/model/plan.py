"""The Plan: every address, ASN, port and session of a fabric, decided before anything runs."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from twin.model.topology import FabricSettings, Role

NodeKind = Literal["switch", "router", "host"]


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _OmitUnset(Frozen):
    """Leaves the fields in `omit_none` out of a dump while they are None: fields added for switches
    that bring their own config, so the plan of every other fabric (goldens, saved labs) reads as before."""

    omit_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for field in self.omit_none:
                if data.get(field, 0) is None:
                    del data[field]
        return data


class InterfacePlan(Frozen):
    name: str                     # SONiC port name on switches (Ethernet0), NIC name on hosts (eth1)
    kernel: str                   # the Linux interface name inside the node's namespace
    peer_node: str
    peer_iface: str
    address: IPv4Interface | None = None
    peer_address: IPv4Interface | None = None
    mtu: int = 9100
    speed: int | None = None
    role: Literal["fabric", "server", "other"] = "other"


class NeighborPlan(_OmitUnset):
    omit_none = ("bfd",)
    ip: IPv4Address
    asn: int
    name: str
    local_addr: IPv4Address
    iface: str
    bfd: bool | None = None      # None: as fabric.bfd says; a switch's own config says it per neighbor


class NodePlan(_OmitUnset):
    omit_none = ("config_db", "max_paths")
    name: str
    role: Role
    kind: NodeKind
    index: int
    asn: int | None = None
    loopback: IPv4Address | None = None
    mgmt: IPv4Interface | None = None   # eth0's address in fabric.mgmt_pool (MGMT_INTERFACE)
    pod: int | None = None
    rail: int | None = None
    interfaces: list[InterfacePlan] = []
    neighbors: list[NeighborPlan] = []
    networks: list[IPv4Network] = []
    image: str | None = None
    frr_conf: Path | None = None
    daemons: Path | None = None
    # A switch's own config_db.json (a containerlab sonic-vs node's bind): it runs that instead of
    # twin's rendering, and asn, loopback, addresses, neighbors and networks above come from it.
    config_db: Path | None = None
    max_paths: int | None = None        # the switch's own eBGP multipath width; None: Plan.max_paths
    exec: list[str] = []

    def iface(self, name: str) -> InterfacePlan:
        for i in self.interfaces:
            if i.name == name:
                return i
        raise KeyError(f"{self.name}:{name}")


class LinkPlan(Frozen):
    a_node: str
    a_iface: str
    b_node: str
    b_iface: str
    subnet: IPv4Network | None = None


class Plan(Frozen):
    name: str
    kind: str
    source: str
    fabric: FabricSettings
    max_paths: int
    nodes: list[NodePlan]
    links: list[LinkPlan]

    def node(self, name: str) -> NodePlan:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def by_role(self, *roles: str) -> list[NodePlan]:
        return [n for n in self.nodes if n.role in roles]

    @property
    def switches(self) -> list[NodePlan]:
        return [n for n in self.nodes if n.kind in ("switch", "router")]

    @property
    def hosts(self) -> list[NodePlan]:
        return [n for n in self.nodes if n.kind == "host"]
