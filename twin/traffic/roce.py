"""RoCE what-ifs of a pattern, from the switches' running QoS and buffer config (pure; a model):

- the lossless class on every flow's path: at each switch it crosses, RoCE's DSCP through the port it
  arrives on and the port it leaves by (twin.stages.roce_class); each place it breaks is counted once
  per flow that crosses it;
- the incast queues: the egress queues the pattern offers more than line rate, their backlog against
  ECN's Kmin and the ingress priority groups' pause (twin.traffic.incast).

The DSCP is the lab file's `roce.compute_dscp`, else 26, RoCE's class in the configs twin generates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal

from twin.model.plan import Plan
from twin.model.traffic import Flow, Gpu, RoceBreak, RoceWhatIf
from twin.stages.render.qos import ROCE_DSCP
from twin.stages.roce_class import Break, HopClass, SwitchClass
from twin.traffic.collectives import Schedule
from twin.traffic.incast import incast_queues
from twin.traffic.links import port_name
from twin.traffic.resolve import Path

MODEL = ("a model from the switches' running config: every flow offers its NIC's line rate (shared among its "
         "GPU's queue pairs) and sends its first chunk at once; a queue offered more than line rate holds "
         "burst x (1 - capacity / offered) when the burst has arrived; ECN marks from Kmin; an ingress priority "
         "group pauses at its reserved size plus its share of the pool; bytes, not cells; no congestion "
         "control reacts")


def lossless_breaks(plan: Plan, paths: list[Path], classes: Mapping[str, SwitchClass],
                    dscp: int) -> tuple[int, list[RoceBreak]]:
    """(flows lossless on every hop, the places RoCE's class breaks with the flows crossing each). A flow
    through a switch whose config is unknown, or without a complete path, is not counted lossless."""
    seen: dict[tuple[str, str, str], HopClass] = {}
    crossing: Counter[tuple[str, Break]] = Counter()
    lossless = 0
    for p in paths:
        broken: set[tuple[str, Break]] = set()
        judged = p.complete
        for before, hop in zip(p.hops, p.hops[1:], strict=False):
            cls = classes.get(hop.a)
            if cls is None:
                judged = False
                continue
            key = (hop.a, before.b_if, hop.a_if)
            if key not in seen:
                seen[key] = cls.hop(port_name(plan, hop.a, before.b_if), port_name(plan, hop.a, hop.a_if), dscp)
            broken.update((hop.a, b) for b in seen[key].breaks)
        crossing.update(broken)
        lossless += judged and not broken
    rows = [RoceBreak(switch=s, port=b.port, side=b.side, where=b.where, problem=b.text, fix=b.fix, flows=n)
            for (s, b), n in crossing.items()]
    return lossless, sorted(rows, key=lambda r: (-r.flows, r.switch, r.port, r.side))


def roce_what_if(plan: Plan, flows: list[Flow], gpus: dict[str, Gpu], paths: list[Path], sched: Schedule,
                 configs: Mapping[str, Mapping[str, Any]], lab_dscp: int | None) -> RoceWhatIf:
    dscp = lab_dscp if lab_dscp is not None else ROCE_DSCP
    dscp_from: Literal["lab", "twin"] = "lab" if lab_dscp is not None else "twin"
    classes = {name: SwitchClass(db) for name, db in configs.items()}
    lossless, breaks = lossless_breaks(plan, paths, classes, dscp)
    return RoceWhatIf(model=MODEL, dscp=dscp, dscp_from=dscp_from, flows=len(flows), lossless_flows=lossless,
                      breaks=breaks, incast=incast_queues(plan, flows, gpus, paths, sched, classes, dscp))
