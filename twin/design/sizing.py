"""`twin size`: from a GPU count to a buildable two-tier fabric, with the arithmetic shown.

The rules (pure arithmetic, no I/O):

- Servers = GPUs / GPUs per server (rounded up); each server has `nics_per_server` NIC ports (rails).
- Planes: the fabric is `planes` identical, independent two-tier fabrics. With planes dividing the rails,
  each plane holds rails/planes whole rails of every server; with planes a multiple of the rails, every
  NIC is split into planes/rails ports of nic_speed*rails/planes, one per plane (a multi-plane NIC).
- A NIC port of speed s lands on a leaf port of speed p; p/s NIC ports share one leaf port (breakout).
- A P-port leaf at oversubscription o (down:up) keeps ceil(P/(1+o)) ports for uplinks and the rest for
  NICs (o = 1:1, non-blocking: half down, half up).
- rails: NIC i of every server lands on rail leaf i of its rail group; a rail group (pod) is one leaf
  per rail, and each rail leaf takes one NIC of as many servers as it has NIC-facing ports.
  clos: all NICs of a server land on one leaf.
- A leaf's uplinks U carry its NIC bandwidth / o; they are spread evenly over S spines, S the fewest
  that divides U and leaves the spines enough ports: leaves x (U/S) <= Q (a Q-port spine). U/S is
  the number of parallel links per leaf-spine pair. Two tiers need every leaf on every spine, so they
  hold at most Q leaves: the largest two-tier fabric is Q leaves x the NIC ports of one leaf.
- Bisection: half the NIC bandwidth, or half the leaves' uplink bandwidth when that is less.
- Cables and optics, by assumption (documented in the README): every leaf-spine link is optical (two
  transceivers and a fiber: spines sit rows away); a server-leaf link is a copper DAC in a Clos (the
  leaf sits in the servers' rack, <= 3 m) and optical on rails (a rail leaf serves servers of many
  racks): a transceiver per NIC port and one per switch port (see `cables` for breakouts and splits).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from twin.design.quantities import ceil_div, divisors, ratio_text, speed_text, tbps
from twin.model.errors import Problem

Mode = Literal["rails", "clos"]
SOURCE = "twin size"


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SizeRequest(Frozen):
    """What an engineer starts from. Speeds in Gb/s; oversubscription is down:up (1.0 = 1:1)."""

    gpus: int = Field(ge=1, le=10_000_000)
    gpus_per_server: int = Field(ge=1, le=1024)
    nics_per_server: int = Field(ge=1, le=64)
    nic_speed: int = Field(ge=1, le=100_000)
    leaf_ports: int = Field(ge=2, le=65_536)
    spine_ports: int = Field(ge=2, le=65_536)
    port_speed: int = Field(ge=1, le=100_000)
    oversubscription: float = Field(1.0, ge=1.0, le=64.0)
    mode: Mode = "rails"
    planes: int = Field(1, ge=1, le=4096)
    claim_leaves: int | None = Field(None, ge=1, description="a leaf count someone claims (checked, not used)")
    claim_spines: int | None = Field(None, ge=1, description="a spine count someone claims (checked, not used)")


class PlaneShape(Frozen):
    """How one plane sees every server: NIC ports per server, their speed, and how they share leaf ports."""

    planes: int
    nics_in_plane: int     # NIC ports of one server in one plane
    split: int             # ports each NIC is split into (1 unless planes exceed rails)
    link_speed: int        # Gb/s of one server-leaf link
    breakout: int          # server-leaf links per leaf port (port speed / link speed)


class TwoTier(Frozen):
    """One plane's two-tier fabric; when infeasible, `leaves` is what it would need and spines are 0."""

    feasible: bool
    reason: str = ""
    servers: int
    leaves: int
    spines: int
    links_per_pair: int
    pods: int | None              # rail groups (rails mode)
    servers_per_leaf: int         # clos: servers on a leaf; rails: servers with a NIC on each rail leaf
    leaf_down_ports: int          # ports a (full) leaf uses for NICs
    leaf_up_ports: int            # uplinks per leaf
    leaf_down_max: int            # NIC-facing ports a leaf has at the requested oversubscription
    leaf_up_max: int
    spine_ports_used: int
    nic_ports: int                # server-leaf links of the plane
    oversubscription: float
    max_servers: int              # the largest fabric these switches allow in two tiers (this plane shape)
    max_leaves: int


class Cable(Frozen):
    between: Literal["server-leaf", "leaf-spine"]
    links: int
    speed: str
    medium: str
    cables: int
    transceivers: int


