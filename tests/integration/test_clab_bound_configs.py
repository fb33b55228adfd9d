"""A containerlab lab whose sonic-vs switches bind their own config_db.json, run on the netns runtime.

data/clab-bound/bound.clab.yml: sw1 and sw2 boot their own classic (bgpcfgd) configs, bound at
/etc/sonic/config_db.json as SONiC users bind them (a /31 between them, each a VLAN with an SVI
for its host, eBGP over the /31); h1 and h2 address themselves with `exec:` lines. twin must run
the files as they are, plan nothing of its own for those switches, and judge the lab by the
addresses the nodes really have.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import DATA, leftovers, netns_exec, twin, twin_json, unique

LAB = DATA / "clab-bound" / "bound.clab.yml"


@pytest.fixture(scope="module")
def bound_lab() -> Iterator[tuple[str, Any]]:
    """The lab brought up under a unique name (its `up --json`); `twin down` whatever happens."""
    name = unique("cb")
    try:
        yield name, twin_json("up", str(LAB), "--name", name, check=False, timeout=300)
    finally:
        twin("down", "--name", name, check=False)
        assert not leftovers(name), f"teardown left {leftovers(name)}"


def test_the_lab_comes_up_healthy_on_the_configs_own_sessions(bound_lab: tuple[str, Any]) -> None:
    _, up = bound_lab
    assert up["healthy"], up
    assert up["bgp"] == {"established": 2, "total": 2}


def test_hosts_reach_each_other_over_the_switches_own_addresses(bound_lab: tuple[str, Any]) -> None:
    name, _ = bound_lab
    for host, target in (("h1", "192.168.2.2"), ("h2", "192.168.1.2")):
        proc = twin("exec", host, "--name", name, "--", "ping", "-c", "2", "-W", "2", target, check=False)
        assert proc.returncode == 0, f"{host} -> {target}:\n{proc.stdout}\n{proc.stderr}"


def test_switches_run_the_bound_files_not_twins_plan(bound_lab: tuple[str, Any]) -> None:
    name, _ = bound_lab
    for switch, port_address in (("sw1", "10.0.0.0/31"), ("sw2", "10.0.0.1/31")):
        own = json.loads((LAB.parent / switch / "config_db.json").read_text())
        running = json.loads(Path(f"/run/twin/{name}/nodes/{switch}/config_db.json").read_text())
        for table in ("BGP_NEIGHBOR", "INTERFACE", "LOOPBACK_INTERFACE", "VLAN", "VLAN_MEMBER", "VLAN_INTERFACE"):
            assert running.get(table) == own[table], f"{switch} {table}"
        assert running["DEVICE_METADATA"]["localhost"]["bgp_asn"] == own["DEVICE_METADATA"]["localhost"]["bgp_asn"]
        addrs = netns_exec(name, switch, "ip", "-4", "-o", "addr", "show", "dev", "Ethernet0").stdout
        assert port_address in addrs, addrs
    h1 = netns_exec(name, "h1", "ip", "-4", "-o", "addr", "show", "dev", "eth1").stdout
    assert "192.168.1.2/24" in h1 and "10.2." not in h1, h1  # its exec line's address, none of twin's pool
