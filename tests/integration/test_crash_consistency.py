"""A switch is crash-consistent: the gNMI agent SIGKILLed in the middle of a stream of Sets, then
`twin agent restart`, leaves every switch's FRR running what its CONFIG_DB renders and its kernel
holding what CONFIG_DB says, whatever the kill interrupted; and FRR changed behind the agent's back
makes `twin verify` fail, naming the line and the CONFIG_DB field behind it."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from labtools import netns_exec, running_lab, twin, twin_json, until
from pygnmi.client import gNMIclient

from twin.checks.collect_frr import frr_config_facts
from twin.host.rundir import lab_dir, node_dir
from twin.lab.running import RunningLab
from twin.switch.frr.frr_drift import describe, drift
from twin.switch.frr.leftover_writers import leftover_writers

CONFIG = "/sonic-db:CONFIG_DB/localhost/"
LEAF, NEIGHBOR, IP, PORT = "leaf1", "default|10.0.0.64", "10.0.0.64", "Ethernet0"
TRIALS = 10


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "cc") as name:
        yield {"name": name, "status": twin_json("status", "--name", name)}


def _client(lab: dict[str, Any]) -> gNMIclient:
    target = dict(next(n for n in lab["status"]["nodes"] if n["name"] == LEAF)["gnmi"])
    return gNMIclient(**target, gnmi_timeout=20)


def _stream_sets(lab: dict[str, Any], stop: threading.Event, done: list[int]) -> None:
    """Sets toggling the neighbor's admin_status and the port's MTU together, one after the other,
    until the agent dies (or `stop`)."""
    try:
        with _client(lab) as gc:
            for i in range(10_000):
                if stop.is_set():
                    return
                gc.set(update=[(f"{CONFIG}BGP_NEIGHBOR/{NEIGHBOR}/admin_status", json.dumps("down" if i % 2 else "up")),
                               (f"{CONFIG}PORT/{PORT}/mtu", json.dumps("9000" if i % 2 else "9100"))],
                       encoding="json_ietf")
                done.append(i)
    except Exception:
        return  # the agent was killed


def _differences(lab: str) -> list[str]:
    """Where leaf1's FRR and kernel differ from its CONFIG_DB (and config_db.json from CONFIG_DB)."""
    facts = frr_config_facts(RunningLab.load(lab), LEAF)
    assert facts.get("running") is not None, facts
    config = facts["config_db"]
    found = [describe(d, config) for d in drift(facts["rendered"], facts["running"])]
    # and read by a second way, not frr_drift's: bgpd's own running config has the neighbor's shutdown
    # line exactly when CONFIG_DB says admin_status down
    bgpd = netns_exec(lab, LEAF, "vtysh", "--vty_socket", str(node_dir(lab, LEAF)), "-c", "show running-config")
    shut = f" neighbor {IP} shutdown" in bgpd.stdout.splitlines()
    if shut != (config["BGP_NEIGHBOR"][NEIGHBOR].get("admin_status") == "down"):
        found.append(f"BGP_NEIGHBOR|{NEIGHBOR} admin_status={config['BGP_NEIGHBOR'][NEIGHBOR].get('admin_status')} "
                     f"but bgpd {'has' if shut else 'lacks'} 'neighbor {IP} shutdown'")
    link = json.loads(netns_exec(lab, LEAF, "ip", "-j", "link", "show", PORT).stdout)[0]
    if str(link["mtu"]) != config["PORT"][PORT]["mtu"]:
        found.append(f"PORT|{PORT} mtu={config['PORT'][PORT]['mtu']} but the kernel has mtu {link['mtu']}")
    saved = json.loads((node_dir(lab, LEAF) / "config_db.json").read_text())
    for table, key, field in (("BGP_NEIGHBOR", NEIGHBOR, "admin_status"), ("PORT", PORT, "mtu")):
        if saved[table][key].get(field) != config[table][key].get(field):
            found.append(f"config_db.json {table}|{key} {field}={saved[table][key].get(field)} but CONFIG_DB "
                         f"holds {config[table][key].get(field)}")
    return found


