"""Collective communication patterns as GPU pairs, and each pair's queue pairs as flows.

- ring-allreduce, all-gather, reduce-scatter: rail-local rings, as NCCL builds them on rail-optimised
  fabrics: GPU i of every server sends to GPU i of the next server (servers in plan order, the last
  back to the first); the three differ in what the ring carries (twin.traffic.collectives).
- all-to-all: every GPU sends to every GPU of every other server (cross-rail; GPUs of one server
  talk over NVLink, not the fabric).
- pairs FILE: the pairs a user lists (YAML: `pairs: [[server1/0, server3/0], ...]`).
Each GPU pair opens `qps` queue pairs; each is one flow with its own UDP source port (twin.traffic.qp).
"""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

from twin.model.errors import PlanError, TwinError
from twin.model.traffic import Flow, Gpu, PatternName
from twin.stages.load.source import load_yaml
from twin.traffic.qp import QpNumbers, source_port


def ring_pairs(gpus: list[Gpu]) -> list[tuple[Gpu, Gpu]]:
    pairs: list[tuple[Gpu, Gpu]] = []
    for _, ring_iter in groupby(sorted(gpus, key=lambda g: g.index), key=lambda g: g.index):
        ring = list(ring_iter)
        if len(ring) < 2:
            continue
        pairs += [(ring[k], ring[(k + 1) % len(ring)]) for k in range(len(ring))]
    return pairs


def all_to_all_pairs(gpus: list[Gpu]) -> list[tuple[Gpu, Gpu]]:
    return [(a, b) for a in gpus for b in gpus if a.server != b.server]


def file_pairs(path: Path, gpus: list[Gpu]) -> list[tuple[Gpu, Gpu]]:
    """`pairs: [[SRC, DST], ...]` with GPUs written `server/index` (index from 0)."""
    doc = load_yaml(path)
    by_name = {g.name: g for g in gpus}
    listed = doc.data.get("pairs")
    if not isinstance(listed, list) or not listed:
        raise PlanError([doc.problem(("pairs",) if "pairs" in doc.data else (), "expected a list of GPU pairs",
                                     "write 'pairs:' followed by lines like '- [server1/0, server3/0]'")])
    problems = []
    pairs: list[tuple[Gpu, Gpu]] = []
    for i, item in enumerate(listed):
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            problems.append(doc.problem(("pairs", i), "a pair is two GPU names",
                                        "write it as '[server1/0, server3/0]'"))
            continue
        unknown = [x for x in item if x not in by_name]
        if unknown:
            problems.append(doc.problem(("pairs", i), f"no GPU {', '.join(unknown)} in this lab",
                                        f"use server/index names, e.g. {', '.join(list(by_name)[:3])}"))
            continue
        if item[0] == item[1]:
            problems.append(doc.problem(("pairs", i), "a GPU cannot send to itself", "name two different GPUs"))
            continue
        pairs.append((by_name[item[0]], by_name[item[1]]))
    if problems:
        raise PlanError(problems)
    return pairs


def gpu_pairs(pattern: PatternName, gpus: list[Gpu], pairs_file: Path | None = None) -> list[tuple[Gpu, Gpu]]:
    if pattern == "pairs":
        if pairs_file is None:
            raise TwinError("the pairs pattern needs a file: twin traffic pairs FILE (YAML 'pairs: [[a, b], ...]')")
        return file_pairs(pairs_file, gpus)
    pairs = all_to_all_pairs(gpus) if pattern == "all-to-all" else ring_pairs(gpus)
    if not pairs:
        raise TwinError(f"{pattern} needs GPUs on at least two servers; this lab (or --gpus) has "
                        f"{len({g.server for g in gpus})}")
    return pairs


def flows(pairs: list[tuple[Gpu, Gpu]], qps: int) -> list[Flow]:
    """`qps` queue pairs per GPU pair, each its own flow; QP numbers taken in pair order."""
    numbers = QpNumbers()
    out: list[Flow] = []
    for src, dst in pairs:
        for qp in range(qps):
            lqpn, rqpn = numbers.connect(src.name, dst.name)
            out.append(Flow(src=src.name, dst=dst.name, qp=qp, src_ip=src.ip, dst_ip=dst.ip,
                            sport=source_port(lqpn, rqpn)))
    return out
