"""`twin size`'s whole answer: one plane's two-tier fabric (twin.design.sizing) over every plane, with the
nearest buildable alternatives when it cannot be built, the same fabric with more spines (a smaller failure
domain) beside the fewest when it can, and the check of a claimed design when one is given."""

from __future__ import annotations

from twin.design.alternatives import alternatives, more_spines
from twin.design.claims import check_claim
from twin.design.quantities import ratio_text, speed_text
from twin.design.sizing import (
    MaxTwoTier,
    SizeRequest,
    SizeResult,
    arithmetic,
    bisection_tbps,
    cables,
    design_plane,
    num,
    request_problems,
    servers_for,
)
from twin.model.errors import PlanError


def size(req: SizeRequest) -> SizeResult:
    """Size the fabric; PlanError (exit 2) when the request itself is inconsistent."""
    problems = request_problems(req)
    if problems:
        raise PlanError(problems)
    servers = servers_for(req)
    shape, plane = design_plane(req)
    k = req.planes
    notes = []
    if req.gpus % req.gpus_per_server:
        notes.append(f"{num(req.gpus)} GPUs do not fill {num(servers)} servers of {req.gpus_per_server}: the last "
                     f"server has {req.gpus % req.gpus_per_server} GPUs")
    if plane.feasible and plane.servers_per_leaf and servers % plane.servers_per_leaf:
        notes.append(f"servers do not fill every leaf evenly: {num(servers)} servers over "
                     f"{num(plane.pods if plane.pods else plane.leaves)} "
                     f"{'rail groups' if plane.pods else 'leaves'} of up to {plane.servers_per_leaf}")
    max_spines = plane.leaf_up_max
    links = cables(plane, shape, req, k)
    result = SizeResult(
        feasible=plane.feasible,
        leaves=plane.leaves * k,
        spines=plane.spines * k if plane.feasible else None,
        servers=servers,
        links_per_pair=plane.links_per_pair if plane.feasible else None,
        servers_per_leaf=plane.servers_per_leaf,
        oversubscription=ratio_text(plane.oversubscription),
        bisection_tbps=bisection_tbps(plane, shape, req.port_speed) * k if plane.feasible else None,
        reason=plane.reason + (f" (two tiers of these switches: at most {num(plane.max_servers * req.gpus_per_server)} "
                               f"GPUs, {num(req.gpus)} asked for)" if not plane.feasible and plane.max_servers else ""),
        gpus=req.gpus, gpus_per_server=req.gpus_per_server, nics_per_server=req.nics_per_server,
        nic_speed=speed_text(req.nic_speed), port_speed=speed_text(req.port_speed),
        leaf_ports=req.leaf_ports, spine_ports=req.spine_ports, mode=req.mode, planes=k, pods=plane.pods,
        rails=req.nics_per_server, link_speed=speed_text(shape.link_speed), breakout=shape.breakout,
        leaf_ports_down=plane.leaf_down_ports, leaf_ports_up=plane.leaf_up_ports,
        spine_ports_used=plane.spine_ports_used if plane.feasible else None,
        ecmp_width=plane.spines * plane.links_per_pair if plane.feasible else None,
        cables=links if plane.feasible else [],
        optics=sum(c.transceivers for c in links) if plane.feasible else 0,
        max_two_tier=MaxTwoTier(servers=plane.max_servers,
                                gpus=plane.max_servers * req.gpus_per_server,
                                leaves=plane.max_leaves * k, spines=max_spines * k),
        arithmetic=arithmetic(req, shape, plane),
        notes=notes,
    )
    updates: dict[str, object] = {}
    if not plane.feasible:
        updates["alternatives"] = alternatives(req, servers)
    elif (spread := more_spines(req, plane)) is not None:
        updates["alternatives"] = [spread]
    if req.claim_leaves is not None or req.claim_spines is not None:
        updates["claim"] = check_claim(req, servers, shape)
    return result.model_copy(update=updates) if updates else result
