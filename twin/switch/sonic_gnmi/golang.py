"""What sonic-gnmi's Go prints, as both handlers send it: JSON, durations, the sample interval.

- `go_json`: encoding/json.Marshal of a map (keys sorted, no spaces, <, >, &, U+2028/9 escaped).
- `go_unmarshal`: encoding/json.Unmarshal of a Set value (bad UTF-8 and lone surrogates -> U+FFFD).
- `go_duration`: time.Duration.String() (`500ms`, `1s`, `1m30s`).
- `sample_interval_ns`: db_client.go validateSampleInterval (MinSampleInterval is one second).
"""

from __future__ import annotations

import json
from typing import Any

SECOND_NS = 1_000_000_000
MIN_SAMPLE_INTERVAL_NS = SECOND_NS  # db_client.go MinSampleInterval = time.Second


def go_json(value: Any) -> bytes:
    """`value` as Go's json.Marshal writes it."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode()


def go_unmarshal(raw: bytes | str) -> Any:
    """encoding/json.Unmarshal of a Set's value: invalid UTF-8 and lone UTF-16 surrogates (`"\\ud800"`)
    become U+FFFD as Go makes them, instead of failing later where the text is written; nesting
    deeper than Python can follow is Go's "exceeded max depth". json.JSONDecodeError as json."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        value = json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("exceeded max depth", text, 0) from None
    return _replace_surrogates(value)


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def go_duration(ns: int) -> str:
    """Go's time.Duration.String(): `500ms`, `1s`, `1m30s`, `1.5µs`."""
    if ns == 0:
        return "0s"
    sign, u = ("-", -ns) if ns < 0 else ("", ns)
    if u < SECOND_NS:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_frac(u, 3)}µs"
        return f"{sign}{_frac(u, 6)}ms"
    seconds = _frac(u % (60 * SECOND_NS), 9) + "s"
    minutes, hours = u // (60 * SECOND_NS) % 60, u // (3600 * SECOND_NS)
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if u >= 60 * SECOND_NS:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def _frac(value: int, precision: int) -> str:
    """`value / 10**precision` with the fraction's trailing zeros dropped (Go's fmtFrac)."""
    whole, frac = divmod(value, 10 ** precision)
    digits = f"{frac:0{precision}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def sample_interval_ns(sample_interval: int) -> int:
    """validateSampleInterval: 0 means the minimum; below it is a ValueError with sonic-gnmi's
    text (`invalid interval: 500ms. It cannot be less than 1s`). The uint64 is read as Go's int64."""
    requested = sample_interval - (1 << 64) if sample_interval >= 1 << 63 else sample_interval
    if requested == 0:
        return MIN_SAMPLE_INTERVAL_NS
    if requested < MIN_SAMPLE_INTERVAL_NS:
        raise ValueError(f"invalid interval: {go_duration(requested)}. "
                         f"It cannot be less than {go_duration(MIN_SAMPLE_INTERVAL_NS)}")
    return requested
