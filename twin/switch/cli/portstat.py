"""SONiC's portstat (`show interfaces counters`) over a switch's COUNTERS_DB (sonic-utilities
scripts/portstat and utilities_common/portstat.py, read, not copied).

Each port of COUNTERS_PORT_NAME_MAP, in natural order, with its counters from `COUNTERS:<oid>` summed
into portstat's buckets (RX_OK is IF_IN_UCAST_PKTS + IF_IN_NON_UCAST_PKTS; a bucket one of whose
counters the switch does not keep is N/A), its rates from `RATES:<oid>` (N/A when there are none), its
state from APPL_DB and its speed from STATE_DB or APPL_DB. With no saved snapshot (this shell has no
`sonic-clear counters`), the counters are shown as they are; `-p N` shows what changed in N seconds.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from twin.switch.cli import netstat
from twin.switch.cli.counters_db import Hashes, get, port_name_map, port_speed, port_state
from twin.switch.cli.netstat import STATUS_NA, Rate, ns_diff
from twin.switch.cli.show_format import Cell, natural_key, simple_table

# portstat's counter buckets (NStats), in its order: name -> the SAI counters summed into it
BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rx_ok", ("SAI_PORT_STAT_IF_IN_UCAST_PKTS", "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS")),
    ("rx_err", ("SAI_PORT_STAT_IF_IN_ERRORS",)),
    ("rx_drop", ("SAI_PORT_STAT_IF_IN_DISCARDS",)),
    ("rx_ovr", ("SAI_PORT_STAT_ETHER_RX_OVERSIZE_PKTS",)),
    ("tx_ok", ("SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS")),
    ("tx_err", ("SAI_PORT_STAT_IF_OUT_ERRORS",)),
    ("tx_drop", ("SAI_PORT_STAT_IF_OUT_DISCARDS",)),
    ("tx_ovr", ("SAI_PORT_STAT_ETHER_TX_OVERSIZE_PKTS",)),
    ("rx_byt", ("SAI_PORT_STAT_IF_IN_OCTETS",)),
    ("tx_byt", ("SAI_PORT_STAT_IF_OUT_OCTETS",)),
    *((f"rx_{size}", (f"SAI_PORT_STAT_ETHER_IN_PKTS_{sai}_OCTETS",)) for size, sai in (
        ("64", "64"), ("65_127", "65_TO_127"), ("128_255", "128_TO_255"), ("256_511", "256_TO_511"),
        ("512_1023", "512_TO_1023"), ("1024_1518", "1024_TO_1518"), ("1519_2047", "1519_TO_2047"),
        ("2048_4095", "2048_TO_4095"), ("4096_9216", "4096_TO_9216"), ("9217_16383", "9217_TO_16383"))),
    ("rx_uca", ("SAI_PORT_STAT_IF_IN_UCAST_PKTS",)),
    ("rx_mca", ("SAI_PORT_STAT_IF_IN_MULTICAST_PKTS",)),
    ("rx_bca", ("SAI_PORT_STAT_IF_IN_BROADCAST_PKTS",)),
    ("rx_all", ("SAI_PORT_STAT_IF_IN_UCAST_PKTS", "SAI_PORT_STAT_IF_IN_MULTICAST_PKTS",
                "SAI_PORT_STAT_IF_IN_BROADCAST_PKTS")),
    *((f"tx_{size}", (f"SAI_PORT_STAT_ETHER_OUT_PKTS_{sai}_OCTETS",)) for size, sai in (
        ("64", "64"), ("65_127", "65_TO_127"), ("128_255", "128_TO_255"), ("256_511", "256_TO_511"),
        ("512_1023", "512_TO_1023"), ("1024_1518", "1024_TO_1518"), ("1519_2047", "1519_TO_2047"),
        ("2048_4095", "2048_TO_4095"), ("4096_9216", "4096_TO_9216"), ("9217_16383", "9217_TO_16383"))),
    ("tx_uca", ("SAI_PORT_STAT_IF_OUT_UCAST_PKTS",)),
    ("tx_mca", ("SAI_PORT_STAT_IF_OUT_MULTICAST_PKTS",)),
    ("tx_bca", ("SAI_PORT_STAT_IF_OUT_BROADCAST_PKTS",)),
    ("tx_all", ("SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_MULTICAST_PKTS",
                "SAI_PORT_STAT_IF_OUT_BROADCAST_PKTS")),
    ("rx_jbr", ("SAI_PORT_STAT_ETHER_STATS_JABBERS",)),
    ("rx_frag", ("SAI_PORT_STAT_ETHER_STATS_FRAGMENTS",)),
    ("rx_usize", ("SAI_PORT_STAT_ETHER_STATS_UNDERSIZE_PKTS",)),
    ("rx_ovrrun", ("SAI_PORT_STAT_IP_IN_RECEIVES",)),
    ("fec_corr", ("SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES",)),
    ("fec_uncorr", ("SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",)),
    ("fec_symbol_err", ("SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS",)),
    ("wred_grn_drp_pkt", ("SAI_PORT_STAT_GREEN_WRED_DROPPED_PACKETS",)),
    ("wred_ylw_drp_pkt", ("SAI_PORT_STAT_YELLOW_WRED_DROPPED_PACKETS",)),
    ("wred_red_drp_pkt", ("SAI_PORT_STAT_RED_WRED_DROPPED_PACKETS",)),
    ("wred_tot_drp_pkt", ("SAI_PORT_STAT_WRED_DROPPED_PACKETS",)),
    ("trim", ("SAI_PORT_STAT_TRIM_PACKETS",)),
    ("trim_sent", ("SAI_PORT_STAT_TX_TRIM_PACKETS",)),
    ("trim_drop", ("SAI_PORT_STAT_DROPPED_TRIM_PACKETS",)),
    *((f"fec_bin{i}", (f"SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S{i}",)) for i in range(16)),
)
# RATES:<oid> fields (port_rates.lua and the FEC monitor write them) -> portstat's names
RATES = (("RX_BPS", "rx_bps"), ("RX_PPS", "rx_pps"), ("RX_UTIL", "rx_util"), ("TX_BPS", "tx_bps"),
         ("TX_PPS", "tx_pps"), ("TX_UTIL", "tx_util"), ("FEC_PRE_BER", "fec_pre_ber"),
         ("FEC_POST_BER", "fec_post_ber"), ("FEC_PRE_BER_MAX", "fec_pre_ber_max"), ("FEC_FLR", "fec_flr"),
         ("FEC_FLR_PREDICTED", "fec_flr_predicted"), ("FEC_FLR_R_SQUARED", "fec_flr_r_squared"),
         ("FEC_MAX_T", "fec_max_t"))

HEADERS = {
    "all": ("IFACE", "STATE", "RX_OK", "RX_BPS", "RX_PPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK",
            "TX_BPS", "TX_PPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR", "TRIM", "TRIM_TX", "TRIM_DRP"),
    "std": ("IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
            "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"),
    "errors": ("IFACE", "STATE", "RX_ERR", "RX_DRP", "RX_OVR", "TX_ERR", "TX_DRP", "TX_OVR"),
    "fec": ("IFACE", "STATE", "FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER", "FEC_POST_BER",
            "FEC_PRE_BER_MAX", "FLR(O)", "FLR(P) (Accuracy)", "FEC_MAX_T"),
    "fec_hist": ("IFACE", *(f"BIN{i}" for i in range(16))),
    "rates": ("IFACE", "STATE", "RX_OK", "RX_BPS", "RX_PPS", "RX_UTIL", "TX_OK", "TX_BPS", "TX_PPS", "TX_UTIL"),
    "trim": ("IFACE", "STATE", "TRIM_PKTS", "TRIM_TX_PKTS", "TRIM_DRP_PKTS"),
}
VIEWS = tuple(HEADERS)
# which buckets a row's being non-zero is judged by (--nonzero)
NONZERO = {
    "all": ("rx_ok", "tx_ok", "rx_err", "tx_err", "rx_drop", "tx_drop", "rx_ovr", "tx_ovr"),
    "std": ("rx_ok", "tx_ok", "rx_err", "tx_err", "rx_drop", "tx_drop", "rx_ovr", "tx_ovr"),
    "errors": ("rx_err", "tx_err", "rx_drop", "tx_drop", "rx_ovr", "tx_ovr"),
    "fec": ("fec_corr", "fec_uncorr", "fec_symbol_err"),
    "fec_hist": (),
    "rates": ("rx_ok", "tx_ok"),
    "trim": ("trim",),
}
WRED = (("WRED Green Dropped Packets", "wred_grn_drp_pkt", "WRED_ECN_PORT_WRED_GREEN_DROP_COUNTER"),
        ("WRED Yellow Dropped Packets", "wred_ylw_drp_pkt", "WRED_ECN_PORT_WRED_YELLOW_DROP_COUNTER"),
        ("WRED Red Dropped Packets", "wred_red_drp_pkt", "WRED_ECN_PORT_WRED_RED_DROP_COUNTER"),
        ("WRED Total Dropped Packets", "wred_tot_drp_pkt", "WRED_ECN_PORT_WRED_TOTAL_DROP_COUNTER"))
SIZES = ("64", "65-127", "128-255", "256-511", "512-1023", "1024-1518", "1519-2047", "2048-4095", "4096-9216",
         "9217-16383")
NO_NONZERO = "No non-zero statistics found for the specified interfaces."

Counters = dict[str, str]   # bucket -> decimal string or N/A
Rates = dict[str, Rate]     # portstat's rate name -> float or N/A


@dataclass
class Snapshot:
    """What portstat reads at one moment: each port's buckets and rates."""

    time: datetime.datetime
    counters: dict[str, Counters] = field(default_factory=dict)
    rates: dict[str, Rates] = field(default_factory=dict)


