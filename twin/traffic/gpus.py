"""The GPUs of a lab: one per addressed server NIC (rail-optimised servers give GPU i its own NIC i),
and `--gpus SPEC`, which of them take part."""

from __future__ import annotations

from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.model.traffic import Gpu


def lab_gpus(plan: Plan) -> list[Gpu]:
    """Every server NIC with an address on a leaf, servers in plan order, NICs in order."""
    gpus: list[Gpu] = []
    for host in plan.hosts:
        index = 0
        for iface in host.interfaces:
            if iface.address is None:
                continue
            leaf = plan.node(iface.peer_node)
            if leaf.kind != "switch":
                continue
            port = leaf.iface(iface.peer_iface)
            gpus.append(Gpu(server=host.name, index=index, ip=str(iface.address.ip), nic=iface.kernel,
                            leaf=leaf.name, leaf_port=port.kernel, rail=leaf.rail, pod=leaf.pod,
                            speed_mbps=port.speed or iface.speed or plan.fabric.speed))
            index += 1
    return gpus


def parse_spec(spec: str, source: str = "--gpus") -> set[int]:
    """`0-3`, `0,2,4` or `0-1,6-7`: the GPU numbers (per server) that take part."""
    wanted: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        lo, dash, hi = part.partition("-")
        if not (lo.isascii() and lo.isdigit()) or (dash and not (hi.isascii() and hi.isdigit())):
            raise TwinError(f"{source}: '{spec}' is not a list of GPU numbers; write e.g. '0-3' or '0,2,4' "
                            "(GPU i is NIC i of every server)")
        first, last = int(lo), int(hi or lo)
        if last < first:
            raise TwinError(f"{source}: range '{part}' runs backwards; write it as '{last}-{first}'")
        wanted |= set(range(first, last + 1))
    return wanted


def select(gpus: list[Gpu], spec: str | None) -> list[Gpu]:
    if spec is None:
        return gpus
    wanted = parse_spec(spec)
    chosen = [g for g in gpus if g.index in wanted]
    if not chosen:
        have = sorted({g.index for g in gpus})
        raise TwinError(f"--gpus {spec}: no server has those GPUs; this lab's servers have GPUs "
                        f"{', '.join(map(str, have))}")
    return chosen
