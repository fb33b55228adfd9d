"""The container runtimes' pure parts: image recipe, container specs, SONiC-VS boot, clab topology."""

from __future__ import annotations

import io
import json
import tarfile
from ipaddress import IPv4Network
from pathlib import Path

import pytest

from twin.export.containerlab import schema_found, validate_clab
from twin.kinds import sonic_vs
from twin.kinds.registry import get_kind
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.runtime.clab.deploy import ClabRuntime, clab_name, runtime_topology
from twin.runtime.containers import container_names
from twin.runtime.docker.runtime import CAPABILITIES, DockerRuntime, container_spec, host_config_spec
from twin.runtime.image import INPUTS_LABEL, ImageSpec
from twin.runtime.registry import get_runtime
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_lab(REPO / "labs/default.yaml").plan


def test_image_inputs_change_with_what_the_image_is_built_from() -> None:
    base = ImageSpec(mirror="http://deb.debian.org/debian")
    assert base.inputs == ImageSpec(mirror="http://deb.debian.org/debian").inputs
    assert base.inputs != ImageSpec(mirror="http://mirror.example/debian").inputs
    assert base.inputs != ImageSpec(mirror=base.mirror, packages=(*base.packages, "tcpdump")).inputs
    assert base.inputs != ImageSpec(mirror=base.mirror, suite="trixie").inputs
    assert base.name.startswith("twin-switch:")


def test_image_recipe_is_debootstrap_minbase_with_frr() -> None:
    spec = ImageSpec(mirror="http://deb.debian.org/debian")
    argv = spec.debootstrap_argv(Path("/tmp/root"))
    assert argv[:2] == ["debootstrap", "--variant=minbase"]
    assert "frr" in argv[2].removeprefix("--include=").split(",")
    assert argv[-3:] == ["bookworm", "/tmp/root", "http://deb.debian.org/debian"]
    assert f"LABEL {INPUTS_LABEL}={spec.inputs}" in spec.import_changes()


def test_containers_get_capabilities_never_privileged(plan: Plan, tmp_path: Path) -> None:
    leaf = plan.node("leaf1")
    hc = host_config_spec(get_kind("frr-switch"), tmp_path)
    assert hc["cap_add"] == CAPABILITIES == ["NET_ADMIN", "NET_RAW", "SYS_ADMIN"]
    assert "privileged" not in hc
    assert hc["binds"] == {str(tmp_path): {"bind": str(tmp_path), "mode": "rw"}}
    assert hc["network_mode"] is None and host_config_spec(get_kind("host"), tmp_path)["network_mode"] == "none"
    spec = container_spec("lab1", leaf, "twin-switch:0.1.0")
    assert spec["name"] == "tw-lab1-leaf1" and spec["hostname"] == "leaf1"
    assert spec["labels"] == {"org.twin.lab": "lab1", "org.twin.node": "leaf1", "org.twin.role": "leaf"}


def test_docker_exec_argv_finds_the_nodes_frr(plan: Plan) -> None:
    from twin.model.state import LabState, NodeState

    state = LabState(lab="x", runtime="docker", phase="up", topology="t", created=0,
                     nodes=[NodeState(name="leaf1", role="leaf", kind="switch", netns="tw.x.leaf1")])
    argv = DockerRuntime().exec_argv(state, "leaf1", ["vtysh", "-c", "show bgp summary"])
    assert argv[:4] == ["docker", "exec", "-i", "tw-x-leaf1"]
    assert argv[4:6] == ["vtysh", "--vty_socket"] and argv[-2:] == ["-c", "show bgp summary"]


def test_runtime_registry_and_image_option() -> None:
    assert DockerRuntime("docker-sonic-vs:202311").images.switches.facts.name == "sonic-vs"
    assert DockerRuntime().images.switches.facts.name == "frr-switch"
    with pytest.raises(TwinError, match="--image needs a container runtime"):
        get_runtime("netns", "twin-switch:0.1.0")
    with pytest.raises(TwinError, match="available: netns, docker, clab"):
        get_runtime("kvm")