@dataclass(frozen=True)
class Options:
    view: str = "std"                 # one of VIEWS
    interfaces: tuple[str, ...] = ()  # -i, expanded (parse_interfaces); () is every port
    json: bool = False
    nonzero: bool = False
    detail: bool = False              # -l with -i: the per-size listing
    period: int = 0                   # -p: seconds between two readings


def buckets(fields: Mapping[str, str]) -> Counters:
    """A port's COUNTERS:<oid> fields summed into portstat's buckets."""
    out: Counters = {}
    for name, sai in BUCKETS:
        if any(s not in fields for s in sai):
            out[name] = STATUS_NA
        else:
            out[name] = str(sum(int(float(fields[s])) for s in sai))
    return out


def rates(fields: Mapping[str, str]) -> Rates:
    return {name: float(fields[key]) if key in fields else STATUS_NA for key, name in RATES}


def collect(data: Hashes, now: Callable[[], datetime.datetime] = datetime.datetime.now) -> Snapshot:
    snap = Snapshot(now())
    names = port_name_map(data)
    for port in sorted(names, key=natural_key):
        snap.counters[port] = buckets(data.hgetall("COUNTERS_DB", f"COUNTERS:{names[port]}"))
        snap.rates[port] = rates(data.hgetall("COUNTERS_DB", f"RATES:{names[port]}"))
    return snap


