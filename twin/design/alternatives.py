"""The nearest buildable fabrics when a request exceeds two tiers: more planes, a third tier, bigger switches;
and beside a buildable answer (the fewest spines), the same fabric with more spines.

Each is computed with the same rules as `twin.design.sizing` (its module says them); nothing is looked up.

- more spines: the answer takes the fewest spines S dividing a leaf's U uplinks; every other divisor of U
  above S also fits (fewer links per pair use fewer spine ports), up to U spines with one link per
  leaf-spine pair. Same leaves, links, cables, ECMP width and bisection; more switches; a smaller failure
  domain: a spine lost takes 1/S of every leaf's uplinks (links_per_pair links each), a switch drained
  for maintenance likewise;

- planes: the fewest planes (dividing the rails, or a multiple of them with each NIC split over the
  planes) at which every plane fits in two tiers of the same switches;
- three tiers: pods of Q/2 leaves (whole rail groups) and their spines (each spine Q/2 ports down to the
  pod's leaves, Q/2 up), joined by super-spines of Q ports; at most Q pods;
- radix: the smallest even port count, at the same port speed, for leaves and spines that fits two tiers.
"""

from __future__ import annotations

from twin.design.quantities import ceil_div, divisors, speed_text
from twin.design.sizing import (
    Alternative,
    SizeRequest,
    TwoTier,
    leaf_split,
    num,
    plane_shape,
    shape_problem,
    two_tier,
)

MAX_RADIX = 1 << 16


def alternatives(req: SizeRequest, servers: int) -> list[Alternative]:
    out = [alt for alt in (more_planes(req, servers), three_tiers(req, servers), bigger_radix(req, servers))
           if alt is not None]
    return out


def plane_counts(req: SizeRequest) -> list[int]:
    """Plane counts above the request's that its NICs and ports allow, ascending."""
    r = req.nics_per_server
    counts = {d for d in range(1, r + 1) if r % d == 0}
    counts |= {r * m for m in range(2, req.nic_speed + 1) if req.nic_speed % m == 0}
    return sorted(k for k in counts if k > req.planes and shape_problem(req, k) is None)


def more_planes(req: SizeRequest, servers: int) -> Alternative | None:
    for k in plane_counts(req):
        shape = plane_shape(req, k)
        t = two_tier(servers, shape, req.leaf_ports, req.spine_ports, req.port_speed, req.oversubscription, req.mode)
        if not t.feasible:
            continue
        how = (f"{shape.nics_in_plane} rail(s) per plane" if shape.split == 1 else
               f"each {speed_text(req.nic_speed)} NIC split into {shape.split} x {speed_text(shape.link_speed)}, "
               f"one port per plane" + (f", {shape.breakout} links per {speed_text(req.port_speed)} leaf port"
                                        if shape.breakout > 1 else ""))
        switches = (t.leaves + t.spines) * k
        return Alternative(
            kind="planes", switches=switches,
            summary=f"{k} planes ({how}): {t.leaves} leaves + {t.spines} spines per plane, {t.links_per_pair} "
                    f"link(s) per pair; {num(t.leaves * k)} leaves + {num(t.spines * k)} spines = {num(switches)} "
                    f"switches. GPUs on different planes meet only inside their servers",
            details={"planes": k, "leaves": t.leaves * k, "spines": t.spines * k, "leaves_per_plane": t.leaves,
                     "spines_per_plane": t.spines, "links_per_pair": t.links_per_pair,
                     "link_speed": speed_text(shape.link_speed), "breakout": shape.breakout})
    return None


