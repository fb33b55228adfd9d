"""Recovering a lab whose processes died: `twin status` and `twin verify` name a SIGKILLed bgpd (or
every FRR daemon of a switch, or the gNMI agent); `twin frr restart` and `twin agent restart` bring
them back from what the switch's config daemon programmed, until the lab is healthy again."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import running_lab, twin, twin_json, until

from twin.host.rundir import lab_dir, node_dir
from twin.switch.agent import RESTARTED


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab("tests/integration/data/mini.yaml", "rc") as name:
        yield name


def _status(lab: str) -> dict[str, Any]:
    doc: dict[str, Any] = twin_json("status", "--name", lab, check=False)
    return doc


def _failures(doc: dict[str, Any], check: str) -> list[str]:
    return [f"{i['subject']}: {i['message']}" for c in doc["checks"] if c["name"] == check
            for i in c["items"] if i["status"] != "success"]


def _pid(path: Path) -> int:
    return int(path.read_text().strip())


def _kill(*pidfiles: Path) -> list[int]:
    pids = [_pid(p) for p in pidfiles]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    assert until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids))
    return pids


def _healthy_and_established(lab: str) -> bool:
    doc = _status(lab)
    return bool(doc["healthy"]) and doc["bgp"]["established"] == doc["bgp"]["total"] > 0


def _bgp_states(lab: str, switch: str) -> dict[str, str]:
    out = twin("exec", "--name", lab, switch, "--", "vtysh", "-c", "show bgp summary json").stdout
    peers = json.loads(out)["ipv4Unicast"]["peers"]
    return {ip: p["state"] for ip, p in peers.items()}


def test_a_killed_bgpd_is_named_and_frr_restart_brings_it_back(lab: str) -> None:
    assert _healthy_and_established(lab)
    [pid] = _kill(node_dir(lab, "leaf1") / "bgpd.pid")
    named = f"leaf1: bgpd not running (pid {pid} gone)"
    assert until(lambda: any(f.startswith(named) for f in _failures(_status(lab), "switch-daemons")), timeout=60)
    doc = _status(lab)
    assert doc["healthy"] is False
    assert doc["daemons"]["leaf1"]["bgpd"] == {"pid": pid, "running": False}
    assert doc["daemons"]["leaf1"]["zebra"]["running"] is True     # zebra lived on
    assert doc["agent"]["serving"] is True
    verify = twin("verify", "--name", lab, "--json", check=False)
    assert verify.returncode == 1
    checks = {c["name"]: c for c in json.loads(verify.stdout)["checks"]}
    assert any(i["message"].startswith(f"bgpd not running (pid {pid} gone)") for i in checks["switch-daemons"]["items"])

    restart = twin_json("frr", "restart", "leaf1", "--name", lab)
    assert "zebra" in " ".join(restart["stopped"]) and "bgpd" not in " ".join(restart["stopped"])
    assert restart["started"] == ["zebra", "bgpd", "staticd", "bfdd"]
    assert until(lambda: _healthy_and_established(lab), timeout=90)
    assert set(_bgp_states(lab, "leaf1").values()) == {"Established"}
    assert twin("verify", "--name", lab, "--json", check=False).returncode == 0


def test_every_frr_daemon_killed_and_a_change_made_meanwhile(lab: str) -> None:
    """FRR comes back as the config daemon programmed it, a CONFIG_DB change made while bgpd was dead
    included; the config daemon then carries on from there."""
    assert until(lambda: _healthy_and_established(lab), timeout=90)
    rundir = node_dir(lab, "spine1")
    _kill(*(rundir / f"{d}.pid" for d in ("zebra", "bgpd", "staticd", "bfdd")))
    assert until(lambda: len([f for f in _failures(_status(lab), "switch-daemons") if f.startswith("spine1:")]) == 4,
                 timeout=60)
    neighbor = next(k for k in json.loads((rundir / "programmed.json").read_text())["BGP_NEIGHBOR"])
    key = f"BGP_NEIGHBOR|{neighbor}"
    twin("exec", "--name", lab, "spine1", "--", "sonic-db-cli", "CONFIG_DB", "hset", key, "admin_status", "down")
    assert until(lambda: json.loads((rundir / "programmed.json").read_text())["BGP_NEIGHBOR"][neighbor]
                 ["admin_status"] == "down")

    restart = twin_json("frr", "restart", "spine1", "--name", lab)
    assert restart["stopped"] == [] and restart["started"] == ["zebra", "bgpd", "staticd", "bfdd"]
    peer = neighbor.split("|")[-1]
    running = twin("exec", "--name", lab, "spine1", "--", "vtysh", "-c", "show running-config").stdout
    assert f"neighbor {peer} shutdown" in running
    assert until(lambda: _bgp_states(lab, "spine1").get(peer) == "Idle (Admin)", timeout=30)

    twin("exec", "--name", lab, "spine1", "--", "sonic-db-cli", "CONFIG_DB", "hset", key, "admin_status", "up")
    assert until(lambda: _healthy_and_established(lab), timeout=90)
    assert set(_bgp_states(lab, "spine1").values()) == {"Established"}


def test_a_killed_agent_is_named_and_agent_restart_brings_it_back(lab: str) -> None:
    assert until(lambda: _healthy_and_established(lab), timeout=90)
    [pid] = _kill(lab_dir(lab) / "agent.pid")
    doc = _status(lab)
    assert doc["healthy"] is False
    assert doc["agent"] == {"pid": pid, "running": False, "serving": False}
    assert [f.split(";")[0] for f in _failures(doc, "agent")] == [f"{lab}: gNMI agent not running (pid {pid} gone)"]
    verify = twin("verify", "--name", lab, "--json", check=False)
    assert verify.returncode == 1   # a failed check, not an unreachable gNMI (2)
    checks = {c["name"]: c for c in json.loads(verify.stdout)["checks"]}
    assert checks["agent"]["status"] == "failure" and checks["bgp-sessions"]["status"] == "skipped"

    twin("agent", "restart", "--name", lab)
    assert RESTARTED in (lab_dir(lab) / "agent.log").read_text()  # it converged the running switches
    assert until(lambda: _healthy_and_established(lab), timeout=60)
    doc = _status(lab)
    assert doc["agent"]["running"] and doc["agent"]["pid"] != pid
    assert twin("verify", "--name", lab, "--json", check=False).returncode == 0


@pytest.mark.needs_docker
def test_docker_switches_daemons_are_judged_in_their_containers() -> None:
    """In a container a pid file holds the container's pid: healthy is healthy, a bgpd killed in its
    container is named, and `twin frr restart` starts FRR inside the container again."""
    with running_lab("tests/integration/data/mini.yaml", "rd", "--runtime", "docker") as name:
        doc = _status(name)
        assert doc["healthy"] and _failures(doc, "switch-daemons") == []
        pid = doc["daemons"]["leaf1"]["bgpd"]["pid"]
        twin("exec", "--name", name, "leaf1", "--", "kill", "-9", str(pid))
        named = f"leaf1: bgpd not running (pid {pid} gone)"
        assert until(lambda: any(f.startswith(named) for f in _failures(_status(name), "switch-daemons")),
                     timeout=60)
        twin("frr", "restart", "leaf1", "--name", name)
        assert until(lambda: _healthy_and_established(name), timeout=90)
        container = twin("exec", "--name", name, "leaf1", "--", "cat", str(node_dir(name, "leaf1") / "bgpd.pid"))
        assert _status(name)["daemons"]["leaf1"]["bgpd"] == {"pid": int(container.stdout), "running": True}