def parse_interfaces(text: str | None) -> tuple[str, ...]:
    """utilities_common.intf_filter: `Ethernet0,Ethernet4-8,PortChannel1-2,Ethernet-BP0-3`, ranges by
    the number after the name; ValueError with SONiC's message for a range it refuses."""
    out: list[str] = []
    for part in text.split(",") if text is not None else []:
        if part.startswith("Ethernet-BP"):
            prefix, rest = "Ethernet-BP", part.removeprefix("Ethernet-BP")
            if "-" not in rest:
                out.append(part)
                continue
        elif "-" in part:
            found = [p for p in ("Ethernet", "PortChannel") if part.startswith(p)]
            if not found:
                raise ValueError(f"Invalid interface range '{part}'. A range must start with 'Ethernet' or "
                                 "'PortChannel'.")
            prefix, rest = found[0], part.removeprefix(found[0])
        else:
            out.append(part)
            continue
        start, end = rest.split("-")[0], rest.split("-")[1]
        if not start.isdigit() or not end.isdigit():
            raise ValueError(f"Invalid interface range '{part}'. Expected a range like '{prefix}0-3'.")
        if int(start) > int(end):
            raise ValueError(f"Invalid interface range '{part}'. The start of the range must not be greater "
                             "than the end.")
        out.extend(f"{prefix}{i}" for i in range(int(start), int(end) + 1))
    return tuple(out)


def _non_zero(value: str) -> bool:
    return value != STATUS_NA and int(value.replace(",", "")) != 0


def _util(rate: Rate, util: Rate, speed: int | str) -> str:
    return netstat.format_util(rate, speed) if util == STATUS_NA else netstat.format_util_directly(util)


def _row(view: str, port: str, state: str, d: Callable[..., str], r: Rates, speed: int | str) -> tuple[Cell, ...]:
    """One port's row of `view`; `d(bucket)` is the bucket's change, `r` its rates."""
    if view in ("all", "std", "rates"):
        rx = [d("rx_ok"), netstat.format_brate(r["rx_bps"])]
        tx = [d("tx_ok"), netstat.format_brate(r["tx_bps"])]
        if view != "std":
            rx.append(netstat.format_prate(r["rx_pps"]))
            tx.append(netstat.format_prate(r["tx_pps"]))
        rx.append(_util(r["rx_bps"], r["rx_util"], speed))
        tx.append(_util(r["tx_bps"], r["tx_util"], speed))
        if view == "rates":
            return (port, state, *rx, *tx)
        rx += [d("rx_err"), d("rx_drop"), d("rx_ovr")]
        tx += [d("tx_err"), d("tx_drop"), d("tx_ovr")]
        trim = (d("trim"), d("trim_sent"), d("trim_drop", raw=True)) if view == "all" else ()
        return (port, state, *rx, *tx, *trim)
    if view == "errors":
        return (port, state, d("rx_err"), d("rx_drop"), d("rx_ovr"), d("tx_err"), d("tx_drop"), d("tx_ovr"))
    if view == "fec":
        return (port, state, d("fec_corr"), d("fec_uncorr"), d("fec_symbol_err"),
                netstat.format_fec_ber(r["fec_pre_ber"]), netstat.format_fec_ber(r["fec_post_ber"]),
                netstat.format_fec_ber(r["fec_pre_ber_max"]), netstat.format_fec_flr(r["fec_flr"]),
                netstat.format_fec_flr_predicted(r["fec_flr_predicted"], r["fec_flr_r_squared"]), r["fec_max_t"])
    if view == "fec_hist":
        return (port, *(d(f"fec_bin{i}") for i in range(16)))
    return (port, state, d("trim"), d("trim_sent"), d("trim_drop", raw=True))


