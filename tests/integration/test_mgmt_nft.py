"""The management ports' connection limits (twin.switch.access.mgmt_nft): in each switch's namespace
and nowhere else, replaced whole when applied again, a switch whose namespace is gone reported
without keeping the others from theirs, and containers' switches left to their own images."""

from __future__ import annotations

import json
import subprocess

import pytest
from labtools import unique

from twin.model.agent import AgentSwitch
from twin.switch.access import mgmt_nft

pytestmark = pytest.mark.needs_root


def _tables(netns: str | None) -> list[str]:
    argv = ["nft", "-j", "list", "tables"]
    if netns is not None:
        argv = ["ip", "netns", "exec", netns, *argv]
    out = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    return [f"{t['table']['family']} {t['table']['name']}" for t in out["nftables"] if "table" in t]


def _ruleset(netns: str) -> str:
    return subprocess.run(["ip", "netns", "exec", netns, "nft", "list", "table", "inet", mgmt_nft.TABLE],
                          capture_output=True, text=True, check=True).stdout


def test_the_limits_land_in_the_switches_namespaces_only(two_netns: tuple[str, str]) -> None:
    ns, other = two_netns
    host_before = _tables(None)
    applied = mgmt_nft.apply([AgentSwitch(name="leaf1", netns=ns)], [8080, 22])
    assert applied.limited == ["leaf1"] and applied.failed == []
    assert _tables(ns) == [f"inet {mgmt_nft.TABLE}"]
    assert _tables(other) == [] and _tables(None) == host_before
    rules = _ruleset(ns)
    assert "dport { 22, 8080 }" in rules and f"ct count over {mgmt_nft.CONNS}" in rules


def test_applied_again_the_table_is_replaced_whole(two_netns: tuple[str, str]) -> None:
    ns, _ = two_netns
    assert mgmt_nft.apply([AgentSwitch(name="leaf1", netns=ns)], [8080]).failed == []
    assert mgmt_nft.apply([AgentSwitch(name="leaf1", netns=ns)], [9339, 22]).failed == []
    rules = _ruleset(ns)
    assert _tables(ns) == [f"inet {mgmt_nft.TABLE}"]
    assert "8080" not in rules and "dport { 22, 9339 }" in rules


def test_switches_in_containers_or_sonic_images_are_left_alone(two_netns: tuple[str, str]) -> None:
    ns, _ = two_netns
    applied = mgmt_nft.apply([AgentSwitch(name="vs1", netns=None),
                              AgentSwitch(name="vs2", netns=ns, backend="sonic-redis")], [8080])
    assert applied.own == 0
    assert _tables(ns) == []


def test_a_namespace_that_is_gone_is_reported_and_the_others_get_the_table(two_netns: tuple[str, str]) -> None:
    ns, _ = two_netns
    applied = mgmt_nft.apply([AgentSwitch(name="gone", netns=unique("tw-nft-gone-")),
                              AgentSwitch(name="leaf1", netns=ns)], [8080])
    assert len(applied.failed) == 1 and applied.failed[0].startswith("gone: ")
    assert applied.limited == ["leaf1"] and applied.own == 2
    assert _tables(ns) == [f"inet {mgmt_nft.TABLE}"]