def three_tiers(req: SizeRequest, servers: int) -> Alternative | None:
    """Leaves as two tiers would need them, grouped in pods under their own spines, joined by super-spines."""
    shape = plane_shape(req, req.planes)
    q = req.spine_ports
    unbounded = two_tier(servers, shape, req.leaf_ports, 1 << 40, req.port_speed, req.oversubscription, req.mode)
    nics = shape.nics_in_plane
    per_pod = (q // 2) // nics * nics if req.mode == "rails" else q // 2
    if unbounded.leaf_up_ports == 0 or per_pod == 0 or unbounded.leaves == 0:
        return None
    up = unbounded.leaf_up_ports
    pods = ceil_div(unbounded.leaves, per_pod)
    if pods > q:
        return None
    spines = pods * up                     # each pod: `up` spines, one link to every leaf of the pod
    supers = ceil_div(spines * (q // 2), q)
    k = req.planes
    down_max, _ = leaf_split(req.leaf_ports, req.oversubscription)
    attach = down_max * shape.breakout
    per_pod_servers = (per_pod // nics) * attach if req.mode == "rails" else per_pod * (attach // nics)
    switches = (unbounded.leaves + spines + supers) * k
    return Alternative(
        kind="three-tier", switches=switches,
        summary=f"three tiers: {num(pods)} pods of up to {per_pod} leaves and {up} spines (each spine {q // 2} ports "
                f"down, {q // 2} up), {num(supers)} super-spines of {q} ports: {num(unbounded.leaves * k)} leaves + "
                f"{num(spines * k)} spines + {num(supers * k)} super-spines = {num(switches)} switches; at most "
                f"{num(q * per_pod_servers * req.gpus_per_server)} GPUs ({q} pods)",
        details={"pods": pods, "leaves": unbounded.leaves * k, "spines": spines * k, "super_spines": supers * k,
                 "leaves_per_pod": per_pod, "spines_per_pod": up,
                 "max_gpus": q * per_pod_servers * req.gpus_per_server})


def bigger_radix(req: SizeRequest, servers: int) -> Alternative | None:
    shape = plane_shape(req, req.planes)
    start = max(req.leaf_ports, req.spine_ports) + 1
    for radix in range(start + start % 2, MAX_RADIX + 1, 2):
        t = two_tier(servers, shape, radix, radix, req.port_speed, req.oversubscription, req.mode)
        if t.feasible:
            k = req.planes
            have = max(req.leaf_ports, req.spine_ports) * req.port_speed
            return Alternative(
                kind="radix", switches=(t.leaves + t.spines) * k,
                summary=f"bigger switches: two tiers fit with {radix}-port switches at {speed_text(req.port_speed)} "
                        f"({num(radix * req.port_speed / 1000)} Tb/s each, these are {num(have / 1000)} Tb/s): "
                        f"{num(t.leaves * k)} leaves + {num(t.spines * k)} spines, {t.links_per_pair} link(s) per pair",
                details={"radix": radix, "switch_capacity": speed_text(radix * req.port_speed),
                         "leaves": t.leaves * k, "spines": t.spines * k, "links_per_pair": t.links_per_pair})
    return None


def more_spines(req: SizeRequest, plane: TwoTier) -> Alternative | None:
    """The buildable plane with the most spines (one link per leaf-spine pair), when the answer has fewer."""
    if not plane.feasible or plane.spines == 0 or plane.links_per_pair == 1:
        return None
    up, k = plane.leaf_up_ports, req.planes
    counts = [s for s in divisors(up) if s > plane.spines]
    most = counts[-1]
    switches, fewest_switches = (plane.leaves + most) * k, (plane.leaves + plane.spines) * k
    between = counts[:-1]
    return Alternative(
        kind="more-spines", switches=switches,
        summary=f"more spines, smaller failure domain: {num(most * k)} spines" + (" in all" if k > 1 else "")
                + f", 1 link per leaf-spine pair, {plane.leaves} of {req.spine_ports} ports used per spine; a spine "
                  f"lost takes 1 of a leaf's {up} uplinks ({100 / most:.3g} %) instead of {plane.links_per_pair} "
                  f"({100 / plane.spines:.3g} %); same leaves, links, optics, ECMP width ({up}) and bisection; "
                  f"{num(switches)} switches instead of {num(fewest_switches)}"
                + (f" (also buildable: {', '.join(num(s * k) for s in between)} spines)" if between else ""),
        details={"spines": most * k, "spines_per_plane": most, "links_per_pair": 1, "spine_ports_used": plane.leaves,
                 "spine_loss_share": round(1 / most, 6), "fewest_spines": plane.spines * k,
                 "fewest_spines_loss_share": round(1 / plane.spines, 6),
                 "spine_counts": ", ".join(str(s * k) for s in [plane.spines, *counts])})