def _programming(lab: str) -> bool:
    """Whether leaf1 is being programmed: a vtysh or `ip -n` the agent started is running."""
    return bool(leftover_writers({str(node_dir(lab, LEAF))}, {f"tw.{lab}.{LEAF}"}))


def _kill_during_sets(lab: dict[str, Any], delay: float | None) -> int:
    """Stream Sets, SIGKILL the agent `delay` seconds after the first two went through (None: as
    soon as it is seen programming FRR or the kernel), restart it; how many Sets had completed."""
    stop, done = threading.Event(), list[int]()
    stream = threading.Thread(target=_stream_sets, args=(lab, stop, done), daemon=True)
    stream.start()
    assert until(lambda: len(done) >= 2, timeout=30), "the Sets do not go through"
    if delay is None:
        assert until(lambda: _programming(lab["name"]), timeout=30, every=0.001), "never seen programming"
    else:
        stop.wait(delay)  # somewhere in a Set: validating, writing CONFIG_DB, programming, saving
    os.kill(int((lab_dir(lab["name"]) / "agent.pid").read_text()), signal.SIGKILL)
    stream.join(timeout=30)
    stop.set()
    twin("agent", "restart", "--name", lab["name"])
    return len(done)


def test_agent_killed_during_a_stream_of_sets_leaves_frr_as_config_db_renders(lab: dict[str, Any]) -> None:
    name = lab["name"]
    rng = random.Random(36)
    # half the kills land while vtysh or ip programs the switch (they live on after the agent), half anywhere
    outcomes = [(_kill_during_sets(lab, None if trial % 2 else rng.uniform(0.0, 0.4)), _differences(name))
                for trial in range(TRIALS)]
    drifted = [(trial, sets, differences) for trial, (sets, differences) in enumerate(outcomes) if differences]
    assert drifted == [], f"after {len(drifted)} of {TRIALS} kills: {drifted}"
    # a Set of the value CONFIG_DB already holds changes nothing, and the other value is programmed
    with _client(lab) as gc:
        for value in ("down", "up"):
            gc.set(update=[(f"{CONFIG}BGP_NEIGHBOR/{NEIGHBOR}/admin_status", json.dumps(value))], encoding="json_ietf")
            assert _differences(name) == []
    assert until(lambda: _established(name), timeout=60)


def _established(lab: str) -> bool:
    out = netns_exec(lab, LEAF, "vtysh", "--vty_socket", str(node_dir(lab, LEAF)), "-c", "show bgp summary json")
    peers = json.loads(out.stdout or "{}").get("ipv4Unicast", {}).get("peers", {})
    return bool(peers) and all(p.get("state") == "Established" for p in peers.values())


def _frr_config_items(lab: str) -> tuple[int, list[dict[str, Any]]]:
    proc = twin("verify", "--name", lab, "--json", check=False)
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    return proc.returncode, checks["frr-config"]["items"]


def test_frr_changed_behind_the_agents_back_fails_verify_naming_it(lab: dict[str, Any]) -> None:
    name = lab["name"]
    vty = str(node_dir(name, LEAF))
    code, items = _frr_config_items(name)
    assert {i["status"] for i in items} == {"success"}, items
    shut = netns_exec(name, LEAF, "vtysh", "--vty_socket", vty, "-c", "configure terminal", "-c", "router bgp 65101",
                      "-c", f"neighbor {IP} shutdown", "-c", "address-family ipv4 unicast",
                      "-c", "network 10.77.0.0/24")
    assert shut.returncode == 0, shut.stdout + shut.stderr
    try:
        code, items = _frr_config_items(name)
        assert code == 1
        failures = [(i["subject"], i["message"]) for i in items if i["status"] == "failure"]
        assert failures == [
            (LEAF, f"BGP_NEIGHBOR|{NEIGHBOR} admin_status=up but FRR has 'neighbor {IP} shutdown' "
                   "(in 'router bgp 65101')"),
            (LEAF, "FRR has 'network 10.77.0.0/24' (in 'router bgp 65101 > address-family ipv4 unicast'), "
                   "which CONFIG_DB does not render")]
    finally:
        twin("agent", "restart", "--name", name)   # a restarted agent converges FRR on CONFIG_DB
    code, items = _frr_config_items(name)
    assert {i["status"] for i in items} == {"success"}, items
