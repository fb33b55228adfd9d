"""RoCE's lossless class on every port given QoS (twin.stages.roce_class): a packet of the lab's
`roce.compute_dscp` may arrive on any such port and leave by any other, so each is judged as both. Its
priority group must be lossless and PFC on for its priority where it arrives, and PFC on where it
leaves. A port whose DSCP map already sends RoCE to a lossy queue is twin.stages.validate.qos's finding
(`roce_queue_findings`), not judged again here. One finding per switch and problem, naming the ports."""

from __future__ import annotations

from twin.model.findings import Finding, SwitchConfig
from twin.stages.port_qos import lossy_roce
from twin.stages.roce_class import Break, SwitchClass


def lossless_findings(cfg: SwitchConfig, dscp: int) -> list[Finding]:
    switch = SwitchClass(cfg.db)
    lossy = {f.port for f in lossy_roce(cfg.db, dscp)}
    breaks: dict[tuple[str, str], Break] = {}
    for port in sorted(switch.rows[0], key=lambda p: (len(p), p)):
        if port in lossy:
            continue
        tc, _, found = switch.ingress(port, dscp)
        for b in [*found, *switch.egress(port, tc)[1]]:
            breaks.setdefault((b.port, b.where), b)
    groups: dict[tuple[str, str], list[Break]] = {}
    for b in breaks.values():
        groups.setdefault((b.text, b.fix), []).append(b)
    out = []
    for (text, fix), group in groups.items():
        ports = ", ".join(b.port for b in group[:6]) + (f" and {len(group) - 6} more" if len(group) > 6 else "")
        out.append(Finding("qos", cfg.file, group[0].where, f"{text}, on {ports} (DSCP {dscp})", fix))
    return out
