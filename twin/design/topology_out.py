"""`twin size -o`: the sized fabric as a twin topology file, optionally scaled down to fit one machine.

The topology is one plane of the design (planes are identical), as twin's `clos` or `rail` generator
takes it. `--scale-down S` keeps the shape, that is the tiers, the rails, the spines and the parallel
links per leaf-spine pair (so every leaf keeps its ECMP width), and divides the leaves (rail groups on
rails) and the servers by S, keeping at least two leaves on a Clos (one rail group on rails) so traffic
still crosses the spines. The switches are the hwsku twin has data for at the design's port speed.
"""

from __future__ import annotations

import re

import yaml
from pydantic import ValidationError

from twin.design.quantities import ceil_div, speed_text
from twin.design.sizing import SOURCE, Frozen, Mode, PlaneShape, SizeRequest, TwoTier
from twin.model import hwsku
from twin.model.errors import PlanError, Problem
from twin.model.topology import NAME_PATTERN, TopologyFile

NAME_MAX = 40


class ScaledFabric(Frozen):
    factor: int
    mode: Mode
    spines: int
    links_per_pair: int
    leaves: int
    pods: int | None
    rails: int                # NIC ports per server in the plane
    servers: int
    servers_per_group: int    # per leaf (clos) or per rail group (rails)
    radix: int


def scale_down(req: SizeRequest, shape: PlaneShape, plane: TwoTier, factor: int) -> ScaledFabric:
    """The plane with `factor` times fewer leaves and servers, the same spines, rails and links per pair."""
    if factor < 1:
        raise PlanError([Problem(SOURCE, "--scale-down", f"{factor} is not a factor", "give a whole number >= 1")])
    rails = shape.nics_in_plane
    wanted = max(1, ceil_div(plane.servers, factor))
    if req.mode == "rails":
        pods = max(1, ceil_div(plane.pods or 1, factor))
        per_group = min(plane.servers_per_leaf, ceil_div(wanted, pods))
        leaves, down = pods * rails, ceil_div(per_group, shape.breakout)
    else:
        pods = None
        leaves = max(min(2, plane.leaves), ceil_div(plane.leaves, factor))
        per_group = min(plane.servers_per_leaf, ceil_div(wanted, leaves))
        down = ceil_div(per_group * rails, shape.breakout)
    servers = per_group * (pods if pods is not None else leaves)
    radix = max(2 * plane.leaf_down_max, 2 * down, 2 * plane.leaf_up_ports, leaves * plane.links_per_pair)
    return ScaledFabric(factor=factor, mode=req.mode, spines=plane.spines, links_per_pair=plane.links_per_pair,
                        leaves=leaves, pods=pods, rails=rails, servers=servers, servers_per_group=per_group,
                        radix=radix + radix % 2)


def pick_sku(port_speed_gbps: int, radix: int) -> str:
    """The hwsku (with SONiC buffer defaults) at this port speed with the fewest ports that hold `radix`."""
    fits = []
    speeds = set()
    for name in hwsku.names():
        sku = hwsku.load(name)
        if sku.buffers is None:
            continue
        speeds.add(sku.speed // 1000)
        if sku.speed == port_speed_gbps * 1000 and sku.fabric_ports >= radix:
            fits.append((sku.fabric_ports, name))
    if not fits:
        known = ", ".join(speed_text(s) for s in sorted(speeds))
        raise PlanError([Problem(SOURCE, "-o", f"twin has no switch model (hwsku) with {radix} ports of "
                                 f"{speed_text(port_speed_gbps)}: it emulates {known} switches",
                                 "size with --port-speed and --leaf-ports/--spine-ports of one of those, or use "
                                 "--scale-down")])
    return min(fits)[1]


def topology_name(stem: str) -> str:
    """A topology name from a file name: letters, digits, '-' and '_', starting with a letter."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-_") or "sized"
    if not name[0].isalpha():
        name = f"f{name}"
    return name[:NAME_MAX]


def topology_doc(name: str, req: SizeRequest, shape: PlaneShape, plane: TwoTier, scaled: ScaledFabric) -> dict[
        str, object]:
    """The topology file's content (validated against twin's schema)."""
    problems = []
    if not plane.feasible:
        problems.append(Problem(SOURCE, "-o", "the fabric cannot be built in two tiers, so there is no topology "
                                "to write", "size a fabric that fits (see the alternatives) and write that"))
    elif plane.spines == 0:
        problems.append(Problem(SOURCE, "-o", "the design is a single leaf: no fabric to emulate",
                                "size more GPUs, or use --clos with fewer ports per leaf"))
    elif shape.breakout > 1:
        problems.append(Problem(SOURCE, "-o", f"the design breaks {speed_text(req.port_speed)} ports out into "
                                f"{shape.breakout} x {speed_text(shape.link_speed)} links, and twin's switch models "
                                "have no breakout ports",
                                "size with --nic-speed equal to --port-speed to write a topology"))
    if problems:
        raise PlanError(problems)
    sku = pick_sku(req.port_speed, scaled.radix)
    scale = f", scaled down {scaled.factor}x" if scaled.factor > 1 else ""
    shape_text = (f"{scaled.pods} rail group(s) x {scaled.rails} rails" if scaled.mode == "rails"
                  else f"{scaled.leaves} leaves")
    description = (f"twin size: {req.gpus:,} GPUs, {req.gpus_per_server} per server, {req.nics_per_server} x "
                   f"{speed_text(req.nic_speed)} NICs, {req.leaf_ports}-port leaves, {req.spine_ports}-port spines"
                   + (f", plane 1 of {req.planes}" if req.planes > 1 else "") + scale
                   + f": {shape_text}, {scaled.spines} spines, {scaled.links_per_pair} link(s) per pair, "
                     f"{scaled.servers} servers")
    doc: dict[str, object] = {"name": name, "kind": "clos" if scaled.mode == "clos" else "rail",
                              "description": description}
    if scaled.mode == "clos":
        doc["clos"] = {"spines": scaled.spines, "leaves": scaled.leaves, "servers_per_leaf": scaled.servers_per_group,
                       "nics_per_server": scaled.rails, "links_per_spine": scaled.links_per_pair}
    else:
        doc["rail"] = {"pods": scaled.pods, "rails": scaled.rails, "spines": scaled.spines,
                       "servers_per_pod": scaled.servers_per_group, "links_per_spine": scaled.links_per_pair}
    doc["fabric"] = {"hwsku": sku, "radix": scaled.radix}
    try:
        TopologyFile.model_validate(doc)
    except ValidationError as exc:
        raise PlanError([Problem(SOURCE, "-o", f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']} (the design "
                                 f"needs {err.get('input')!r})", "use --scale-down to write a smaller lab of the same "
                                 "shape") for err in exc.errors()]) from None
    return doc


def topology_yaml(name: str, req: SizeRequest, shape: PlaneShape, plane: TwoTier, scaled: ScaledFabric,
                  command: str) -> str:
    if not re.match(NAME_PATTERN, name):
        raise PlanError([Problem(SOURCE, "-o", f"'{name}' is not a topology name",
                                 "name the file with a letter first")])
    doc = topology_doc(name, req, shape, plane, scaled)
    header = (f"# Written by {command}\n"
              "# One plane of the sized fabric as a twin topology: `twin plan` and `twin up` take it.\n")
    return header + yaml.safe_dump(doc, sort_keys=False, width=1000)
