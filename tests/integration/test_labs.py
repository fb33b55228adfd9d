"""Other labs: side by side, rail one-hop paths, containerlab import, failed and crashed bring-ups."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from labtools import REPO, TWIN, leftovers, netns_exec, twin, twin_json, unique


def test_two_labs_side_by_side(up_lab: Callable[..., Any]) -> None:
    a, b = unique("a"), unique("b")
    assert up_lab("tests/integration/data/mini.yaml", a)["healthy"]
    assert up_lab("tests/integration/data/mini.yaml", b)["healthy"]
    sa, sb = twin_json("status", "--name", a), twin_json("status", "--name", b)
    assert {n["mgmt"] for n in sa["nodes"]}.isdisjoint({n["mgmt"] for n in sb["nodes"] if n["mgmt"]})
    twin("down", "--name", a)
    assert leftovers(a) == []
    assert twin_json("status", "--name", b)["healthy"] is True


def _hops(lab: str, server: str, src: str, dst: str) -> list[str]:
    out = netns_exec(lab, server, "traceroute", "-n", "-q", "1", "-w", "1", "-m", "6", "-s", src, dst).stdout
    return [line.split()[1] for line in out.splitlines()[1:]]


def test_rail_same_rail_is_one_leaf_hop(up_lab: Callable[..., Any]) -> None:
    lab = unique("r")
    assert up_lab("labs/rail.yaml", lab)["healthy"]
    plan = json.loads(Path(f"/run/twin/{lab}/plan.json").read_text())
    nics = {(n["name"], i["name"]): i for n in plan["nodes"] if n["role"] == "server" for i in n["interfaces"]}
    nic = {key: i["address"].split("/")[0] for key, i in nics.items()}
    leaf_side = nics[("pod1-server1", "eth3")]["peer_address"].split("/")[0]
    # rail 3 to rail 3 inside pod 1: server -> pod1-rail3 -> server, one leaf and nothing else
    same = _hops(lab, "pod1-server1", nic[("pod1-server1", "eth3")], nic[("pod1-server2", "eth3")])
    assert same == [leaf_side, nic[("pod1-server2", "eth3")]]
    # rail 3 of pod 1 to rail 3 of pod 2 crosses a spine: leaf, spine, leaf, server
    across = _hops(lab, "pod1-server1", nic[("pod1-server1", "eth3")], nic[("pod2-server1", "eth3")])
    assert len(across) == 4 and across[-1] == nic[("pod2-server1", "eth3")]


def test_containerlab_frr01_import(up_lab: Callable[..., Any]) -> None:
    lab = unique("f")
    result = up_lab("labs/frr01.yaml", lab, timeout=300)
    assert result["healthy"], result
    ping = twin("exec", "--name", lab, "PC1", "--", "ping", "-c", "2", "-W", "2", "192.168.13.2", check=False)
    assert ping.returncode == 0, ping.stdout
    route = twin("exec", "--name", lab, "router1", "--", "vtysh", "-c", "show ip route ospf").stdout
    assert "192.168.13.0/24" in route


def test_failed_up_leaves_nothing(lab_name: str) -> None:
    proc = twin("up", "tests/integration/data/badrouter/lab.clab.yml", "--name", lab_name, check=False)
    assert proc.returncode == 2
    assert "r2: FRR rejected" in proc.stderr and "Unknown command" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert leftovers(lab_name) == []


def _start_and_kill(lab: str) -> None:
    """Start `twin up` and SIGKILL it once namespaces exist, before it finishes."""
    proc = subprocess.Popen([*TWIN, "up", "labs/default.yaml", "--name", lab], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        if netns.count(f"tw.{lab}.") >= 10:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert leftovers(lab), "the kill came too late to leave anything half-built"


def test_crash_then_down_recovers(lab_name: str) -> None:
    _start_and_kill(lab_name)
    twin("down", "--name", lab_name)
    assert leftovers(lab_name) == []


def test_crash_then_up_again_recovers(lab_name: str) -> None:
    _start_and_kill(lab_name)
    assert twin_json("up", "labs/default.yaml", "--name", lab_name)["healthy"]
    twin("down", "--name", lab_name)
    assert leftovers(lab_name) == []
