"""Typed models: the intent file a user writes and the normalized topology every stage reads."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from twin.model import hwsku as skus
from twin.model.errors import Problem

Role = Literal["spine", "leaf", "server", "router", "host"]
SWITCH_ROLES: frozenset[str] = frozenset({"spine", "leaf", "router"})
HOST_ROLES: frozenset[str] = frozenset({"server", "host"})

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]*$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# What `neighbor X bfd` runs on SONiC: bfdd's defaults, since no SONiC table with a YANG model
# carries BFD timers for a BGP peer (BFD_PROFILE has no model; config reload and GCU refuse it).
SONIC_BFD_INTERVAL_MS = 300
SONIC_BFD_MULTIPLIER = 3


class BfdSettings(Strict):
    """BFD on every fabric session (`bfd: "true"` on each BGP_NEIGHBOR), at SONiC's timers."""

    enabled: bool = True

    @model_validator(mode="before")
    @classmethod
    def _no_timers(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for field in ("interval_ms", "multiplier"):
                if field in data:
                    raise ValueError(
                        f"'{field}' cannot be set: SONiC runs BFD for BGP peers at its own timers "
                        f"({SONIC_BFD_INTERVAL_MS} ms x {SONIC_BFD_MULTIPLIER}; no SONiC table with a YANG model "
                        f"carries others), so a config that asked for other timers would not work on a switch"
                        f" | fix: remove '{field}' and keep 'enabled'")
        return data


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
    mgmt_pool: IPv4Network = Field(IPv4Network("172.20.20.0/24"), description="management addresses (eth0) "
                                   "written to MGMT_INTERFACE; a runtime may give a lab its own subnet")
    port_speed: int | None = Field(None, ge=1000, le=800000, description="default: the hwsku's port speed")
    radix: int = Field(64, ge=2, le=512, description="fabric ports per switch (at most the hwsku's)")
    hwsku: str = Field("Arista-7060X6-64PE-B-O128", description="SONiC hwsku: its port_config.ini names the "
                       "ports, lanes and aliases (twin/model/hwsku/data)")
    max_paths: int | None = Field(None, ge=1, le=256, description="default: the spine count")
    bfd: BfdSettings = BfdSettings()
    bgp: BgpTimers = BgpTimers()
    egress_queues: bool = Field(True, description="program every switch port's egress queues (an htb tree per "
                                "port, from its QoS config); false: the QoS tables are kept in CONFIG_DB and not "
                                "programmed, each port sends from its one device queue (counted as queue 0). The "
                                "host kernel's cost of a tree grows with the trees already on the host: 16,384 "
                                "ports' trees take tens of minutes (docs/performance.md)")

    @field_validator("hwsku")
    @classmethod
    def _known_sku(cls, value: str) -> str:
        if value not in skus.names():
            raise ValueError(f"twin has no port data for hwsku '{value}' | fix: use one of "
                             f"{', '.join(skus.names())} (or add its port_config.ini rows as "
                             "twin/model/hwsku/data/<hwsku>.json)")
        return value

    @property
    def sku(self) -> skus.Sku:
        return skus.load(self.hwsku)

    @property
    def speed(self) -> int:
        """Every switch port's speed: the one set, else the hwsku's."""
        return self.port_speed or self.sku.speed


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
    config_db: Path | None = Field(None, description="a switch's own SONiC config_db.json, run instead of the "
                                   "one twin renders from its plan (relative to the topology file)")
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


class PortFacts(Strict):
    """A PORT row of a switch's own config_db.json, as far as the plan needs it."""

    mtu: int | None = None
    speed: int | None = None


class SessionFacts(Strict):
    """A BGP_NEIGHBOR of a switch's own config_db.json (IPv4 peers that are not shut down)."""

    ip: IPv4Address
    asn: int
    name: str | None = None
    local_addr: IPv4Address | None = None
    bfd: bool = False


class ConfigFacts(Strict):
    """What twin's plan takes from a config_db.json a switch brings (twin/stages/load/bound_config.py):
    the addresses, sessions and prefixes the switch really has, in place of twin's own allocation."""

    dialect: Literal["bgpcfgd", "frrcfgd"]
    asn: int | None = None
    loopback: IPv4Address | None = None      # Loopback0's IPv4 address
    ports: dict[str, PortFacts] = {}         # the PORT table: the ports this switch has
    addresses: dict[str, list[IPv4Interface]] = {}  # IPv4 addresses per interface (port, VlanN, LoopbackN, ...)
    vlan_members: dict[str, str] = {}        # port -> the VLAN it is a member of
    sessions: list[SessionFacts] = []
    networks: list[IPv4Network] = []         # what BGP advertises, as the dialect's daemon renders it
    max_paths: int | None = None             # eBGP multipath width, when the config sets one


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
    config_db: Path | None = None        # the switch's own config_db.json (a containerlab sonic-vs bind)
    config: ConfigFacts | None = None    # read from config_db by the loader, once it has been checked
    exec: list[str] = []

    @property
    def is_switch(self) -> bool:
        return self.role in SWITCH_ROLES

    @property
    def user_frr(self) -> bool:
        """True for an imported router that runs the user's own frr.conf rather than ours."""
        return self.frr_conf is not None

    @property
    def user_config(self) -> bool:
        """True for a switch that runs its own config_db.json rather than the one twin renders."""
        return self.config_db is not None

    @property
    def planned(self) -> bool:
        """True for a switch whose config twin renders from its plan (addresses from twin's pools)."""
        return self.is_switch and not self.user_frr and not self.user_config


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
