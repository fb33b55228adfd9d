"""ECN thresholds against the queue they mark: a WRED_PROFILE that marks green packets (RoCE's) is
judged on every lossless queue (one PFC pauses) QUEUE binds it to, against what that queue can hold
(twin.stages.port_ecn). Lossy queues are left alone: SONiC's own templates give them marking profiles
that never mark (probability 0) on purpose.

- Kmin (`green_min_threshold`) at or beyond what the queue holds: it never marks;
- Kmax (`green_max_threshold`) beyond it: marking never reaches `green_drop_probability`;
- Kmin below one frame of the port's MTU: every frame that waits is marked, so DCQCN slows down for
  any queue at all;
- `green_drop_probability` 0: it never marks.

Kmin not below Kmax and a profile with ECN off are twin.stages.validate.qos's findings. One finding per
switch, profile and problem, naming the queues (`port|queue`)."""

from __future__ import annotations

from twin.model.findings import Finding, SwitchConfig
from twin.stages.port_ecn import MarkedQueue, marked_queues
from twin.stages.port_qos import lossless_queues, port_qos_rows


def _problems(q: MarkedQueue) -> list[tuple[str, str, str]]:
    """(field, problem, fix) of one queue's thresholds."""
    t, out = q.thresholds, []
    if t.probability == 0:
        out.append(("green_drop_probability", "green_drop_probability is 0: it never marks",
                    "set a marking probability (SONiC's RoCE profiles use 5 to 10 percent)"))
    if t.kmin is not None and t.kmin < q.mtu:
        out.append(("green_min_threshold", f"Kmin {t.kmin} is below one {q.mtu}-byte frame: every frame that "
                    "waits is marked", f"set green_min_threshold to at least {q.mtu} bytes"))
    if q.limit is None:
        return out
    if t.kmin is not None and t.kmin >= q.limit:
        out.append(("green_min_threshold", f"Kmin {t.kmin} is at or beyond the {q.limit} bytes the queue holds: "
                    "it never marks", f"set green_min_threshold below {q.limit}"))
    elif t.kmax is not None and t.kmax > q.limit:
        out.append(("green_max_threshold", f"Kmax {t.kmax} is beyond the {q.limit} bytes the queue holds: marking "
                    f"never reaches {t.probability if t.probability is not None else 100} percent",
                    f"set green_max_threshold to at most {q.limit}"))
    return out


def ecn_findings(cfg: SwitchConfig) -> list[Finding]:
    lossless = {port: lossless_queues(cfg.db, row) for port, row in port_qos_rows(cfg.db)[0].items()}
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for q in marked_queues(cfg.db):
        if q.queue not in lossless.get(q.port, frozenset()):
            continue
        for field, problem, fix in _problems(q):
            groups.setdefault((q.profile, field, problem, fix), []).append(f"{q.port}|{q.queue}")
    out = []
    for (profile, field, problem, fix), queues in groups.items():
        names = ", ".join(queues[:6]) + (f" and {len(queues) - 6} more" if len(queues) > 6 else "")
        out.append(Finding("qos", cfg.file, f"WRED_PROFILE|{profile} {field}", f"{problem} (queues {names})", fix))
    return out
