"""A port's buffers as SONiC's bufferorch binds them from CONFIG_DB (sonic-swss orchagent/bufferorch.cpp,
traditional buffer model, read, not copied), and how much a priority group or queue can hold. Pure;
`twin validate`'s headroom and ECN checks (twin.stages.validate) and `twin traffic`'s incast what-if
(twin.traffic.incast) read buffers through it.

- BUFFER_PG keys are `port|pg` or `port|first-last` (PGs 0-7), BUFFER_QUEUE keys `port|queue` or
  `port|first-last` (queues 0-15); `profile` names a BUFFER_PROFILE row (the older `[BUFFER_PROFILE|name]`
  form too) or `NULL`, which binds nothing;
- BUFFER_PROFILE: `size` the reserved bytes, `static_th` a static limit on the shared bytes or
  `dynamic_th` the exponent of the dynamic one (alpha = 2^dynamic_th), `xon`/`xoff` the PFC thresholds of
  a lossless priority group (`xoff`: the headroom that takes what arrives after PFC pauses the sender);
- BUFFER_POOL: `size`, and `xoff`, the shared headroom pool carved out of it;
- CABLE_LENGTH: one row (SONiC's templates name it AZURE) of `port: "<metres>m"`;
- PORT: `speed` in Mb/s, `mtu` (9100 when unset, SONiC's default).

How much a priority group or queue can hold before it is full (`limit`) is the usual shared-buffer
model: its reserved `size` plus its share of the pool's shared bytes (the pool's size less its shared
headroom): `static_th` bytes, or with `dynamic_th`, alpha / (1 + k x alpha) of them when k buffers of
that profile fill at once (k = 1: alpha / (1 + alpha), the most one buffer can take). Real ASICs count in
cells and reserve more; this is a model, in bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_MTU = 9100
PGS = 8
BUFFER_QUEUES = 16

Tables = Mapping[str, Any]


@dataclass(frozen=True)
class Profile:
    """One BUFFER_PROFILE row, in bytes (None: not set)."""

    name: str
    pool: str
    size: int
    xon: int | None = None
    xoff: int | None = None
    static_th: int | None = None
    dynamic_th: int | None = None

    @property
    def lossless(self) -> bool:
        """A lossless priority group's profile: one that says when to send PFC (xoff)."""
        return self.xoff is not None


@dataclass(frozen=True)
class Pool:
    name: str
    size: int
    xoff: int = 0          # the shared headroom pool inside `size`

    @property
    def shared(self) -> int:
        return max(0, self.size - self.xoff)


def _rows(db: Tables, table: str) -> Mapping[str, Any]:
    rows = db.get(table, {})
    return rows if isinstance(rows, Mapping) else {}


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _ref(value: Any, table: str) -> str | None:
    """A reference to a row of `table`: `name` or the older `[TABLE|name]`; None for none or NULL."""
    text = str(value or "").strip().strip("[]")
    for sep in "|:":
        text = text.removeprefix(f"{table}{sep}")
    return None if not text or text == "NULL" else text


def profile_name(ref: Any) -> str | None:
    """A BUFFER_PG or BUFFER_QUEUE row's `profile`."""
    return _ref(ref, "BUFFER_PROFILE")


def profiles(db: Tables) -> dict[str, Profile]:
    out = {}
    for name, row in _rows(db, "BUFFER_PROFILE").items():
        if isinstance(row, Mapping):
            out[str(name)] = Profile(name=str(name), pool=_ref(row.get("pool"), "BUFFER_POOL") or "",
                                     size=_int(row.get("size")) or 0, xon=_int(row.get("xon")),
                                     xoff=_int(row.get("xoff")), static_th=_int(row.get("static_th")),
                                     dynamic_th=_int(row.get("dynamic_th")))
    return out


def pools(db: Tables) -> dict[str, Pool]:
    return {str(name): Pool(name=str(name), size=_int(row.get("size")) or 0, xoff=_int(row.get("xoff")) or 0)
            for name, row in _rows(db, "BUFFER_POOL").items() if isinstance(row, Mapping)}


def indexes(text: str, top: int) -> range:
    """`3` or `3-4` of a key, within 0 .. top-1."""
    first, _, last = text.partition("-")
    low, high = _int(first), _int(last or first)
    if low is None or high is None or low > high:
        return range(0)
    return range(max(0, low), min(top - 1, high) + 1)


def _bound(db: Tables, table: str, top: int) -> dict[str, dict[int, tuple[str, str]]]:
    """{port: {index: (its key, profile name)}} of BUFFER_PG or BUFFER_QUEUE."""
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for key, row in _rows(db, table).items():
        if not isinstance(row, Mapping) or "|" not in str(key):
            continue
        port, _, ranged = str(key).rpartition("|")
        name = profile_name(row.get("profile"))
        if name is None:
            continue
        for index in indexes(ranged, top):
            out.setdefault(port, {})[index] = (str(key), name)
    return out


def pg_profiles(db: Tables) -> dict[str, dict[int, tuple[str, str]]]:
    """{port: {priority group: (BUFFER_PG key, profile name)}}."""
    return _bound(db, "BUFFER_PG", PGS)


def queue_profiles(db: Tables) -> dict[str, dict[int, tuple[str, str]]]:
    """{port: {queue: (BUFFER_QUEUE key, profile name)}}."""
    return _bound(db, "BUFFER_QUEUE", BUFFER_QUEUES)


def cable_lengths(db: Tables) -> dict[str, tuple[str, int]]:
    """{port: (CABLE_LENGTH key, metres)}; a length that is not `<n>m` is left out."""
    out = {}
    for key, row in _rows(db, "CABLE_LENGTH").items():
        if not isinstance(row, Mapping):
            continue
        for port, length in row.items():
            metres = _int(str(length).strip().removesuffix("m"))
            if metres is not None and str(length).strip().endswith("m"):
                out[str(port)] = (str(key), metres)
    return out


def port_speed(db: Tables, port: str) -> int | None:
    """The port's speed in Mb/s, or None when PORT does not say."""
    row = _rows(db, "PORT").get(port)
    return _int(row.get("speed")) if isinstance(row, Mapping) else None


def port_mtu(db: Tables, port: str) -> int:
    row = _rows(db, "PORT").get(port)
    mtu = _int(row.get("mtu")) if isinstance(row, Mapping) else None
    return mtu or DEFAULT_MTU


def limit(profile: Profile, pool: Pool | None, sharing: int = 1) -> int:
    """Bytes a buffer of `profile` holds before it is full when `sharing` buffers of the pool fill at once
    (the module's model)."""
    shared = pool.shared if pool is not None else 0
    if profile.static_th is not None:
        extra = profile.static_th if pool is None else min(profile.static_th, shared)
    elif profile.dynamic_th is not None:
        alpha = 2.0 ** profile.dynamic_th
        extra = int(shared * alpha / (1 + max(1, sharing) * alpha))
    else:
        extra = 0
    return profile.size + extra
