"""bgpcfgd's other managers on a running lab: classic (bgpcfgd) configs holding BGP_MONITORS, BGP_PEER_RANGE,
BGP_AGGREGATE_ADDRESS, PREFIX_LIST and STATIC_ROUTE are pushed to a 2 x 2 lab; FRR runs what they render
(frr-config), nothing is left not emulated, the static route reaches leaf1's kernel through staticd and
leaf2 learns it over BGP (redistributed with tag 1), and a route changed by a push and deleted over gNMI
follows in both kernels.
A BGP_PEER_RANGE written as config_db.json lists ip_range gets its policies and no listen range, as on SONiC."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import classic, netns_exec, push_folder, running_lab, switch_configs, twin, twin_json, until
from pygnmi.client import gNMIclient

pytestmark = pytest.mark.needs_root
ConfigDb = dict[str, dict[str, Any]]
STATIC, LATER = "10.98.0.0/24", "10.98.1.0/24"


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab("tests/integration/data/mini.yaml", "bm") as name:
        yield name








def _kernel(lab: str, node: str, proto: str) -> dict[str, list[str]]:
    """The node's kernel routes zebra installed for `proto` (FRR's own numbers, named in its rt_protos.d:
    `ip route show proto static` would ask for the kernel's 4, not zebra's 196)."""
    out = netns_exec(lab, node, "ip", "-4", "-j", "route", "show").stdout
    routes = {}
    for r in json.loads(out or "[]"):
        if r.get("protocol") != proto:
            continue
        hops = [r["gateway"]] if "gateway" in r else [h["gateway"] for h in r.get("nexthops", [])]
        routes[r["dst"]] = hops or [r.get("type", "")]
    return routes


def _client(lab: str, node: str) -> gNMIclient:
    status = twin_json("status", "--name", lab, check=False)  # unhealthy: classic configs leave servers out
    return gNMIclient(**next(n for n in status["nodes"] if n["name"] == node)["gnmi"])


def test_bgpcfgd_managers_run_what_sonic_runs(lab: str, tmp_path: Path) -> None:
    generated = switch_configs(lab)
    configs = {name: classic(db) for name, db in generated.items()}
    leaf1 = configs["leaf1"]
    hop = sorted(leaf1["BGP_NEIGHBOR"])[0]
    leaf1["BGP_MONITORS"] = {"10.20.30.40": {"name": "BGPMonitor", "admin_status": "up"}}
    # ip_range as YANG's leaf-list: stored as `ip_range@`, which bgpcfgd does not read (its policies only)
    leaf1["BGP_PEER_RANGE"] = {"BGPSLBPassive": {"name": "BGPSLBPassive", "ip_range": ["10.255.0.0/25"],
                                                 "peer_asn": "65432"}}
    leaf1["BGP_AGGREGATE_ADDRESS"] = {"10.97.0.0/16": {"summary-only": "true"}}
    leaf1["PREFIX_LIST"] = {"SUPPRESS_PREFIX|10.96.0.0/24": {}}
    leaf1["STATIC_ROUTE"] = {f"default|{STATIC}": {"nexthop": hop}}
    try:
        push_folder(lab, tmp_path / "classic", configs)
        assert until(lambda: _kernel(lab, "leaf1", "static") == {STATIC: [hop]}, timeout=30), \
            _kernel(lab, "leaf1", "static")
        assert until(lambda: STATIC in _kernel(lab, "leaf2", "bgp"), timeout=60), "redistributed with tag 1"
        running = twin("exec", "--name", lab, "leaf1", "--", "vtysh", "-c", "show running-config").stdout
        for line in ("neighbor BGPMON peer-group", "neighbor 10.20.30.40 peer-group BGPMON",
                     "route-map FROM_BGP_SPEAKER permit 10", "aggregate-address 10.97.0.0/16 summary-only",
                     "ip prefix-list SUPPRESS_IPV4_PREFIX seq 5 permit 10.96.0.0/24"):
            assert line in running, line
        assert "listen range" not in running
        verified = json.loads(twin("verify", "--name", lab, "--json", check=False).stdout)
        by_name = {c["name"]: c for c in verified["checks"]}
        assert by_name["frr-config"]["status"] == "success", by_name["frr-config"]
        assert by_name["not-emulated"]["status"] == "success", by_name["not-emulated"]
        changed = copy.deepcopy(configs)   # a change: the route's next hop gone, a blackhole route added
        changed["leaf1"]["STATIC_ROUTE"] = {f"default|{LATER}": {"blackhole": "true"}}
        push_folder(lab, tmp_path / "changed", changed)
        assert until(lambda: _kernel(lab, "leaf1", "static") == {LATER: ["blackhole"]}, timeout=10), \
            _kernel(lab, "leaf1", "static")
        assert until(lambda: STATIC not in _kernel(lab, "leaf2", "bgp") and LATER in _kernel(lab, "leaf2", "bgp"),
                     timeout=30)
        with _client(lab, "leaf1") as gc:   # a push keeps a table twin does not render: the table deleted over gNMI
            gc.set(delete=["/sonic-db:CONFIG_DB/localhost/STATIC_ROUTE"], encoding="json_ietf")
        assert until(lambda: _kernel(lab, "leaf1", "static") == {}, timeout=10), _kernel(lab, "leaf1", "static")
        assert until(lambda: LATER not in _kernel(lab, "leaf2", "bgp"), timeout=30)
    finally:
        push_folder(lab, tmp_path / "back", generated)
    assert until(lambda: twin_json("verify", "--name", lab, check=False)["passed"], timeout=60)
