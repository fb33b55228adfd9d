"""SONiC's queuestat (`show queue counters`) over a switch's COUNTERS_DB (sonic-utilities scripts/queuestat,
read, not copied).

Each port of COUNTERS_PORT_NAME_MAP (COUNTERS_SYSTEM_PORT_NAME_MAP for VOQs), in natural order, with its
queues: the queues of COUNTERS_QUEUE_NAME_MAP (COUNTERS_VOQ_NAME_MAP) whose COUNTERS_QUEUE_PORT_MAP entry
is the port's oid, named by COUNTERS_QUEUE_TYPE_MAP and COUNTERS_QUEUE_INDEX_MAP (UC0, MC10, ALL20), their
packets, bytes and drops from `COUNTERS:<queue oid>` (N/A for a counter the switch does not keep).

A switch whose COUNTERS_DB has no queue maps has no queues to show: on SONiC the connector's `get_all` of
the missing map is empty (twin.switch.cli.counters_db), so queuestat prints no table and exits 0 (`--json`
prints each port with the time alone). A queue whose port, index or type is missing stops it as SONiC's
does ("Port is not available! oid:..."). No snapshot is ever saved here (no `sonic-clear queuecounters`).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from twin.switch.cli.counters_db import Hashes, get
from twin.switch.cli.netstat import STATUS_NA
from twin.switch.cli.show_format import Cell, natural_key, simple_table

COUNTERS = ("SAI_QUEUE_STAT_PACKETS", "SAI_QUEUE_STAT_BYTES", "SAI_QUEUE_STAT_DROPPED_PACKETS",
            "SAI_QUEUE_STAT_DROPPED_BYTES")
TRIM = ("SAI_QUEUE_STAT_TRIM_PACKETS", "SAI_QUEUE_STAT_TX_TRIM_PACKETS", "SAI_QUEUE_STAT_DROPPED_TRIM_PACKETS")
VOQ = ("SAI_QUEUE_STAT_CREDIT_WD_DELETED_PACKETS",)
TYPES = {"SAI_QUEUE_TYPE_MULTICAST": "MC", "SAI_QUEUE_TYPE_UNICAST": "UC", "SAI_QUEUE_TYPE_UNICAST_VOQ": "VOQ",
         "SAI_QUEUE_TYPE_ALL": "ALL"}
STD = ("Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes")
ALL = (*STD, "Trim/pkts", "TrimSent/pkts", "TrimDrop/pkts")
TRIM_HEADER = ("Port", "TxQ", "Trim/pkts", "TrimSent/pkts", "TrimDrop/pkts")
VOQ_HEADER = ("Port", "Voq", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes", "Credit-WD-Del/pkts")
JSON_STD = ("totalpacket", "totalbytes", "droppacket", "dropbytes")
JSON_TRIM = ("trimpacket", "trimsentpacket", "trimdroppacket")


@dataclass(frozen=True)
class Options:
    port: str | None = None   # -p / show queue counters PORT
    all: bool = False         # -a: with the trimming counters
    trim: bool = False        # -T: the trimming counters alone
    voq: bool = False         # -V
    nonzero: bool = False
    json: bool = False


class Stop(Exception):
    """queuestat printed `text` and exited with status 1."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass(frozen=True)
class Queue:
    name: str                 # its tag: UC0, MC10, VOQ3
    counters: dict[str, str]  # SAI counter -> decimal string or N/A


def _queues(data: Hashes, oids: Mapping[str, str], counters: tuple[str, ...]) -> list[Queue]:
    """The port's queues (COUNTERS_QUEUE_NAME_MAP key -> oid), in natural order of their keys."""
    out = []
    for key in sorted(oids, key=natural_key):
        oid = oids[key]
        index = get(data, "COUNTERS_DB", "COUNTERS_QUEUE_INDEX_MAP", oid)
        if index is None:
            raise Stop(f"Queue index is not available! {oid}\n")
        kind = get(data, "COUNTERS_DB", "COUNTERS_QUEUE_TYPE_MAP", oid)
        if kind is None:
            raise Stop(f"Queue Type is not available! {oid}\n")
        if kind not in TYPES:
            raise Stop(f"Queue Type is invalid: {oid} {kind}\n")
        fields = data.hgetall("COUNTERS_DB", f"COUNTERS:{oid}")
        out.append(Queue(TYPES[kind] + index,
                         {c: str(int(fields[c])) if c in fields else STATUS_NA for c in counters}))
    return out


def port_queues(data: Hashes, voq: bool) -> dict[str, dict[str, str]]:
    """Port -> {queue key: oid}, every port of the port map, each with the queues its map gives it."""
    ports = data.hgetall("COUNTERS_DB", "COUNTERS_SYSTEM_PORT_NAME_MAP" if voq else "COUNTERS_PORT_NAME_MAP")
    by_oid = {oid: port for port, oid in ports.items()}
    out: dict[str, dict[str, str]] = {port: {} for port in ports}
    queues = data.hgetall("COUNTERS_DB", "COUNTERS_VOQ_NAME_MAP" if voq else "COUNTERS_QUEUE_NAME_MAP")
    for key, oid in queues.items():
        owner = get(data, "COUNTERS_DB", "COUNTERS_QUEUE_PORT_MAP", oid)
        if owner is None:
            raise Stop(f"Port is not available! {oid}\n")
        if owner not in by_oid:   # queuestat fails on the lookup (a traceback ending so)
            raise Stop(f"KeyError: '{owner}'\n")
        out[by_oid[owner]][key] = oid
    return out


def _columns(options: Options) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(the SAI counters read, those shown, the table's header, their names in JSON)."""
    if options.voq:
        return (*COUNTERS, *VOQ), (*COUNTERS, *VOQ), VOQ_HEADER, (*JSON_STD, "creditWDPkts")
    if options.all:
        return (*COUNTERS, *TRIM), (*COUNTERS, *TRIM), ALL, (*JSON_STD, *JSON_TRIM)
    if options.trim:
        return (*COUNTERS, *TRIM), TRIM, TRIM_HEADER, JSON_TRIM
    return (*COUNTERS, *TRIM), COUNTERS, STD, JSON_STD


def _rows(port: str, queues: list[Queue], shown: tuple[str, ...], nonzero: bool) -> list[tuple[Cell, ...]]:
    rows: list[tuple[Cell, ...]] = []
    for queue in queues:
        values = [queue.counters[c] for c in shown]
        if not nonzero or any(v != "0" for v in values):
            rows.append((port, queue.name, *values))
    return rows


def queuestat(data: Hashes, options: Options,
              now: Callable[[], datetime.datetime] = datetime.datetime.now) -> tuple[str, int]:
    """(what `queuestat` prints with `options`, its exit status)."""
    counters, shown, header, names = _columns(options)
    try:
        ports = port_queues(data, options.voq)
        if options.port is not None and options.port not in ports:
            return f"Port doesn't exist! {options.port}\n", 1
        chosen = [options.port] if options.port is not None else sorted(ports, key=natural_key)
        text, doc = "", {}
        for port in chosen:
            rows = _rows(port, _queues(data, ports[port], counters), shown, options.nonzero)
            if options.json:
                entry: dict[str, Any] = {"time": now().isoformat()}
                entry.update({str(row[1]): dict(zip(names, row[2:], strict=True)) for row in rows})
                doc[port] = entry
            elif rows:
                text += f"For namespace :\n{simple_table(header, rows, stralign='right')}\n\n"
    except Stop as stop:
        return stop.text, 1
    if options.json:
        return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n", 0
    return text, 0
