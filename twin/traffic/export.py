"""A run's workload for a packet simulator: the `twin-flows` document (pure; docs/reference/files.md).

What a packet-level simulator needs to time the same collective itself: the topology (every node,
every cabled link direction with its line rate), the GPUs and their NICs, and every send (its queue
pair's 5-tuple, bytes, the sends it waits for, its path hop by hop as the switches' forwarding gave
it); with a fault, what the fault takes out, the measured outage, and each send's path once the fabric
has converged. The twin's own figures (a flow-level model) come along for comparison.
"""

from __future__ import annotations

from typing import Any

from twin.model.plan import Plan
from twin.model.traffic import ROCE_DPORT, CollectiveFigures, TrafficReport
from twin.traffic.gpus import lab_gpus
from twin.traffic.links import capacities, port_name

FORMAT, VERSION = "twin-flows", 1


def _figures(f: CollectiveFigures | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {"completion_ms": f.completion_ms, "algbw_gbps": f.algbw_gbps, "busbw_gbps": f.busbw_gbps}


def flows_document(plan: Plan, report: TrafficReport) -> dict[str, Any]:
    gpus = {g.name: g for g in lab_gpus(plan)}
    used = {r.src for r in report.flow_table} | {r.dst for r in report.flow_table}
    sports: dict[tuple[str, str, int], int] = {}
    for key in report.paths:   # "src->dst#qp:sport"
        pair, _, tail = key.partition("#")
        src, _, dst = pair.partition("->")
        qp, _, sport = tail.partition(":")
        sports[(src, dst, int(qp))] = int(sport)
    during = report.during.flow_table if report.during is not None else []
    flows = []
    for k, r in enumerate(report.flow_table):
        row: dict[str, Any] = {
            "id": k, "src": r.src, "dst": r.dst, "qp": r.qp, "src_ip": gpus[r.src].ip, "dst_ip": gpus[r.dst].ip,
            "sport": sports.get((r.src, r.dst, r.qp)), "dport": ROCE_DPORT, "step": r.step, "bytes": r.bytes,
            "after": r.after, "path": r.path, "ports": r.ports}
        if report.fault is not None and k < len(during):
            row["path_during"], row["ports_during"] = during[k].path, during[k].ports
        flows.append(row)
    caps = sorted(capacities(plan, gpus.values()).items())
    links = [{"a": a, "a_port": port_name(plan, a, a_if), "b": b, "b_port": port_name(plan, b, b_if),
              "capacity_gbps": rate / 1000} for (a, a_if, b, b_if), rate in caps]
    doc: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "lab": report.lab, "pattern": report.pattern,
        "collective": report.collective, "n": report.n, "message_bytes": report.message_bytes,
        "algo_factor": report.algo_factor, "qps": report.qps,
        "units": {"capacity_gbps": "10^9 bit/s", "bytes": "bytes", "time": "ms"},
        "nodes": [{"name": n.name, "role": n.role} for n in plan.nodes],
        "gpus": [{"name": g.name, "server": g.server, "nic": g.nic, "ip": g.ip, "leaf": g.leaf, "rail": g.rail,
                  "pod": g.pod, "speed_gbps": g.speed_mbps / 1000} for g in gpus.values() if g.name in used],
        "links": links, "flows": flows, "fault": None,
        "model": {"healthy": _figures(report.before or report),
                  "during": _figures(report.during), "failure_iteration": _figures(report.failure_iteration)}}
    if report.fault is not None:
        doc["fault"] = {"name": report.fault, "at_ms": 0.0, "outage_ms": report.outage_ms,
                        "failed_nodes": report.failed_nodes, "failed_links": report.failed_links}
    return doc
