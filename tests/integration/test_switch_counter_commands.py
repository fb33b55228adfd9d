"""SONiC's counter commands over SSH on a running lab: `show interfaces counters` counts what the kernel
forwarded (each port's RX_OK grows after pings to the neighbour on it), `portstat -j` says the same,
`show queue counters` lists each port's queues (SONiC-VS's ten unicast and ten multicast), and `show pfc
counters` the PFC frames no port ever sends or receives, 0.

Every change is polled for (the flex counter poller writes COUNTERS_DB once a second)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import queue_maps_written, running_lab, ssh_run, twin_json, until

from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis

pytestmark = pytest.mark.needs_root
MINI = "tests/integration/data/mini.yaml"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab(MINI, "ctr", check_clean=True) as name:
        queue_maps_written(name)
        yield twin_json("status", "--name", name)


def peers(lab: dict[str, Any], node: str = "leaf1") -> dict[str, str]:
    """Port -> the neighbour's address on it (the other end of the port's /31)."""
    config = SonicRedis(unix_socket=socket_path(Path(f"/run/twin/{lab['lab']}/nodes/{node}"))).get_config()
    out = {}
    for key in config.get("INTERFACE", {}):
        port, _, address = key.partition("|")
        if address and ipaddress.ip_interface(address).version == 4:
            mine = ipaddress.ip_interface(address)
            out[port] = str(next(h for h in mine.network if h != mine.ip)) if mine.network.prefixlen == 31 \
                else str(next(h for h in mine.network.hosts() if h != mine.ip))
    return out


def rx_ok(lab: dict[str, Any]) -> dict[str, int]:
    """Each port's RX_OK as `show interfaces counters` prints it."""
    status, out, err = ssh_run(lab, "show interfaces counters")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["IFACE", "STATE", "RX_OK"] and set(lines[1]) <= {"-", " "}
    return {line.split()[0]: int(line.split()[2].replace(",", "")) for line in lines[2:]}


def test_each_port_counts_the_pings_it_received(lab: dict[str, Any]) -> None:
    neighbours = peers(lab)
    before = rx_ok(lab)
    assert set(neighbours) <= set(before) and len(neighbours) >= 3   # two spines and a server
    for port, address in neighbours.items():
        status, _, err = ssh_run(lab, f"ping -c 5 -i 0.2 -W 1 {address}")
        assert status == 0, f"{port}: {err}"
    assert until(lambda: all(rx_ok(lab)[p] >= before[p] + 5 for p in neighbours), timeout=20), (before, rx_ok(lab))
    status, out, _ = ssh_run(lab, "portstat -j")
    doc = json.loads(out)
    assert status == 0 and all(int(doc[p]["RX_OK"].replace(",", "")) >= before[p] + 5 for p in neighbours)
    assert all(doc[p]["STATE"] == "U" for p in neighbours)


def test_queue_and_pfc_counters(lab: dict[str, Any]) -> None:
    status, out, _ = ssh_run(lab, "show queue counters Ethernet128")     # leaf1's port to spine1
    rows = [line.split() for line in out.splitlines() if line.startswith("Ethernet128")]
    assert status == 0 and [r[1] for r in rows] == [*(f"UC{q}" for q in range(10)), *(f"MC{q}" for q in range(10, 20))]
    assert all(r[5] == "N/A" for r in rows)                  # the kernel counts no dropped bytes
    assert int(rows[6][2].replace(",", "")) > 0              # BGP and BFD (DSCP 48) leave by queue 6
    status, out, _ = ssh_run(lab, "show pfc counters")
    rx, tx = out.split("\n\n")
    assert status == 0 and rx.splitlines()[0].split()[:3] == ["Port", "Rx", "PFC0"]
    assert all(line.split()[1:] == ["0"] * 8 for line in rx.splitlines()[2:] + tx.splitlines()[2:])
    status, _, err = ssh_run(lab, "sudo portstat -c")
    assert status == 1 and "no clear commands" in err
