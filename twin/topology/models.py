"""Typed models: the intent file a user writes and the normalized topology every stage reads."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Network
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from twin.errors import Problem

Role = Literal["spine", "leaf", "server", "router", "host"]
SWITCH_ROLES: frozenset[str] = frozenset({"spine", "leaf", "router"})
HOST_ROLES: frozenset[str] = frozenset({"server", "host"})

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]*$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BfdSettings(Strict):
    enabled: bool = True
    interval_ms: int = Field(100, ge=10, le=60000)
    multiplier: int = Field(3, ge=2, le=255)


class BgpTimers(Strict):
    keepalive: int = Field(3, ge=1, le=3600)
    holdtime: int = Field(9, ge=3, le=10800)
    connect_retry: int = Field(2, ge=1, le=65535, description="seconds between connection attempts")


class FabricSettings(Strict):
    """Addressing, numbering and protocol settings shared by every generator."""

    spine_asn: int = 65100
    leaf_asn_base: int = 65101
    router_asn_base: int = 65300
    loopback_pool: IPv4Network = IPv4Network("10.1.0.0/16")
    fabric_pool: IPv4Network = IPv4Network("10.0.0.0/16")
    server_pool: IPv4Network = IPv4Network("10.2.0.0/16")
    mtu: int = Field(9100, ge=1280, le=9216)
    port_speed: int = Field(400000, ge=1000, le=800000)
    radix: int = Field(64, ge=2, le=512, description="ports per switch")
    hwsku: str = "Arista-7060DX5-64S"
    max_paths: int | None = Field(None, ge=1, le=256, description="default: the spine count")
    bfd: BfdSettings = BfdSettings()
    bgp: BgpTimers = BgpTimers()


class ClosSpec(Strict):
    spines: int = Field(ge=1, le=256)
    leaves: int = Field(ge=1, le=1024)
    servers_per_leaf: int = Field(0, ge=0, le=256)
    nics_per_server: int = Field(1, ge=1, le=16)
    links_per_spine: int = Field(1, ge=1, le=16, description="parallel links per leaf-spine pair")


class RailSpec(Strict):
    pods: int = Field(ge=1, le=64)
    rails: int = Field(ge=1, le=16, description="rail leaves per pod = NICs per server")
    spines: int = Field(ge=1, le=256)
    servers_per_pod: int = Field(0, ge=0, le=256)
    links_per_spine: int = Field(1, ge=1, le=16)


class NodeSpec(Strict):
    role: Role
    asn: int | None = None
    index: int | None = Field(None, ge=1, description="number used for addresses and ASNs")
    image: str | None = None
    frr_conf: Path | None = None
    daemons: Path | None = None
    exec: list[str] = []


class LinkSpec(Strict):
    endpoints: tuple[str, str]


class TopologyFile(Strict):
    """The schema of a twin topology file (topologies/*.yaml)."""

    name: str = Field(pattern=NAME_PATTERN, max_length=40)
    kind: Literal["clos", "rail", "explicit"]
    description: str = ""
    clos: ClosSpec | None = None
    rail: RailSpec | None = None
    nodes: dict[str, NodeSpec] = {}
    links: list[LinkSpec] = []
    fabric: FabricSettings = FabricSettings()


class Node(Strict):
    name: str
    role: Role
    index: int
    asn: int | None = None
    rail: int | None = None
    pod: int | None = None
    image: str | None = None
    frr_conf: Path | None = None
    daemons: Path | None = None
    exec: list[str] = []

    @property
    def is_switch(self) -> bool:
        return self.role in SWITCH_ROLES

    @property
    def user_frr(self) -> bool:
        """True for an imported router that runs the user's own frr.conf rather than ours."""
        return self.frr_conf is not None


class Endpoint(Strict):
    node: str
    iface: str | None = None

    def __str__(self) -> str:
        return f"{self.node}:{self.iface}" if self.iface else self.node


class Link(Strict):
    a: Endpoint
    b: Endpoint
    line: int | None = None


class Topology(Strict):
    """The normalized fabric: every node and link spelled out, whatever the input kind was."""

    name: str
    kind: str
    source: str
    fabric: FabricSettings
    nodes: list[Node]
    links: list[Link]
    lines: dict[str, int] = {}  # dotted field path in the source file -> line

    def locate(self, problems: list[Problem]) -> list[Problem]:
        """Give problems found after loading the line of their field in the source file."""
        out = []
        for p in problems:
            line = p.line
            parts = p.field.split(".")
            while line is None and parts:
                key = ".".join(parts)
                line = self.lines.get(key, self.lines.get(f"topology.{key}"))
                parts.pop()
            out.append(replace(p, line=line))
        return out

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def by_role(self, role: str) -> list[Node]:
        return [n for n in self.nodes if n.role == role]
