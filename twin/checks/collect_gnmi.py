"""Collect what checks need over gNMI (switches) and, for nodes without an agent, locally."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from ipaddress import ip_address
from typing import Any

from twin.checks.base import Check, Outputs
from twin.checks.collect_local import Job, jobs_of, read_local
from twin.gnmi.client import SwitchClient
from twin.lab.running import RunningLab


def as_bgp_summary(neigh_state: dict[str, Any]) -> dict[str, Any]:
    """STATE_DB NEIGH_STATE_TABLE in the shape of FRR's `show bgp summary json`."""
    return {"ipv4Unicast": {"peers": {ip: {"state": row.get("state")} for ip, row in neigh_state.items()}}}


def host_prefix(key: str) -> str:
    """A ROUTE_TABLE key with its length: fpmsyncd writes host routes without one (libnl's
    nl_addr2str drops a full-length mask: `10.1.4.2`)."""
    try:
        address = ip_address(key)
    except ValueError:
        return key
    return f"{key}/{address.max_prefixlen}"


def as_fib(route_table: dict[str, Any]) -> list[dict[str, Any]]:
    """APPL_DB ROUTE_TABLE (BGP routes) in the shape of `ip -j route`."""
    return [{"dst": host_prefix(prefix), "nexthops": [{"gateway": h} for h in row.get("nexthop", "").split(",") if h]}
            for prefix, row in route_table.items() if row.get("protocol", "bgp") == "bgp"]


# The sources read over gNMI, from the tables SONiC's own producers write; a check needing any other
# source is read locally (twin.checks.collect_local.LOCAL_READERS).
GNMI_READERS: dict[str, Callable[[SwitchClient], Any]] = {
    "bgp_summary": lambda sw: as_bgp_summary(sw.table("STATE_DB", "NEIGH_STATE_TABLE")),
    "fib": lambda sw: as_fib(sw.table("APPL_DB", "ROUTE_TABLE")),
    "bfd_sessions": lambda sw: sw.table("STATE_DB", "BFD_SESSION_TABLE"),
    "port_table": lambda sw: sw.table("STATE_DB", "PORT_TABLE"),
}
GNMI_SOURCES = frozenset(GNMI_READERS)


def running_configs(lab: RunningLab) -> dict[str, dict[str, Any]]:
    """Every switch's CONFIG_DB as it runs now, read over gNMI (what the checks judge configs by)."""
    def one(node: str) -> tuple[str, Any]:
        target = lab.gnmi_target(node)
        if target is None:
            return node, None
        with SwitchClient(node, target) as sw:
            return node, sw.get("/sonic-db:CONFIG_DB/localhost/")

    switches = [n.name for n in lab.state.nodes if n.kind == "switch"]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return {node: db for node, db in pool.map(one, switches) if isinstance(db, dict)}


def collect_gnmi(lab: RunningLab, checks: Iterable[Check[Any]]) -> Outputs:
    """What the checks need: over gNMI from the switches, locally (twin.checks.collect_local) for the rest.
    Decided per node of each check: a link check reads its switch ends' PORT_TABLE over gNMI and its
    server ends' kernel locally."""
    wanted: dict[str, set[str]] = {}
    local: list[Job] = []
    for check in checks:
        for node in check.nodes():
            sources = check.sources(node)
            if set(sources) <= GNMI_SOURCES:
                wanted.setdefault(node, set()).update(sources)
            else:
                local += jobs_of(check, [node])

    def one(node: str) -> tuple[str, dict[str, Any]]:
        target = lab.gnmi_target(node)
        if target is None:
            return node, {}
        with SwitchClient(node, target) as sw:
            return node, {source: GNMI_READERS[source](sw) for source in sorted(wanted[node])}

    outputs: Outputs = read_local(lab, local) if local else {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        for node, values in pool.map(one, sorted(wanted)):
            outputs.setdefault(node, {}).update(values)
    return outputs
