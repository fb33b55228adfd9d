"""SONiC's counter commands over SSH on a running lab: `show interfaces counters` counts what the kernel
forwarded (each port's RX_OK grows after pings to the neighbour on it), `portstat -j` says the same,
and the queue and PFC commands print what SONiC prints for counters the switch does not keep.

Every change is polled for (the flex counter poller writes COUNTERS_DB once a second)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
from labtools import running_lab, twin_json, until

from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis

pytestmark = pytest.mark.needs_root
MINI = "tests/integration/data/mini.yaml"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab(MINI, "ctr", check_clean=True) as name:
        yield twin_json("status", "--name", name)


def ssh_run(lab: dict[str, Any], command: str, node: str = "leaf1") -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `ssh admin@switch COMMAND`."""
    t = next(n for n in lab["nodes"] if n["name"] == node)["ssh"]
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(t["host"], port=t["port"], username=t["username"], password=t["password"], look_for_keys=False,
                   allow_agent=False, timeout=30)
    try:
        _, out, err = client.exec_command(command, timeout=60)
        text, errors = out.read().decode(), err.read().decode()
        return out.channel.recv_exit_status(), text, errors
    finally:
        client.close()


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


def test_queue_and_pfc_counters_the_switch_does_not_keep(lab: dict[str, Any]) -> None:
    # no COUNTERS_QUEUE_NAME_MAP: SONiC's queuestat finds no queue and prints no table
    assert ssh_run(lab, "show queue counters") == (0, "", "")
    status, out, _ = ssh_run(lab, "show pfc counters")
    rx, tx = out.split("\n\n")
    assert status == 0 and rx.splitlines()[0].split()[:3] == ["Port", "Rx", "PFC0"]
    assert all(line.split()[1:] == ["N/A"] * 8 for line in rx.splitlines()[2:] + tx.splitlines()[2:])
    status, _, err = ssh_run(lab, "sudo portstat -c")
    assert status == 1 and "no clear commands" in err
