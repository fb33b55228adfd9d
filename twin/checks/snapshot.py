"""Read a switch as a change's effect is judged by (twin.checks.effect): FRR's running config per
daemon (on its vty sockets), zebra's BGP routes (`show ip route bgp json`), the kernel's BGP routes
and links (netlink, in the switch's namespace) and its BGP sessions. I/O only.

A SONiC image's FRR is programmed by its own daemons and is not read here (no vty sockets of
twin's): its effect is judged by its kernel and sessions alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pyroute2 import IPRoute

from twin.checks.effect import Link, Routes, Session, SwitchSnapshot
from twin.checks.fibwatch import RT_TABLE_MAIN, parse_routes
from twin.host.netns_thread import run_in_netns
from twin.host.rundir import node_dir
from twin.lab.running import RunningLab
from twin.switch.frr.frr_vty import ask_json, running_config_parts

WORKERS = 8
IFF_UP = 0x1


def bgp_summary_rows(rundir: Path) -> dict[str, dict[str, Any]] | None:
    """peer -> its row of `show bgp summary json` (state, pfxRcd, peerUptimeMsec, connectionsEstablished
    ...), of every address family bgpd shows (cheap)."""
    summary = ask_json(rundir, "bgpd", "show bgp summary json")
    if not isinstance(summary, dict):
        return None
    out: dict[str, dict[str, Any]] = {}
    for family in summary.values():
        if isinstance(family, dict):
            for peer, row in (family.get("peers") or {}).items():
                if isinstance(row, dict):
                    out[peer] = row
    return out


def bgp_neighbors(rundir: Path) -> dict[str, Session] | None:
    """peer -> its session as `show bgp neighbors json` describes it: state, configured timers, and
    how many times it was established."""
    neighbors = ask_json(rundir, "bgpd", "show bgp neighbors json")
    if not isinstance(neighbors, dict):
        return None
    out = {}
    for peer, row in neighbors.items():
        if not isinstance(row, dict) or "bgpState" not in row:
            continue
        keepalive = row.get("bgpTimerConfiguredKeepAliveIntervalMsecs")
        hold = row.get("bgpTimerConfiguredHoldTimeMsecs")
        timers = f"{keepalive // 1000}/{hold // 1000} s" if isinstance(keepalive, int) and isinstance(hold, int) else ""
        established = row.get("connectionsEstablished")
        out[peer] = Session(state=str(row["bgpState"]), timers=timers,
                            established=established if isinstance(established, int) else 0)
    return out


def rib_routes(rundir: Path) -> Routes | None:
    """zebra's selected BGP routes: prefix -> the next hops it marked active."""
    table = ask_json(rundir, "zebra", "show ip route bgp json")
    if not isinstance(table, dict):
        return None
    out: Routes = {}
    for prefix, entries in table.items():
        for entry in entries if isinstance(entries, list) else []:
            if entry.get("selected"):
                out[prefix] = frozenset(h.get("ip", h.get("interfaceName", "?"))
                                        for h in entry.get("nexthops", []) if h.get("active"))
    return out


def _kernel(netns: str, names: dict[str, str]) -> tuple[Routes, dict[str, Link]]:
    """The namespace's BGP routes and its links by their SONiC names (`names`: kernel -> SONiC)."""
    def read() -> tuple[Routes, dict[str, Link]]:
        with IPRoute() as ipr:   # made inside the namespace: its socket stays there
            routes = parse_routes(ipr.get_routes(table=RT_TABLE_MAIN))
            addresses: dict[int, set[str]] = {}
            for msg in ipr.get_addr():
                addresses.setdefault(msg["index"], set()).add(f"{msg.get_attr('IFA_ADDRESS')}/{msg['prefixlen']}")
            links = {}
            for msg in ipr.get_links():
                kernel = str(msg.get_attr("IFLA_IFNAME"))
                if kernel == "lo":
                    continue
                links[names.get(kernel, kernel)] = Link(
                    mtu=int(msg.get_attr("IFLA_MTU")), up=bool(msg["flags"] & IFF_UP),
                    addresses=frozenset(addresses.get(msg["index"], ())))
            return routes, links
    return run_in_netns(netns, read)


def snapshot(lab: RunningLab, switch: str, frr: bool = True) -> SwitchSnapshot:
    """One switch now; `frr`: read FRR's running config too (the rest is cheap)."""
    rundir = node_dir(lab.state.lab, switch)
    names = {i.kernel: i.name for i in lab.plan.node(switch).interfaces}
    try:
        fib, links = _kernel(lab.state.node(switch).netns, names)
    except OSError:
        fib, links = None, {}
    return SwitchSnapshot(frr=running_config_parts(rundir) if frr else None, rib=rib_routes(rundir), fib=fib,
                          sessions=bgp_neighbors(rundir), links=links)


def snapshots(lab: RunningLab, switches: Iterable[str], frr: bool = True) -> dict[str, SwitchSnapshot]:
    names = list(switches)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return dict(zip(names, pool.map(lambda s: snapshot(lab, s, frr), names), strict=True))


def frr_configs(lab: RunningLab, switches: Iterable[str]) -> dict[str, dict[str, str] | None]:
    """switch -> FRR's running config per daemon (None where it does not answer)."""
    names = list(switches)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        parts = pool.map(lambda s: running_config_parts(node_dir(lab.state.lab, s)), names)
        return dict(zip(names, parts, strict=True))