class MaxTwoTier(Frozen):
    servers: int
    gpus: int
    leaves: int
    spines: int


class Alternative(Frozen):
    kind: Literal["planes", "three-tier", "radix", "more-spines"]
    summary: str
    switches: int
    details: dict[str, int | float | str] = {}


class ClaimCheck(Frozen):
    leaves: int | None
    spines: int | None
    ok: bool
    problems: list[str]


class SizeResult(Frozen):
    """DESIGN §4's `twin size --json` fields first, then the details."""

    feasible: bool
    leaves: int
    spines: int | None
    servers: int
    links_per_pair: int | None
    servers_per_leaf: int
    oversubscription: str
    bisection_tbps: float | None
    reason: str
    gpus: int
    gpus_per_server: int
    nics_per_server: int
    nic_speed: str
    port_speed: str
    leaf_ports: int
    spine_ports: int
    mode: Mode
    planes: int
    pods: int | None
    rails: int
    link_speed: str
    breakout: int
    leaf_ports_down: int
    leaf_ports_up: int
    spine_ports_used: int | None
    ecmp_width: int | None
    cables: list[Cable]
    optics: int
    max_two_tier: MaxTwoTier
    arithmetic: list[str]
    notes: list[str]
    alternatives: list[Alternative] = []
    claim: ClaimCheck | None = None


def num(value: int | float) -> str:
    """A count with thousands separators: 262144 -> 262,144."""
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def servers_for(req: SizeRequest) -> int:
    return ceil_div(req.gpus, req.gpus_per_server)


def request_problems(req: SizeRequest) -> list[Problem]:
    """What makes the request impossible to size at all (bad input, exit 2)."""
    problem = shape_problem(req, req.planes)
    return [problem] if problem is not None else []


def shape_problem(req: SizeRequest, planes: int) -> Problem | None:
    """Why `planes` planes do not fit this request's NICs and ports; None when they do."""
    r = req.nics_per_server
    if r % planes == 0:
        link = req.nic_speed
    elif planes % r == 0:
        split = planes // r
        if req.nic_speed % split:
            return Problem(SOURCE, "--planes", f"{planes} planes split each {speed_text(req.nic_speed)} NIC into "
                           f"{split} ports, which is not a whole number of Gb/s each",
                           "use a plane count that divides the NIC speed evenly")
        link = req.nic_speed // split
    else:
        return Problem(SOURCE, "--planes", f"{planes} planes neither divide the {r} rails (whole rails per plane) nor "
                       f"are a multiple of them (each NIC split over the planes)",
                       f"use a divisor or a multiple of {r}, e.g. {r}")
    if req.port_speed % link:
        return Problem(SOURCE, "--port-speed", f"a {speed_text(link)} NIC link cannot use a "
                       f"{speed_text(req.port_speed)} switch port: the port speed must be a multiple of the "
                       "link speed (one port broken out into several links)",
                       f"use --port-speed {speed_text(link)} or a multiple of it")
    return None


