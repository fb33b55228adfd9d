"""The docker runtime end to end: the default lab as containers, gNMI push/verify, a drill, down.

The switch image is built once (twin image build, also by the first `up`) and cached by the
Docker engine: later runs find it up to date by its inputs label.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import leftovers, running_lab, twin, twin_json, unique

from twin.host.dockerapi import LAB_LABEL, client, container_name, network_name

pytestmark = pytest.mark.needs_docker


def containers(lab: str) -> list[Any]:
    return list(client().containers.list(all=True, filters={"label": f"{LAB_LABEL}={lab}"}))


def docker_leftovers(lab: str) -> list[str]:
    found = [f"container {c.name}" for c in containers(lab)]
    found += [f"network {n.name}" for n in client().networks.list(names=[network_name(lab)])]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found += [line.split(":")[1].strip() for line in links.splitlines() if f"tw-{lab}" in line]
    return found + leftovers(lab)


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("labs/default.yaml", "d", "--runtime", "docker") as name:
        yield twin_json("status", "--name", name)
    assert docker_leftovers(name) == []


def test_the_image_is_cached_by_its_inputs() -> None:
    twin_json("image", "build", timeout=1800)  # builds it on a fresh machine (about a minute)
    doc = twin_json("image", "build")
    assert doc["image"].startswith("twin-switch:") and doc["built"] is False
    image = client().images.get(doc["image"])
    assert image.labels["org.twin.inputs"] == doc["inputs"]
    assert doc["size_mb"] < 300


def test_every_node_is_a_container_with_only_the_capabilities_it_needs(lab: dict[str, Any]) -> None:
    name = lab["lab"]
    assert lab["runtime"] == "docker" and lab["healthy"] is True
    found = {c.labels["org.twin.node"]: c for c in containers(name)}
    assert set(found) == {n["name"] for n in lab["nodes"]}
    spine = found["spine1"].attrs
    assert spine["HostConfig"]["Privileged"] is False
    assert set(spine["HostConfig"]["CapAdd"]) == {"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_SYS_ADMIN"} or \
        set(spine["HostConfig"]["CapAdd"]) == {"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}
    # The management address is the one Docker gave eth0 on the lab's network.
    mgmt = spine["NetworkSettings"]["Networks"][network_name(name)]["IPAddress"]
    assert mgmt == next(n["mgmt"] for n in lab["nodes"] if n["name"] == "spine1")
    # FRR runs from the image, inside the container: its processes are the container's.
    top = found["spine1"].top()["Processes"]
    assert any("/usr/lib/frr/bgpd" in " ".join(p) for p in top)


def test_exec_runs_inside_the_container(lab: dict[str, Any]) -> None:
    proc = twin("exec", "--name", lab["lab"], "leaf1", "--", "cat", "/etc/hostname")
    assert proc.stdout.strip() == "leaf1"
    proc = twin("exec", "--name", lab["lab"], "leaf1", "--", "vtysh", "-c", "show bgp summary json")
    assert json.loads(proc.stdout)["ipv4Unicast"]["peerCount"] == 4


def test_push_and_verify_over_gnmi(lab: dict[str, Any], tmp_path: Path) -> None:
    """A pushed MTU change reaches the container's kernel (verify sees it); the plan's push puts it back."""
    name = lab["lab"]
    configs = tmp_path / "configs"
    for node in (n["name"] for n in lab["nodes"] if n["kind"] == "switch"):
        (configs / node).mkdir(parents=True)
        shutil.copy(f"/run/twin/{name}/nodes/{node}/config_db.json", configs / node / "config_db.json")
    db_path = configs / "leaf1" / "config_db.json"
    db = json.loads(db_path.read_text())
    db["PORT"]["Ethernet128"]["mtu"] = "1500"
    db_path.write_text(json.dumps(db))
    pushed = twin_json("push", "--name", name, "--configs", str(configs))
    changed = {s["switch"]: s["changed"] for s in pushed["switches"] if s["changed"]}
    assert changed == {"leaf1": ["PORT|Ethernet128"]}
    mtu = subprocess.run(["docker", "exec", container_name(name, "leaf1"), "cat",
                          "/sys/class/net/Ethernet128/mtu"], capture_output=True, text=True).stdout
    assert mtu.strip() == "1500"
    proc = twin("verify", "--name", name, "--json", check=False)
    assert proc.returncode == 1
    check = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "link-mtu")
    assert [i["subject"] for i in check["items"] if i["status"] == "failure"] == ["leaf1:Ethernet128 <-> spine1"] \
        or any("leaf1:Ethernet128" in i["subject"] for i in check["items"] if i["status"] == "failure")
    twin_json("push", "--name", name)
    assert twin_json("verify", "--name", name)["passed"] is True


def test_spine_loss_pauses_the_container(lab: dict[str, Any]) -> None:
    proc = twin("drill", "spine-loss", "--target", "spine2", "--name", lab["lab"], "--json", check=False, timeout=120)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, doc.get("violations")
    inject = doc["actions"][0]
    assert "docker pause" in inject["how"]
    assert doc["restored"] is True
    assert doc["distribution"]["spine2"] < 0.01
    assert set(doc["paths_during"].values()) == {3} and set(doc["paths_after"].values()) == {4}
    assert all(c.status == "running" for c in containers(lab["lab"]))


def test_an_image_that_is_not_there_fails_clearly_and_leaves_nothing() -> None:
    name = unique("di")
    proc = twin("up", "tests/integration/data/sonic-mini.yaml", "--name", name, "--runtime", "docker",
                "--image", "docker-sonic-vs:not-loaded", check=False)
    assert proc.returncode == 2
    assert "docker-sonic-vs:not-loaded is not on this machine" in proc.stderr
    assert "docker load" in proc.stderr
    assert docker_leftovers(name) == []


def test_a_failed_up_removes_the_containers_it_made() -> None:
    """FRR in a container rejects an imported router's config half-way: everything made so far goes."""
    name = unique("df")
    proc = twin("up", "tests/integration/data/badrouter/lab.clab.yml", "--name", name, "--runtime", "docker",
                check=False)
    assert proc.returncode == 2
    assert "r2: FRR rejected" in proc.stderr and "Traceback" not in proc.stderr
    assert docker_leftovers(name) == []
