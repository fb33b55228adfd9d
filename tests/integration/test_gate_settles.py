"""The gate judges a change after it has taken effect, says what it did, and a drill does not start on a
broken fabric. A 2 x 2 lab whose file lists no drills: nothing but the change's own effect can fail it.

A deny-all inbound route-map takes effect only when bgpd's route-map delay-timer fires (5 s): judged at
the moment its Set returned, as rehearse used to, the fabric still looked healthy and it passed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import clos_lab_file, netns_exec, running_lab, twin, twin_json, until

pytestmark = pytest.mark.needs_root


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("gate")
    lab_file = clos_lab_file(folder, "spines: 2, leaves: 2, servers_per_leaf: 1")
    with running_lab(lab_file, "gs", check_clean=True) as name:
        yield name


def rehearse(lab: str, change: Path, text: str) -> tuple[int, dict[str, Any]]:
    change.write_text(text)
    proc = twin("rehearse", str(change), "--name", lab, "--json", check=False, timeout=300)
    return proc.returncode, json.loads(proc.stdout)


def effect(report: dict[str, Any], switch: str) -> dict[str, Any]:
    return next(e for e in report["effects"] if e["switch"] == switch)


def test_a_deny_all_inbound_policy_fails_rehearse_names_leaf1_and_is_rolled_back(lab: str, tmp_path: Path) -> None:
    rc, report = rehearse(lab, tmp_path / "deny.yaml",
                          "leaf1:\n  ROUTE_MAP:\n    FROM_BGP_PEER_V4|100: {route_operation: deny}\n")
    assert rc == 1, report
    assert report["stopped_at"] == "apply leaf1" and report["rolled_back"]
    settle = report["settles"]["applying to leaf1"]
    assert settle["settled"] and settle["frr_delay_ms"] == 5000 and settle["settle_ms"] >= 5000
    verify = next(r for r in report["results"] if r["name"] == "verify applying to leaf1")
    failed = [i["subject"] for i in verify["items"] if i["status"] == "failure"]
    assert failed and all("leaf1" in s or "server1" in s or "server2" in s for s in failed), failed
    leaf1 = effect(report, "leaf1")
    assert "bgpd: route-map FROM_BGP_PEER_V4 deny 100" in leaf1["frr_added"]
    lost = {c["prefix"] for c in leaf1["fib"] if not c["after"]}
    assert "10.1.4.2/32" in lost, leaf1["fib"]   # leaf2's loopback, learned from both spines
    assert not leaf1["no_effect"]
    # rolled back: the route-map permits again and the fabric is whole
    route = netns_exec(lab, "leaf1", "ip", "-4", "route", "show", "10.1.4.2/32").stdout
    assert route.count("nexthop") == 2, route
    assert twin("verify", "--name", lab, check=False).returncode == 0


def test_a_timer_change_every_neighbor_overrides_is_reported_as_no_effect(lab: str, tmp_path: Path) -> None:
    rc, report = rehearse(lab, tmp_path / "timers.yaml",
                          "leaf2:\n  BGP_GLOBALS:\n    default: {keepalive: \"20\", holdtime: \"60\"}\n")
    assert rc == 0, report
    leaf2 = effect(report, "leaf2")
    assert leaf2["no_effect"] and leaf2["fib"] == [] and leaf2["sessions"] == []
    assert "bgpd: router bgp 65102 > timers bgp 20 60" in leaf2["frr_added"]
    assert any("keepalive" in f for f in leaf2["fields"])
    assert [e["switch"] for e in report["effects"]] == ["leaf2"]   # nothing else moved
    markdown = twin("rehearse", str(tmp_path / "timers.yaml"), "--name", lab, check=False).stdout
    assert "the change equals the running configs" in markdown   # it stayed: the change was live


def test_a_drill_refuses_to_start_on_a_broken_fabric_and_says_what_is_broken(lab: str) -> None:
    summary = json.loads(twin("exec", "--name", lab, "leaf2", "--", "vtysh", "-c", "show bgp summary json").stdout)
    peer = sorted(summary["ipv4Unicast"]["peers"])[0]

    def neighbor(line: str) -> None:
        twin("exec", "--name", lab, "leaf2", "--", "vtysh", "-c", "configure terminal", "-c",
             f"router bgp {summary['ipv4Unicast']['as']}", "-c", line)

    neighbor(f"neighbor {peer} shutdown")
    try:
        proc = twin("drill", "spine-loss", "--target", "spine1", "--name", lab, check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "is not healthy" in proc.stderr and "leaf2" in proc.stderr and peer in proc.stderr, proc.stderr
    finally:
        neighbor(f"no neighbor {peer} shutdown")
    assert until(lambda: twin_json("status", "--name", lab, check=False)["healthy"], timeout=60)


def test_a_table_twin_does_not_emulate_fails_verify_and_names_itself(lab: str) -> None:
    """A VLAN (this kernel has no 8021q): stored in CONFIG_DB as SONiC stores it, logged by the agent, and
    `twin verify` fails naming it, until it is gone."""
    from twin.gnmi.client import SwitchClient
    from twin.host.rundir import lab_dir
    from twin.lab.running import RunningLab

    with SwitchClient.of(RunningLab.load(lab), "leaf1") as sw:
        config = sw.get("/sonic-db:CONFIG_DB/localhost/")
        assert isinstance(config, dict)
        sw.replace_config({**config, "VLAN": {"Vlan100": {"vlanid": "100"}}})
    try:
        doc = json.loads(twin("verify", "--name", lab, "--json", check=False).stdout)
        check = next(c for c in doc["checks"] if c["name"] == "not-emulated")
        assert check["status"] == "failure"
        assert [(i["subject"], i["message"].split(":")[0]) for i in check["items"] if i["status"] == "failure"] == [
            ("leaf1", "VLAN|Vlan100")]
        assert "VLAN|Vlan100: not emulated" in (lab_dir(lab) / "agent.log").read_text()
    finally:
        with SwitchClient.of(RunningLab.load(lab), "leaf1") as sw:
            config = sw.get("/sonic-db:CONFIG_DB/localhost/")
            assert isinstance(config, dict)
            config.pop("VLAN", None)
            sw.replace_config(config)
    assert twin("verify", "--name", lab, check=False).returncode == 0
