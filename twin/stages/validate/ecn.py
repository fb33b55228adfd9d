"""ECN thresholds against the queue they mark: a WRED_PROFILE that marks green packets (RoCE's) is
judged on every queue QUEUE binds it to, against what that queue can hold (its BUFFER_QUEUE profile over
its pool, twin.stages.port_buffers.limit):

- Kmin (`green_min_threshold`) at or beyond what the queue holds: it never marks;
- Kmax (`green_max_threshold`) beyond it: marking never reaches `green_drop_probability`;
- Kmin below one frame of the port's MTU: every frame that waits is marked, so DCQCN slows down for
  any queue at all;
- `green_drop_probability` 0: it never marks.

Kmin not below Kmax and a profile with ECN off are twin.stages.validate.qos's findings. One finding per
switch, profile and problem, naming the queues (`port|queue`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from twin.model.findings import Finding, SwitchConfig
from twin.stages import port_buffers

GREEN_ECN = ("ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all")
QUEUES = port_buffers.BUFFER_QUEUES


@dataclass(frozen=True)
class Thresholds:
    """A WRED_PROFILE's green thresholds in bytes and its probability in percent (None: not set)."""

    kmin: int | None
    kmax: int | None
    probability: int | None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Thresholds:
        def num(field: str) -> int | None:
            text = str(row.get(field, "")).strip()
            return int(text) if text.isdigit() else None
        return cls(num("green_min_threshold"), num("green_max_threshold"), num("green_drop_probability"))


@dataclass(frozen=True)
class MarkedQueue:
    """One queue a marking WRED profile is bound to, and how much it holds."""

    port: str
    queue: int
    profile: str           # the WRED_PROFILE
    limit: int | None      # bytes the queue holds (None: no BUFFER_QUEUE profile binds it)
    mtu: int


def marked_queues(cfg: SwitchConfig) -> list[MarkedQueue]:
    """Every queue QUEUE gives a WRED profile that marks green packets with ECN."""
    wred = cfg.table("WRED_PROFILE")
    profiles, pools = port_buffers.profiles(cfg.db), port_buffers.pools(cfg.db)
    bound = port_buffers.queue_profiles(cfg.db)
    out = []
    for key, row in cfg.table("QUEUE").items():
        name = str((row or {}).get("wred_profile") or "")
        if "|" not in key or str(wred.get(name, {}).get("ecn", "ecn_none")) not in GREEN_ECN:
            continue
        ports, _, ranged = key.rpartition("|")
        for port in ports.split(","):
            for queue in port_buffers.indexes(ranged, QUEUES):
                profile = profiles.get(bound.get(port, {}).get(queue, ("", ""))[1])
                limit = port_buffers.limit(profile, pools.get(profile.pool)) if profile is not None else None
                out.append(MarkedQueue(port, queue, name, limit, port_buffers.port_mtu(cfg.db, port)))
    return out


def _problems(t: Thresholds, q: MarkedQueue) -> list[tuple[str, str, str]]:
    """(field, problem, fix) of one queue's thresholds."""
    out = []
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
    wred = cfg.table("WRED_PROFILE")
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for q in marked_queues(cfg):
        for field, problem, fix in _problems(Thresholds.of(wred.get(q.profile, {})), q):
            groups.setdefault((q.profile, field, problem, fix), []).append(f"{q.port}|{q.queue}")
    out = []
    for (profile, field, problem, fix), queues in groups.items():
        names = ", ".join(queues[:6]) + (f" and {len(queues) - 6} more" if len(queues) > 6 else "")
        out.append(Finding("qos", cfg.file, f"WRED_PROFILE|{profile} {field}", f"{problem} (queues {names})", fix))
    return out