@pytest.mark.parametrize(("image", "sonic"), [("docker-sonic-vs:latest", True), ("docker-sonic-vs", True),
                                              ("registry.local:5000/docker-sonic-vs:202405", True),
                                              ("twin-switch:0.1.0", False), ("my-docker-sonic-vs-fork:1", False)])
def test_sonic_images_are_recognised(image: str, sonic: bool) -> None:
    assert sonic_vs.is_sonic_image(image) is sonic


def test_sonic_vs_plan_uses_eth_names_and_boot_order(plan: Plan) -> None:
    small = container_names(plan, get_kind("sonic-vs"))
    leaf = small.node("leaf1")
    assert [(i.name, i.kernel) for i in leaf.interfaces[:2]] == [("Ethernet0", "eth1"), ("Ethernet4", "eth2")]
    assert small.node("server1").interfaces == plan.node("server1").interfaces
    steps = sonic_vs.boot_steps(leaf)
    assert steps[0] == ["supervisorctl", "start", "bgpd"]
    assert steps[1] == ["config", "load", "-y", "/etc/sonic/config_db.json"]
    assert steps[2:] == [["config", "interface", "startup", i.name] for i in leaf.interfaces]
    assert sonic_vs.container_overrides() == {"entrypoint": ["/bin/bash"], "tty": True, "stdin_open": True}


def test_sonic_vs_config_is_copied_not_bound(tmp_path: Path) -> None:
    binds = sonic_vs.binds(tmp_path)
    assert {m["bind"] for m in binds.values()} == {"/var/run/frr", "/var/run/redis"}
    with tarfile.open(fileobj=io.BytesIO(sonic_vs.config_archive(b'{"PORT": {}}'))) as tar:
        member = tar.getmember("config_db.json")
        assert json.loads(tar.extractfile(member).read()) == {"PORT": {}}  # type: ignore[union-attr]
    assert sonic_vs.agent_backend(tmp_path) == {"backend": "sonic-redis",
                                                "redis_socket": str(tmp_path / "redis" / "redis.sock")}


@pytest.mark.skipif(not schema_found(),
                    reason="containerlab's schema is not found (set TWIN_CLAB_SCHEMA or TWIN_SONIC_REFERENCE)")
def test_clab_runtime_topology_validates_and_points_into_the_run_dir(plan: Plan, monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    doc = runtime_topology("lab1", plan, "twin-switch:0.1.0", IPv4Network("172.20.5.0/24"))
    assert validate_clab(doc) == []
    assert doc["name"] == clab_name("lab1") and doc["mgmt"]["bridge"] == "tw-lab1"
    assert doc["mgmt"]["ipv4-subnet"] == "172.20.5.0/24"
    leaf = doc["topology"]["nodes"]["leaf1"]
    rundir = tmp_path / "lab1" / "nodes" / "leaf1"
    assert f"{rundir}:/var/run/frr" in leaf["binds"] and f"{rundir}/frr.conf:/etc/frr/frr.conf" in leaf["binds"]
    assert leaf["labels"]["org.twin.lab"] == "lab1"
    assert ClabRuntime().container("lab1", "leaf1") == "clab-tw-lab1-leaf1"


def test_clab_without_containerlab_points_to_docker(plan: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = ClabRuntime()
    monkeypatch.setattr(type(rt.clab), "available", lambda self: False)
    with pytest.raises(TwinError, match=r"containerlab is not installed.*--runtime docker"):
        rt.up("lab1", plan, lambda s, d, t: None)


def test_sonic_vs_refuses_ports_its_hwsku_lacks_before_creating_anything(plan: Plan) -> None:
    with pytest.raises(TwinError, match=r"ports beyond Force10-S6000's 32 .*not the plan's Arista-7060X6-64PE-B-O128"
                                        r".*set 'fabric: \{hwsku: Force10-S6000, radix: 32\}'"):
        DockerRuntime("docker-sonic-vs:latest").up("lab1", plan, lambda s, d, t: None)
    small = load_lab(REPO / "tests/integration/data/sonic-mini.yaml").plan
    assert sonic_vs.missing_ports(small) == []
