"""Check a claimed leaf and spine count against the arithmetic of a two-tier fabric (`twin size --leaves --spines`).

A two-tier fabric connects every leaf to every spine, so a claim must give
- enough NIC-facing leaf ports for every NIC link: leaves x NIC ports per leaf >= NIC links;
- every leaf a link to every spine: spines <= a leaf's uplinks;
- every spine a link to every leaf: leaves <= a spine's ports.
Port counts that balance (leaf uplinks = spine ports) are not enough: a leaf that misses some spines
reaches the leaves behind them only through a third tier.
"""

from __future__ import annotations

from twin.design.sizing import ClaimCheck, PlaneShape, SizeRequest, leaf_split, num


def check_claim(req: SizeRequest, servers: int, shape: PlaneShape) -> ClaimCheck:
    k = req.planes
    down, up = leaf_split(req.leaf_ports, req.oversubscription)
    attach = down * shape.breakout
    needed = servers * shape.nics_in_plane * k
    problems: list[str] = []
    leaves, spines = req.claim_leaves, req.claim_spines
    if leaves is not None:
        have = leaves * attach
        if have < needed:
            problems.append(f"{num(leaves)} leaves x {num(attach)} NIC-facing ports = {num(have)} NIC links, but "
                            f"{num(servers)} servers x {shape.nics_in_plane * k} NIC ports need {num(needed)} "
                            f"({needed / have:.3g}x more)")
        if leaves > req.spine_ports * k:
            problems.append(f"a {req.spine_ports}-port spine reaches at most {req.spine_ports} leaves, not "
                            f"{num(leaves // k)}" + (" per plane" if k > 1 else "")
                            + ": in two tiers every spine must reach every leaf")
    if spines is not None and spines > up * k:
        problems.append(f"a leaf has {up} uplinks, so it reaches at most {up} of the {num(spines // k)} spines"
                        + (" of its plane" if k > 1 else "") + ": in two tiers every leaf must reach every spine")
    if leaves is not None and spines is not None and len(problems) > 0 and leaves * up == spines * req.spine_ports:
        problems.append(f"the port counts balance ({num(leaves)} x {up} leaf uplinks = {num(spines)} x "
                        f"{req.spine_ports} spine ports = {num(leaves * up)}), yet a leaf reaches only {up} of "
                        f"{num(spines)} spines: leaves that share no spine are joined only through another tier, "
                        "so this is not a two-tier fabric")
    return ClaimCheck(leaves=leaves, spines=spines, ok=not problems, problems=problems)
