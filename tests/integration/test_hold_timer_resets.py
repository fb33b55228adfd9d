"""A session whose hold timer expired before the lab was judged is what the health poll counts and
bgpd names, as `twin up` notes it (twin.checks.bgp_resets): read from real bgpds, so FRR's own field
names and reasons are held. The keepalives are stopped by an nftables drop in leaf1's namespace."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from labtools import netns_exec, twin, twin_json, unique

from twin.checks.bgp_resets import reset_reasons, resets_note
from twin.checks.health import wait_healthy
from twin.host.rundir import node_dir
from twin.lab.running import RunningLab
from twin.switch.frr.frr_vty import ask_json


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    name = unique("rs")
    try:
        assert twin_json("up", "labs/default.yaml", "--name", name, timeout=300)["healthy"]
        yield name
    finally:
        twin("down", "--name", name, check=False)


def _nft(lab: str, script: str) -> None:
    done = netns_exec(lab, "leaf1", "nft", script)
    assert done.returncode == 0, done.stderr


def test_an_expired_hold_timer_is_counted_at_both_ends_and_named(lab: str) -> None:
    running = RunningLab.load(lab)
    assert wait_healthy(running, 60, lambda h: None).resets == {}   # a bring-up with no reset notes none
    neighbors = ask_json(node_dir(lab, "leaf1"), "bgpd", "show bgp neighbors json")
    spine_ip = sorted(neighbors)[0]
    spine, hold_ms = neighbors[spine_ip]["hostname"], neighbors[spine_ip]["bgpTimerHoldTimeMsecs"]
    _nft(lab, "add table inet twin_hold_test; "
              "add chain inet twin_hold_test inp { type filter hook input priority 0; }; "
              f"add rule inet twin_hold_test inp ip saddr {spine_ip} tcp sport 179 drop; "
              f"add rule inet twin_hold_test inp ip saddr {spine_ip} tcp dport 179 drop")
    try:
        time.sleep(hold_ms / 1000 + 4)   # the hold time, and then some for the expiry to be acted on
    finally:
        _nft(lab, "delete table inet twin_hold_test")
    health = wait_healthy(running, 120, lambda h: None)
    assert health.healthy
    assert health.resets == {"leaf1": 1, spine: 1}
    reasons = reset_reasons(running, health.resets)
    assert sum(reasons.values()) == 2 and any(r.startswith("Hold Timer Expired") for r in reasons), reasons
    note = resets_note(health.resets, health.bgp["total"], reasons)
    assert note.startswith("2 of 64 BGP session ends, on 2 switches") and "this machine's load" in note
