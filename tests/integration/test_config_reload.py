"""`sudo config reload FILE` in a switch's shell restarts its services as SONiC's does: FRR is rendered
afresh from the new CONFIG_DB, and nothing of the previous config, nor anything FRR was told besides
CONFIG_DB, stays in it. A 2 x 2 lab of its own."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import leftovers, netns_exec, ssh_run, twin, twin_json, unique, until

pytestmark = pytest.mark.needs_root

EXTRA_NETWORK = "10.99.0.0/24"
EXTRA_PEER = "10.9.9.9"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("reload")
    (folder / "fabric.yaml").write_text("name: reload\nkind: clos\nclos: {spines: 2, leaves: 2, servers_per_leaf: 1}\n")
    (folder / "lab.yaml").write_text(f"name: reload\ntopology: {folder / 'fabric.yaml'}\n")
    name = unique("cr")
    try:
        assert twin_json("up", str(folder / "lab.yaml"), "--name", name)["healthy"]
        yield twin_json("status", "--name", name)
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []


def rundir(lab: dict[str, Any], node: str = "leaf1") -> Path:
    return Path(f"/run/twin/{lab['lab']}/nodes/{node}")


def vtysh(lab: dict[str, Any], *commands: str) -> str:
    args = [a for c in commands for a in ("-c", c)]
    return subprocess.run(["vtysh", "--vty_socket", str(rundir(lab)), *args], capture_output=True, text=True,
                          timeout=30).stdout


def bgpd_pid(lab: dict[str, Any]) -> str:
    return (rundir(lab) / "bgpd.pid").read_text().strip()


def established(lab: dict[str, Any]) -> bool:
    peers = json.loads(vtysh(lab, "show bgp summary json") or "{}").get("ipv4Unicast", {}).get("peers", {})
    return bool(peers) and all(p.get("state") == "Established" for p in peers.values())


def test_config_reload_leaves_nothing_of_the_previous_config_in_frr(lab: dict[str, Any]) -> None:
    base = json.loads((rundir(lab) / "config_db.json").read_text())
    asn = base["BGP_GLOBALS"]["default"]["local_asn"]
    extra = json.loads(json.dumps(base))
    extra["BGP_GLOBALS_AF_NETWORK"][f"default|ipv4_unicast|{EXTRA_NETWORK}"] = {}
    extra["BGP_NEIGHBOR"][f"default|{EXTRA_PEER}"] = {"asn": "65199", "name": "gone-after-reload"}
    (rundir(lab) / "extra.json").write_text(json.dumps(extra))
    (rundir(lab) / "base.json").write_text(json.dumps(base))

    status, out, err = ssh_run(lab, "sudo config reload -y /etc/sonic/extra.json", timeout=120)
    assert status == 0, err
    assert "Stopping SONiC target ...\n" in out and "Restarting SONiC target ...\n" in out
    running = vtysh(lab, "show running-config")
    assert f"network {EXTRA_NETWORK}" in running and f"neighbor {EXTRA_PEER} remote-as 65199" in running
    # FRR told something outside CONFIG_DB (as an operator's vtysh would): SONiC's reload drops it too
    vtysh(lab, "configure terminal", f"router bgp {asn}", "address-family ipv4 unicast", "network 10.98.0.0/24")
    assert "network 10.98.0.0/24" in vtysh(lab, "show running-config")
    before = bgpd_pid(lab)

    status, out, err = ssh_run(lab, "sudo config reload -y /etc/sonic/base.json", timeout=120)
    assert status == 0, err
    running = vtysh(lab, "show running-config")
    assert bgpd_pid(lab) != before                       # bgp was restarted, not patched
    for gone in (f"network {EXTRA_NETWORK}", f"neighbor {EXTRA_PEER}", "network 10.98.0.0/24"):
        assert gone not in running, running
    assert until(lambda: established(lab), timeout=60), vtysh(lab, "show bgp summary")
    assert until(lambda: server_reaches(lab, "server1", "server2"), timeout=60, every=0.2)   # the fabric is back


def server_reaches(lab: dict[str, Any], src: str, dst: str) -> bool:
    links = json.loads(netns_exec(lab["lab"], dst, "ip", "-4", "-j", "addr", "show", "eth1").stdout)
    address = links[0]["addr_info"][0]["local"]
    return netns_exec(lab["lab"], src, "ping", "-c1", "-W0.3", address).returncode == 0


def test_config_reload_n_only_writes_config_db(lab: dict[str, Any]) -> None:
    before = bgpd_pid(lab)
    status, out, err = ssh_run(lab, "sudo config reload -y -n /etc/sonic/base.json", timeout=120)
    assert status == 0, err
    assert "SONiC target" not in out and "--write-to-db" in out
    assert bgpd_pid(lab) == before


def test_config_load_minigraph_fails_as_not_emulated(lab: dict[str, Any]) -> None:
    status, out, err = ssh_run(lab, "sudo config load_minigraph -y", timeout=120)
    assert status == 1 and out == ""
    assert err.startswith("config load_minigraph: not emulated")


def test_the_hostname_is_device_metadata_s_in_the_cli(lab: dict[str, Any]) -> None:
    """A hostname written to CONFIG_DB (as a gNMI Set writes it) is at once the shell's and the one vtysh
    prints, as SONiC's hostname-config makes it the system's; never the host machine's."""
    from twin.switch.redis.redis_server import socket_path
    from twin.switch.redis.sonic_redis import SonicRedis

    SonicRedis(unix_socket=socket_path(rundir(lab))).client("CONFIG_DB").hset("DEVICE_METADATA|localhost",
                                                                               "hostname", "tor-a")
    assert ssh_run(lab, "hostname")[1] == "tor-a\n"
    shown = ssh_run(lab, "show runningconfiguration bgp")[1]
    assert "hostname tor-a\n" in shown and f"hostname {os.uname().nodename}\n" not in shown