def table(data: Hashes, new: Snapshot, old: Snapshot | None, options: Options) -> str:
    """portstat's cnstat_diff_print: the table of `options.view` (or JSON), `new` less `old`."""
    rows: list[tuple[Cell, ...]] = []
    for port, counters in new.counters.items():
        if options.interfaces and port not in options.interfaces:
            continue
        before = old.counters.get(port) if old is not None else None

        def d(name: str, raw: bool = False, now: Counters = counters, was: Counters | None = before) -> str:
            return ns_diff(now[name], was[name] if was is not None else "0", raw)

        if options.nonzero and not any(_non_zero(d(b)) for b in NONZERO[options.view]) \
                and options.view != "fec_hist":
            continue
        rows.append(_row(options.view, port, port_state(data, port), d, new.rates[port], port_speed(data, port)))
    header = HEADERS[options.view]
    if not rows:
        return f"{NO_NONZERO}\n" if options.nonzero else ""
    if options.json:
        return netstat.table_as_json(rows, header) + "\n"
    return simple_table(header, rows, stralign="right") + "\n"


def detail(data: Hashes, new: Snapshot, old: Snapshot | None, ports: Sequence[str]) -> str:
    """portstat -l -i PORTS: one port's counters by packet size and kind, line by line."""
    capable = {cap for _, _, cap in WRED
               if get(data, "STATE_DB", f"PORT_COUNTER_CAPABILITIES|{cap}", "isSupported") == "true"}
    lines: list[str] = []
    for port, now in new.counters.items():
        if port not in ports:
            continue
        was = old.counters.get(port) if old is not None else None

        def line(label: str, name: str, raw: bool = False, now: Counters = now, was: Counters | None = was) -> str:
            return f"{label.ljust(47, '.')} {ns_diff(now[name], was[name] if was is not None else '0', raw)}"

        key = ("64", "65_127", "128_255", "256_511", "512_1023", "1024_1518", "1519_2047", "2048_4095",
               "4096_9216", "9217_16383")
        lines += [line(f"Packets Received {s} Octets", f"rx_{k}") for s, k in zip(SIZES, key, strict=True)]
        lines += ["", line("Total Packets Received Without Errors", "rx_all"),
                  line("Unicast Packets Received", "rx_uca"), line("Multicast Packets Received", "rx_mca"),
                  line("Broadcast Packets Received", "rx_bca"), "", line("Jabbers Received", "rx_jbr"),
                  line("Fragments Received", "rx_frag"), line("Undersize Received", "rx_usize"),
                  line("Overruns Received", "rx_ovrrun"), ""]
        lines += [line(f"Packets Transmitted {s} Octets", f"tx_{k}") for s, k in zip(SIZES, key, strict=True)]
        lines += ["", line("Total Packets Transmitted Successfully", "tx_all"),
                  line("Unicast Packets Transmitted", "tx_uca"), line("Multicast Packets Transmitted", "tx_mca"),
                  line("Broadcast Packets Transmitted", "tx_bca")]
        if capable:
            lines += ["", *(line(label, name) for label, name, cap in WRED if cap in capable), ""]
        lines += [line("Trimmed Packets", "trim"), line("Trimmed Sent Packets", "trim_sent"),
                  line("Trimmed Dropped Packets", "trim_drop", raw=True), "",
                  f"{'Time Since Counters Last Cleared'.ljust(47, '.')} {old.time if old is not None else None}"]
    return "".join(f"{text}\n" for text in lines)


def portstat(data: Hashes, options: Options, sleep: Callable[[float], None] | None = None,
             now: Callable[[], datetime.datetime] = datetime.datetime.now) -> str:
    """What `portstat` prints with `options` (no saved snapshot: the counters as they are, or their
    change over `options.period` seconds)."""
    first = collect(data, now)
    if options.period:
        (sleep or time.sleep)(options.period)
        head = f"The rates are calculated within {options.period} seconds period\n"
        second = collect(data, now)
        if options.interfaces and options.detail:
            return head + detail(data, second, first, options.interfaces)
        return head + table(data, second, first, options)
    if options.interfaces and options.detail:
        return detail(data, first, None, options.interfaces)
    return table(data, first, None, options)
