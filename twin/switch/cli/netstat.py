"""How SONiC's counter commands write numbers (sonic-utilities utilities_common/netstat.py, read, not copied).

Counters are decimal strings as COUNTERS_DB holds them, or "N/A" when the switch has no such counter; rates
are floats (COUNTERS_DB `RATES:<oid>`) or "N/A". portstat, queuestat and pfcstat print through these.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

STATUS_NA = "N/A"
Rate = float | str   # a RATES field as portstat holds it: a float, or STATUS_NA


def ns_diff(new: str, old: str, raw: bool = False) -> str:
    """`new - old` with thousands separators; never below 0 unless `raw`; N/A when `new` is."""
    if new == STATUS_NA:
        return STATUS_NA
    delta = int(new) - int(0 if old == STATUS_NA else old)
    return f"{delta if raw else max(0, delta):,}"


def format_number_with_comma(text: str, raw: bool = False) -> str:
    """A decimal string with thousands separators; anything else as it is (`raw` also takes a sign)."""
    if raw and text.startswith("-") and text[1:].isdecimal():
        return f"{int(text):,}"
    return f"{int(text):,}" if text.isdecimal() else text


def format_brate(rate: Rate) -> str:
    """Bytes a second: "2000.00 MB/s", "204.80 KB/s", "0.00 B/s"."""
    if rate == STATUS_NA:
        return STATUS_NA
    value = float(rate)
    if value > 1000 * 1000 * 10:
        return f"{value / 1000 / 1000.0:.2f} MB/s"
    if value > 1000 * 10:
        return f"{value / 1000.0:.2f} KB/s"
    return f"{value:.2f} B/s"


def format_prate(rate: Rate) -> str:
    """Packets a second: "247000.00/s"."""
    return STATUS_NA if rate == STATUS_NA else f"{float(rate):.2f}/s"


def format_util(brate: Rate, port_speed: int | str) -> str:
    """Bytes a second as a share of the port's speed (Mb/s)."""
    if brate == STATUS_NA or port_speed == STATUS_NA:
        return STATUS_NA
    return f"{float(brate) / (float(port_speed) * 1000 * 1000 / 8.0) * 100:.2f}%"


def format_util_directly(util: Rate) -> str:
    return STATUS_NA if util == STATUS_NA else f"{float(util):.2f}%"


def format_fec_ber(rate: Rate) -> str:
    return STATUS_NA if rate == STATUS_NA else f"{float(rate):.2e}"


def format_fec_flr(rate: Rate) -> str:
    if rate == STATUS_NA:
        return STATUS_NA
    return "0" if rate == 0 else f"{float(rate):.2e}"


def format_fec_flr_predicted(flr: Rate, r_squared: Rate) -> str:
    """The predicted frame loss ratio with its fit's R² as a percentage."""
    if flr == STATUS_NA:
        return STATUS_NA
    if flr == 0:
        return "0"
    return f"{float(flr):.2e} ({float(r_squared) * 100:.0f}%)"


def table_as_json(table: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Rows keyed by their first cell, each a mapping of the other headers to its cells."""
    doc = {row[0]: {header[i]: row[i] for i in range(1, len(header))} for row in table}
    return json.dumps(doc, indent=4, sort_keys=True)
