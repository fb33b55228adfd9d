"""SONiC's pfcstat (`show pfc counters`) over a switch's COUNTERS_DB (sonic-utilities scripts/pfcstat, read,
not copied).

Two tables, the PFC frames each port of COUNTERS_PORT_NAME_MAP received and sent per priority
(`SAI_PORT_STAT_PFC_<n>_RX_PKTS`, `..._TX_PKTS` of `COUNTERS:<oid>`), N/A for each counter the switch does
not keep; `--history`, the pause transitions and times the PFC watchdog's detect script writes. No snapshot
is ever saved here (no `sonic-clear pfccounters`), so the counters are shown as they are.
"""

from __future__ import annotations

import datetime

from twin.switch.cli.counters_db import Hashes, port_name_map
from twin.switch.cli.netstat import STATUS_NA, format_number_with_comma
from twin.switch.cli.show_format import Cell, natural_key, simple_table

PRIORITIES = range(8)
TITLES = tuple(f"PFC{p}" for p in PRIORITIES)
HISTORY = ("Port", "Priority", "RX Pause Transitions", "Total RX Pause Time US", "Recent RX Pause Time US",
           "Recent RX Pause Timestamp")


def _counts(data: Hashes, rx: bool) -> list[tuple[Cell, ...]]:
    names = port_name_map(data)
    rows: list[tuple[Cell, ...]] = []
    for port in sorted(names, key=natural_key):
        fields = data.hgetall("COUNTERS_DB", f"COUNTERS:{names[port]}")
        way = "RX" if rx else "TX"
        values = [fields.get(f"SAI_PORT_STAT_PFC_{p}_{way}_PKTS") for p in PRIORITIES]
        rows.append((port, *(format_number_with_comma(str(int(v))) if v is not None else STATUS_NA
                             for v in values)))
    return rows


def counters(data: Hashes) -> str:
    """`pfcstat`: the received table, a blank line, the sent table."""
    rx = simple_table(("Port Rx", *TITLES), _counts(data, True), stralign="right")
    tx = simple_table(("Port Tx", *TITLES), _counts(data, False), stralign="right")
    return f"{rx}\n\n{tx}\n"


def _timestamp(text: str) -> str:
    """Microseconds since the epoch as a local date (the text itself when it is not a number)."""
    try:
        return datetime.datetime.fromtimestamp(float(text) / 1_000_000).strftime("%m/%d/%Y, %H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return text


def history(data: Hashes) -> str:
    """`pfcstat --history`: per port and priority, from `COUNTERS:<oid>` (SAI_ or EST_ totals, EST_
    recent ones); a blank row after each port."""
    names = port_name_map(data)
    rows: list[tuple[Cell, ...]] = []
    for port in sorted(names, key=natural_key):
        fields = data.hgetall("COUNTERS_DB", f"COUNTERS:{names[port]}")
        for p, title in zip(PRIORITIES, TITLES, strict=True):
            total = [next((fields[f"{prefix}_PORT_STAT_PFC_{p}_{name}"] for prefix in ("SAI", "EST")
                           if f"{prefix}_PORT_STAT_PFC_{p}_{name}" in fields), STATUS_NA)
                     for name in ("ON2OFF_RX_PKTS", "RX_PAUSE_DURATION_US")]
            recent_time = fields.get(f"EST_PORT_STAT_PFC_{p}_RECENT_PAUSE_TIME_US", STATUS_NA)
            recent_stamp = fields.get(f"EST_PORT_STAT_PFC_{p}_RECENT_PAUSE_TIMESTAMP", STATUS_NA)
            rows.append((port, title, format_number_with_comma(total[0]), format_number_with_comma(total[1]),
                         format_number_with_comma(recent_time), _timestamp(recent_stamp)))
        rows.append(("",) * len(HISTORY))
    return simple_table(HISTORY, rows, stralign="right") + "\n"
