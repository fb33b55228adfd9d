"""Speeds and ratios as engineers write them ("400G", "1.6T", "3:1"), read and printed."""

from __future__ import annotations

import math
import re

_SPEED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GT])(?:b(?:/s|ps)?)?\s*$", re.IGNORECASE)
_RATIO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?::\s*(\d+(?:\.\d+)?))?\s*$")


def parse_speed(text: str) -> int:
    """Gb/s from "400G", "400Gb/s", "1.6T" or "800"; ValueError (its message says what is accepted) otherwise."""
    plain = text.strip()
    if plain.isdigit():
        gbps = float(plain)
    else:
        m = _SPEED.match(text)
        if not m:
            raise ValueError(f"'{text}' is not a link speed: write it as 100G, 400G, 800G or 1.6T")
        gbps = float(m.group(1)) * (1000 if m.group(2).upper() == "T" else 1)
    if gbps <= 0 or gbps != int(gbps):
        raise ValueError(f"'{text}' is not a whole number of Gb/s: write it as 100G, 400G, 800G or 1.6T")
    return int(gbps)


def parse_ratio(text: str) -> float:
    """Oversubscription down:up from "1:1", "3:1", "1.5:1" or "2"; at least 1 (1:1 is non-blocking)."""
    m = _RATIO.match(text)
    if not m:
        raise ValueError(f"'{text}' is not an oversubscription ratio: write it as 1:1, 2:1 or 3:1 (down:up)")
    down, up = float(m.group(1)), float(m.group(2) or 1)
    if up == 0 or down / up < 1:
        raise ValueError(f"'{text}' gives the leaves more uplink than downlink bandwidth: use 1:1 or more "
                         "(down:up, 1:1 is non-blocking)")
    return down / up


def speed_text(gbps: float) -> str:
    """400 -> "400G", 1600 -> "1.6T", 12.5 -> "12.5G"."""
    if gbps >= 1000 and gbps % 100 == 0:
        return f"{gbps / 1000:g}T"
    return f"{gbps:g}G"


def ratio_text(ratio: float) -> str:
    """1.0 -> "1:1", 3.0 -> "3:1", 1.3333 -> "1.33:1"."""
    return f"{round(ratio, 2):g}:1"


def tbps(gbps: float) -> float:
    """Gb/s as Tb/s, rounded to 0.1 Gb/s so sums of 400G links print exactly."""
    return round(gbps / 1000, 4)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def divisors(n: int) -> list[int]:
    """The divisors of n > 0, ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})
