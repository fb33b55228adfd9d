"""A prefix filter written as frrcfgd reads it (PREFIX_SET, PREFIX, ROUTE_MAP match_prefix_set) removes
exactly the filtered prefix from the switch it is pushed to, and nothing else moves; rolled back (the
clause and the lists removed), the prefix comes back. A 2 x 2 lab without drills."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import clos_lab_file, netns_exec, running_lab, twin

pytestmark = pytest.mark.needs_root
FILTERED = "10.2.0.0/31"   # leaf1's server subnet
FILTER = f"""leaf2:
  PREFIX_SET:
    FABRIC_IN: {{mode: IPv4}}
  PREFIX:
    "FABRIC_IN|10|{FILTERED}|exact": {{action: deny}}
    "FABRIC_IN|20|0.0.0.0/0|0..32": {{action: permit}}
  ROUTE_MAP:
    "FROM_BGP_PEER_V4|100": {{route_operation: permit, match_prefix_set: FABRIC_IN}}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("pfx")
    lab_file = clos_lab_file(folder, "spines: 2, leaves: 2, servers_per_leaf: 1")
    with running_lab(lab_file, "pf", check_clean=True) as name:
        yield name


def _routes(lab: str, node: str) -> set[str]:
    out = netns_exec(lab, node, "ip", "-4", "-j", "route", "show", "proto", "bgp").stdout
    return {r["dst"] for r in json.loads(out or "[]")}


def test_a_prefix_filter_removes_exactly_its_prefix_and_comes_back_when_removed(lab: str, tmp_path: Path) -> None:
    before = {n: _routes(lab, n) for n in ("leaf1", "leaf2", "spine1", "spine2")}
    assert FILTERED in before["leaf2"]
    change = tmp_path / "filter.yaml"
    change.write_text(FILTER)
    proc = twin("rehearse", str(change), "--name", lab, "--json", check=False, timeout=300)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1, report   # leaf2 no longer reaches server1: verify fails, the change is rolled back
    leaf2 = next(e for e in report["effects"] if e["switch"] == "leaf2")
    assert "bgpd: ip prefix-list FABRIC_IN seq 10 deny 10.2.0.0/31" in leaf2["frr_added"], leaf2["frr_added"]
    assert any("match ip address prefix-list FABRIC_IN" in line for line in leaf2["frr_added"])
    assert {c["prefix"] for c in leaf2["fib"] if not c["after"]} == {FILTERED}, leaf2["fib"]
    assert [e["switch"] for e in report["effects"] if e["fib"]] == ["leaf2"]   # no other FIB moved
    # rolled back: the clause and the lists are gone from FRR, and the prefix is back
    running = twin("exec", "--name", lab, "leaf2", "--", "vtysh", "-c", "show running-config").stdout
    assert "FABRIC_IN" not in running, running
    after = {n: _routes(lab, n) for n in before}
    assert after == before
