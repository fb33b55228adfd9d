"""Which queues mark RoCE with ECN, and at what depths: every QUEUE row (`ports|queue` or
`ports|first-last`) whose `wred_profile` names a WRED_PROFILE that marks green packets (`ecn` of
ecn_green, ecn_green_yellow, ecn_green_red or ecn_all; RoCE's packets are green), with that profile's
green thresholds and how much the queue can hold (its BUFFER_QUEUE profile over its pool,
twin.stages.port_buffers.limit). Pure; `twin validate` (twin.stages.validate.ecn) judges the thresholds
against the queue, `twin traffic` (twin.traffic.incast) against an incast's backlog."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from twin.stages import port_buffers

GREEN_ECN = ("ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all")


@dataclass(frozen=True)
class Thresholds:
    """A WRED_PROFILE's green thresholds in bytes (Kmin, Kmax) and its probability in percent (None: not set)."""

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
    """One queue a marking WRED profile is bound to, its thresholds and how much it holds."""

    port: str
    queue: int
    profile: str           # the WRED_PROFILE
    thresholds: Thresholds
    limit: int | None      # bytes the queue holds (None: no BUFFER_QUEUE profile binds it)
    mtu: int


def marked_queues(db: Mapping[str, Any]) -> list[MarkedQueue]:
    """Every queue QUEUE gives a WRED profile that marks green packets with ECN."""
    rows = db.get("QUEUE", {}) or {}
    wred = db.get("WRED_PROFILE", {}) or {}
    profiles, pools = port_buffers.profiles(db), port_buffers.pools(db)
    bound = port_buffers.queue_profiles(db)
    out = []
    for key, row in rows.items():
        name = str((row or {}).get("wred_profile") or "")
        marking = wred.get(name)
        if "|" not in key or not isinstance(marking, Mapping) or str(marking.get("ecn", "ecn_none")) not in GREEN_ECN:
            continue
        ports, _, ranged = key.rpartition("|")
        for port in ports.split(","):
            for queue in port_buffers.indexes(ranged, port_buffers.BUFFER_QUEUES):
                profile = profiles.get(bound.get(port, {}).get(queue, ("", ""))[1])
                limit = port_buffers.limit(profile, pools.get(profile.pool)) if profile is not None else None
                out.append(MarkedQueue(port, queue, name, Thresholds.of(marking), limit,
                                       port_buffers.port_mtu(db, port)))
    return out
