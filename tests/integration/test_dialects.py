"""Configs in either SONiC dialect, pushed to a running lab, route as SONiC renders them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import classic, netns_exec, push_folder, running_lab, switch_configs, twin, twin_json, until

ConfigDb = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab("tests/integration/data/mini.yaml", "dl") as name:
        yield name








def _summary(lab: str, node: str) -> dict[str, Any]:
    out = twin("exec", "--name", lab, node, "--", "vtysh", "-c", "show bgp summary json").stdout
    peers: dict[str, Any] = json.loads(out).get("ipv4Unicast", {}).get("peers", {})
    return peers


def _bgp_routes(lab: str, node: str) -> list[dict[str, Any]]:
    routes: list[dict[str, Any]] = json.loads(netns_exec(lab, node, "ip", "-j", "-4", "route", "show",
                                                         "proto", "bgp").stdout or "[]")
    return routes


def _established(lab: str, node: str) -> bool:
    peers = _summary(lab, node)
    return bool(peers) and all(p["state"] == "Established" for p in peers.values())


def test_classic_configs_announce_loopbacks_over_every_spine(lab: str, tmp_path: Path) -> None:
    generated = switch_configs(lab)
    try:
        push_folder(lab, tmp_path / "classic",
                    {name: classic(db, routing_mode="separated") for name, db in generated.items()})
        assert until(lambda: _established(lab, "leaf1"))
        loopback = generated["leaf2"]["LOOPBACK_INTERFACE"]
        leaf2_lo = next(k.split("|")[1].split("/")[0] for k in loopback if "|" in k)

        def ecmp_to_leaf2() -> bool:
            route = next((r for r in _bgp_routes(lab, "leaf1") if r["dst"] == leaf2_lo), None)
            return route is not None and len(route.get("nexthops", [])) == 2

        assert until(ecmp_to_leaf2), "bgpcfgd announces Loopback0: leaf2's loopback over both spines"
        running = twin("exec", "--name", lab, "leaf1", "--", "vtysh", "-c", "show running-config").stdout
        assert "neighbor PEER_V4 peer-group" in running and " bfd" not in running
        verified = json.loads(twin("verify", "--name", lab, "--json", check=False).stdout)
        by_name = {c["name"]: c for c in verified["checks"]}
        assert "bfd-sessions" not in by_name, "the classic configs ask for no BFD"
        assert by_name["bgp-sessions"]["status"] == "success"
        assert by_name["ecmp-width"]["status"] == "success"
        # the servers sit on routed ports, which bgpcfgd does not announce: the lab's intent fails
        assert by_name["server-reachability"]["status"] == "failure"
    finally:
        push_folder(lab, tmp_path / "back", generated)
    assert until(lambda: twin_json("verify", "--name", lab, check=False)["passed"], timeout=60)


def test_frrcfgd_config_without_activation_carries_nothing(lab: str, tmp_path: Path) -> None:
    """Without BGP_PEER_GROUP_AF, frrcfgd activates no address family (`no bgp default ipv4-unicast`):
    FRR keeps such a peer Idle ("not active for any AFI/SAFI"), on SONiC's FRR as on the twin."""
    generated = switch_configs(lab)
    broken = {name: {t: rows for t, rows in db.items() if t != "BGP_PEER_GROUP_AF"} for name, db in generated.items()}
    try:
        push_folder(lab, tmp_path / "noaf", broken)
        assert until(lambda: not _bgp_routes(lab, "leaf1"))
        time.sleep(2)
        assert _bgp_routes(lab, "leaf1") == []
        assert {p["state"] for p in _summary(lab, "leaf1").values()} <= {"Idle", "Connect", "Active"}
        running = twin("exec", "--name", lab, "leaf1", "--", "vtysh", "-c", "show running-config").stdout
        assert "neighbor PEER_V4 activate" not in running and "no bgp default ipv4-unicast" in running
        verified = json.loads(twin("verify", "--name", lab, "--json", check=False).stdout)
        by_name = {c["name"]: c for c in verified["checks"]}
        assert by_name["bgp-sessions"]["status"] == "failure"
        assert by_name["ecmp-width"]["status"] == "failure"
    finally:
        push_folder(lab, tmp_path / "back", generated)
    assert until(lambda: twin_json("verify", "--name", lab, check=False)["passed"], timeout=60)
