"""Each switch keeps SONiC's redis databases, and its daemons keep them and the switch in step."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import leftovers, netns_exec, running_lab, twin, until


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab("tests/integration/data/mini.yaml", "db") as name:
        yield name


def _redis(lab: str, node: str, *args: str) -> str:
    return netns_exec(lab, node, "redis-cli", *args).stdout.strip()


def _running(lab: str, node: str) -> str:
    return subprocess.run(["vtysh", "--vty_socket", f"/run/twin/{lab}/nodes/{node}", "-c", "show running-config"],
                          capture_output=True, text=True).stdout


def test_config_db_is_loaded_and_sonic_db_cli_works_inside_the_switch(lab: str) -> None:
    out = twin("exec", "--name", lab, "leaf1", "--", "sonic-db-cli", "CONFIG_DB", "hgetall", "PORT|Ethernet128").stdout
    assert out.startswith("{") and "'mtu': '9100'" in out and "'admin_status': 'up'" in out
    assert _redis(lab, "leaf1", "-n", "4", "get", "CONFIG_DB_INITIALIZED") == "1"
    assert _redis(lab, "leaf1", "-n", "4", "hget", "DEVICE_METADATA|localhost", "hostname") == "leaf1"
    saved = json.loads(Path(f"/run/twin/{lab}/nodes/leaf1/config_db.json").read_text())
    assert _redis(lab, "leaf1", "-n", "4", "dbsize") == str(sum(len(rows) for rows in saved.values()) + 1)


def test_state_is_written_by_the_producers(lab: str) -> None:
    assert until(lambda: _redis(lab, "leaf1", "-n", "6", "hget", "NEIGH_STATE_TABLE|10.0.0.64", "state")
                  == "Established")
    assert _redis(lab, "leaf1", "-n", "6", "hget", "PORT_TABLE|Ethernet128", "netdev_oper_status") == "up"
    assert _redis(lab, "leaf1", "-n", "0", "hget", "PORT_TABLE:Ethernet128", "oper_status") == "up"
    hops = _redis(lab, "leaf1", "-n", "0", "hget", "ROUTE_TABLE:10.1.4.2", "nexthop")  # leaf2's loopback
    assert len(hops.split(",")) == 2
    assert _redis(lab, "leaf1", "-n", "0", "exists", "ROUTE_TABLE:10.0.0.64/31") == "0"  # connected: not from zebra
    oid = _redis(lab, "leaf1", "-n", "2", "hget", "COUNTERS_PORT_NAME_MAP", "Ethernet128")
    assert until(lambda: int(_redis(lab, "leaf1", "-n", "2", "hget", f"COUNTERS:{oid}",
                                     "SAI_PORT_STAT_IF_IN_OCTETS") or 0) > 0)


def _neighbor(lab: str, switch: str, peer: str) -> tuple[str, str]:
    """(address, local port) of `switch`'s session with `peer`, from the lab's plan."""
    plan = json.loads(Path(f"/run/twin/{lab}/plan.json").read_text())
    node = next(n for n in plan["nodes"] if n["name"] == switch)
    nb = next(n for n in node["neighbors"] if n["name"] == peer)
    return nb["ip"], nb["iface"]


def test_a_config_db_write_reprograms_frr_and_the_kernel(lab: str) -> None:
    ip, port = _neighbor(lab, "leaf2", "spine2")
    _redis(lab, "leaf2", "-n", "4", "hset", f"BGP_NEIGHBOR|default|{ip}", "name", "spine2-via-redis")
    assert until(lambda: f"neighbor {ip} description spine2-via-redis" in _running(lab, "leaf2"))
    _redis(lab, "leaf2", "-n", "4", "hset", f"PORT|{port}", "admin_status", "down")
    try:
        assert until(lambda: _redis(lab, "leaf2", "-n", "6", "hget", f"PORT_TABLE|{port}", "admin_status")
                      == "down")
        assert "state DOWN" in netns_exec(lab, "leaf2", "ip", "link", "show", port).stdout
        assert until(lambda: _redis(lab, "leaf2", "-n", "6", "hget", f"NEIGH_STATE_TABLE|{ip}", "state")
                      != "Established")
    finally:
        _redis(lab, "leaf2", "-n", "4", "hset", f"PORT|{port}", "admin_status", "up")
    assert until(lambda: _redis(lab, "leaf2", "-n", "6", "hget", f"NEIGH_STATE_TABLE|{ip}", "state")
                  == "Established", timeout=30)


def test_config_save_writes_config_db_json(lab: str) -> None:
    _redis(lab, "spine1", "-n", "4", "hset", "DEVICE_METADATA|localhost", "location", "row-1")
    twin("exec", "--name", lab, "spine1", "--", "config", "save", "-y")
    saved = json.loads(Path(f"/run/twin/{lab}/nodes/spine1/config_db.json").read_text())
    assert saved["DEVICE_METADATA"]["localhost"]["location"] == "row-1"


def test_down_leaves_no_database_behind() -> None:
    with running_lab("tests/integration/data/mini.yaml", "dbd") as name:
        inside = subprocess.run(["ip", "netns", "pids", f"tw.{name}.leaf1"], capture_output=True, text=True)
        pids = [p for p in inside.stdout.split() if Path(f"/proc/{p}/comm").read_text().strip() == "redis-server"]
        assert len(pids) == 1
    assert leftovers(name) == []
    assert not Path(f"/proc/{pids[0]}").exists()