def plane_shape(req: SizeRequest, planes: int) -> PlaneShape:
    """The shape of one of `planes` planes (shape_problem(req, planes) is None)."""
    r = req.nics_per_server
    if r % planes == 0:
        return PlaneShape(planes=planes, nics_in_plane=r // planes, split=1, link_speed=req.nic_speed,
                          breakout=req.port_speed // req.nic_speed)
    split = planes // r
    link = req.nic_speed // split
    return PlaneShape(planes=planes, nics_in_plane=1, split=split, link_speed=link, breakout=req.port_speed // link)


def leaf_split(ports: int, oversubscription: float) -> tuple[int, int]:
    """(NIC-facing ports, uplinks) of a leaf: uplinks ceil(P/(1+o)), so the ratio is at most o."""
    up = math.ceil(ports / (1 + oversubscription) - 1e-9)
    return ports - up, up


def two_tier(servers: int, shape: PlaneShape, leaf_ports: int, spine_ports: int, port_speed: int,
             oversubscription: float, mode: Mode) -> TwoTier:
    """One plane of `servers` servers as a two-tier fabric of `leaf_ports`-port leaves and `spine_ports`-port spines."""
    down_max, up_max = leaf_split(leaf_ports, oversubscription)
    attach = down_max * shape.breakout             # NIC links one leaf takes
    nics = shape.nics_in_plane
    nic_ports = servers * nics
    base = {"servers": servers, "leaf_down_max": down_max, "leaf_up_max": up_max, "nic_ports": nic_ports,
            "max_leaves": spine_ports}
    if mode == "clos":
        per_leaf = attach // nics
        if per_leaf == 0:
            return TwoTier(feasible=False, reason=f"a server's {nics} NIC ports do not fit on one leaf's {down_max} "
                           "NIC-facing ports; use rails (--rails) or leaves with more ports", leaves=0, spines=0,
                           links_per_pair=0, pods=None, servers_per_leaf=0, leaf_down_ports=0, leaf_up_ports=0,
                           spine_ports_used=0, oversubscription=oversubscription, max_servers=0, **base)
        leaves = ceil_div(servers, per_leaf)
        used = ceil_div(servers, leaves)
        attached, pods, max_servers = used * nics, None, spine_ports * per_leaf
    else:
        pods = ceil_div(servers, attach)
        used = ceil_div(servers, pods)
        leaves, attached = pods * nics, used
        max_servers = (spine_ports // nics) * attach
    down = ceil_div(attached, shape.breakout)
    up = math.ceil(attached * shape.link_speed / (oversubscription * port_speed) - 1e-9) if leaves > 1 else 0
    common = {**base, "leaves": leaves, "pods": pods, "servers_per_leaf": used, "leaf_down_ports": down,
              "leaf_up_ports": up, "max_servers": max_servers}
    achieved = attached * shape.link_speed / (up * port_speed) if up else 1.0
    if leaves == 1:
        return TwoTier(feasible=True, spines=0, links_per_pair=0, spine_ports_used=0, oversubscription=1.0, **common)
    for spines in divisors(up):
        per_pair = up // spines
        if leaves * per_pair <= spine_ports:
            return TwoTier(feasible=True, spines=spines, links_per_pair=per_pair, spine_ports_used=leaves * per_pair,
                           oversubscription=achieved, **common)
    reason = (f"needs {num(leaves)} leaves, but a {spine_ports}-port spine reaches at most {spine_ports} leaves (every "
              f"leaf must reach every spine in two tiers): these switches hold at most {num(max_servers)} servers "
              f"({num(spine_ports)} leaves x {num(attach)} NIC links each"
              + (f", in {num(spine_ports // nics)} rail groups of {nics} rails" if mode == "rails" else "")
              + f"), and {num(servers)} servers is {servers / max_servers:.3g}x that")
    return TwoTier(feasible=False, reason=reason, spines=0, links_per_pair=0, spine_ports_used=0,
                   oversubscription=achieved, **common)


def design_plane(req: SizeRequest) -> tuple[PlaneShape, TwoTier]:
    """One plane of the request (request_problems(req) is empty): its shape and its two-tier fabric."""
    shape = plane_shape(req, req.planes)
    return shape, two_tier(servers_for(req), shape, req.leaf_ports, req.spine_ports, req.port_speed,
                           req.oversubscription, req.mode)


def bisection_tbps(plane: TwoTier, shape: PlaneShape, port_speed: int) -> float:
    """Half the NIC bandwidth, or half the leaves' uplink bandwidth when that is less (one plane)."""
    nic = plane.nic_ports * shape.link_speed / 2
    if plane.leaves <= 1:
        return tbps(nic)
    return tbps(min(nic, plane.leaves * plane.leaf_up_ports * port_speed / 2))


def cables(plane: TwoTier, shape: PlaneShape, req: SizeRequest, planes: int) -> list[Cable]:
    """Server-leaf and leaf-spine links, cables and transceivers over every plane (see the module's assumptions).

    A NIC port is one transceiver however it is split over planes; a switch port is one transceiver however it
    is broken out. A breakout cable joins one switch port to its NIC links; links of a NIC split over planes go
    to different switches, so each is a cable (fiber) of its own."""
    nic_links = plane.nic_ports * planes
    nic_ports = plane.servers * req.nics_per_server
    switch_ports = ceil_div(plane.nic_ports, shape.breakout) * planes
    count = switch_ports if shape.split == 1 else nic_links
    link, port = speed_text(shape.link_speed), speed_text(req.port_speed)
    breakout = f", 1x{port} to {shape.breakout}x{link} breakout" if shape.breakout > 1 else ""
    split = f", each {speed_text(req.nic_speed)} NIC split into {shape.split} x {link}" if shape.split > 1 else ""
    if req.mode == "clos":
        server = Cable(between="server-leaf", links=nic_links, speed=link, medium=f"copper DAC{breakout}{split}",
                       cables=count, transceivers=0)
    else:
        server = Cable(between="server-leaf", links=nic_links, speed=link, medium=f"optical{breakout}{split}",
                       cables=count, transceivers=nic_ports + switch_ports)
    fabric_links = plane.leaves * plane.leaf_up_ports * planes
    fabric = Cable(between="leaf-spine", links=fabric_links, speed=port, medium="optical", cables=fabric_links,
                   transceivers=2 * fabric_links)
    return [server] + ([fabric] if fabric_links else [])


def arithmetic(req: SizeRequest, shape: PlaneShape, plane: TwoTier) -> list[str]:
    """The steps, in words and numbers, that lead to the result."""
    servers, k = plane.servers, req.planes
    lines = [f"servers: {num(req.gpus)} GPUs / {req.gpus_per_server} per server = {num(servers)} servers, "
             f"{req.nics_per_server} NICs of {speed_text(req.nic_speed)} each = "
             f"{num(servers * req.nics_per_server)} NIC ports ({req.nics_per_server} rails)"]
    if k > 1:
        how = (f"{shape.nics_in_plane} rail(s) of every server per plane" if shape.split == 1 else
               f"each NIC split into {shape.split} x {speed_text(shape.link_speed)}, one port per plane")
        lines.append(f"planes: {k} independent two-tier planes, {how}: {num(plane.nic_ports)} NIC links per plane")
    lines.append(f"leaf: {req.leaf_ports} ports at {ratio_text(req.oversubscription)} = {plane.leaf_down_max} down "
                 f"to NICs + {plane.leaf_up_max} up"
                 + (f"; each {speed_text(req.port_speed)} port takes {shape.breakout} x "
                    f"{speed_text(shape.link_speed)} NIC links" if shape.breakout > 1 else ""))
    attach = plane.leaf_down_max * shape.breakout
    if req.mode == "rails":
        lines.append(f"rails: a rail leaf takes one NIC of {num(attach)} servers: {num(servers)} / {num(attach)} = "
                     f"{num(plane.pods or 0)} rail group(s) x {shape.nics_in_plane} rails = {num(plane.leaves)} leaves"
                     + (" per plane" if k > 1 else ""))
    elif attach >= shape.nics_in_plane:
        per_leaf = attach // shape.nics_in_plane
        lines.append(f"clos: a leaf takes {num(per_leaf)} servers of {shape.nics_in_plane} NICs: {num(servers)} / "
                     f"{num(per_leaf)} = {num(plane.leaves)} leaves" + (" per plane" if k > 1 else ""))
    if not plane.feasible:
        if plane.max_servers:
            lines.append(f"largest in two tiers: {req.spine_ports}-port spines reach {req.spine_ports} leaves = "
                         f"{num(plane.max_servers)} servers = {num(plane.max_servers * req.gpus_per_server)} GPUs; "
                         f"{num(plane.leaves)} leaves needed ({plane.leaves / req.spine_ports:.3g}x): cannot be built "
                         "in two tiers")
        else:
            lines.append(f"cannot be built: {plane.reason}")
        return lines
    if plane.spines == 0:
        lines.append("spines: none; one leaf takes every NIC")
    else:
        lines.append(f"uplinks: {plane.servers_per_leaf * (shape.nics_in_plane if req.mode == 'clos' else 1)} NIC "
                     f"links x {speed_text(shape.link_speed)} / {ratio_text(req.oversubscription)} = "
                     f"{plane.leaf_up_ports} uplinks of {speed_text(req.port_speed)} per leaf")
        lines.append(f"spines: {num(plane.leaves)} leaves x {plane.leaf_up_ports} uplinks = "
                     f"{num(plane.leaves * plane.leaf_up_ports)} uplinks; the fewest spines S dividing "
                     f"{plane.leaf_up_ports} with {num(plane.leaves)} x {plane.leaf_up_ports}/S <= {req.spine_ports} "
                     f"spine ports: S = {plane.spines}, {plane.links_per_pair} link(s) per leaf-spine pair, "
                     f"{plane.spine_ports_used} of {req.spine_ports} ports used per spine")
    lines.append(f"largest in two tiers: {req.spine_ports}-port spines reach {req.spine_ports} leaves = "
                 f"{num(plane.max_servers)} servers = {num(plane.max_servers * req.gpus_per_server)} GPUs")
    lines.append(f"bisection: {num(bisection_tbps(plane, shape, req.port_speed) * k)} Tb/s"
                 f" (oversubscription achieved {ratio_text(plane.oversubscription)})")
    return lines
