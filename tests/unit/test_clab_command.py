"""containerlab's command lines (native binary, else its container image) and the output of
`containerlab inspect --format json` (twin.runtime.clab.command)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from twin.model.errors import TwinError
from twin.runtime.clab import command as clab_mod
from twin.runtime.clab.command import CLAB_IMAGE, ClabCommand, clab_inspect_nodes, missing_message

# -- containerlab inspect ------------------------------------------------------------------------

# containerlab < 0.60 printed {"containers": [...]}
INSPECT_LIST = """{
  "containers": [
    {
      "lab_name": "default",
      "labPath": "default.clab.yml",
      "name": "clab-default-leaf1",
      "container_id": "4c1e2a9d7b3f",
      "image": "twin-switch:0.1.0",
      "kind": "linux",
      "state": "running",
      "ipv4_address": "172.20.20.3/24",
      "ipv6_address": "3fff:172:20:20::3/64"
    },
    {
      "lab_name": "default",
      "labPath": "default.clab.yml",
      "name": "clab-default-server1",
      "container_id": "9a8b7c6d5e4f",
      "image": "twin-switch:0.1.0",
      "kind": "linux",
      "state": "exited",
      "ipv4_address": "N/A",
      "ipv6_address": "N/A"
    }
  ]
}"""

# newer releases key the containers by lab name
INSPECT_BY_LAB = """{
  "default": [
    {
      "lab_name": "default",
      "labPath": "default.clab.yml",
      "absLabPath": "/root/labs/default.clab.yml",
      "name": "clab-default-spine1",
      "container_id": "0f1e2d3c4b5a",
      "image": "docker-sonic-vs:latest",
      "kind": "sonic-vs",
      "state": "running",
      "status": "Up 2 minutes",
      "ipv4_address": "172.20.20.2/24",
      "ipv6_address": "3fff:172:20:20::2/64",
      "owner": "root"
    }
  ],
  "other": [
    {
      "lab_name": "other",
      "labPath": "../other/other.clab.yml",
      "absLabPath": "/root/other/other.clab.yml",
      "name": "clab-other-r1",
      "container_id": "aabbccddeeff",
      "image": "twin-switch:0.1.0",
      "kind": "linux",
      "state": "running",
      "status": "Up 5 minutes",
      "ipv4_address": "172.20.21.2/24",
      "ipv6_address": "",
      "owner": "root"
    }
  ]
}"""


def test_inspect_list_form() -> None:
    nodes = clab_inspect_nodes(INSPECT_LIST)
    assert nodes == {
        "leaf1": {"container": "clab-default-leaf1", "image": "twin-switch:0.1.0", "kind": "linux",
                  "state": "running", "mgmt_ipv4": "172.20.20.3"},
        "server1": {"container": "clab-default-server1", "image": "twin-switch:0.1.0", "kind": "linux",
                    "state": "exited", "mgmt_ipv4": None},
    }


def test_inspect_form_keyed_by_lab() -> None:
    nodes = clab_inspect_nodes(INSPECT_BY_LAB)
    assert set(nodes) == {"spine1", "r1"}
    assert nodes["spine1"] == {"container": "clab-default-spine1", "image": "docker-sonic-vs:latest",
                               "kind": "sonic-vs", "state": "running", "mgmt_ipv4": "172.20.20.2"}
    assert nodes["r1"]["mgmt_ipv4"] == "172.20.21.2"


def test_inspect_prefers_the_node_name_label_and_keeps_the_pid() -> None:
    text = json.dumps({"containers": [{"name": "lab1-leaf1", "lab_name": "lab1", "image": "i", "state": "running",
                                       "ipv4_address": "10.0.0.5/24", "Pid": 4242,
                                       "labels": {"clab-node-name": "leaf1"}}]})
    node = clab_inspect_nodes(text)["leaf1"]
    assert node["container"] == "lab1-leaf1"
    assert node["pid"] == 4242


@pytest.mark.parametrize(("text", "message"), [("not json", "did not print JSON"),
                                               ('{"default": 3}', "unrecognised containerlab inspect JSON"),
                                               ('{"containers": ["x"]}', "unrecognised containerlab inspect entry")])
def test_inspect_rejects_what_it_cannot_read(text: str, message: str) -> None:
    with pytest.raises(TwinError, match=message):
        clab_inspect_nodes(text)


def test_inspect_of_no_lab_is_empty() -> None:
    assert clab_inspect_nodes('{"containers": []}') == {}
    assert clab_inspect_nodes("{}") == {}


# -- containerlab command lines ------------------------------------------------------------------

def _which(found: dict[str, str]) -> Any:
    return lambda name: found.get(name)


def test_native_command_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(clab_mod.shutil, "which", _which({"containerlab": "/usr/bin/containerlab"}))
    topo = tmp_path / "default.clab.yml"
    cmd = ClabCommand()
    assert cmd.available()
    assert cmd.deploy_argv(topo) == ["/usr/bin/containerlab", "deploy", "-t", str(topo), "--reconfigure"]
    assert cmd.destroy_argv(topo) == ["/usr/bin/containerlab", "destroy", "-t", str(topo), "--cleanup"]
    assert cmd.inspect_argv(topo) == ["/usr/bin/containerlab", "inspect", "-t", str(topo), "--format", "json"]


def test_container_command_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def run(argv: list[str], **_kw: Any) -> subprocess.CompletedProcess[bytes]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, b"[]", b"")

    monkeypatch.setattr(clab_mod.shutil, "which", _which({"docker": "/usr/bin/docker"}))
    monkeypatch.setattr(clab_mod.subprocess, "run", run)
    topo = tmp_path / "default.clab.yml"
    cmd = ClabCommand()
    assert cmd.available()
    assert calls[0] == ["/usr/bin/docker", "image", "inspect", CLAB_IMAGE]
    argv = cmd.deploy_argv(topo)
    wd = str(tmp_path)
    assert argv == ["docker", "run", "--rm", "--privileged", "--network", "host",
                    "-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", "/var/run/netns:/var/run/netns",
                    "-v", "/etc/hosts:/etc/hosts", "-v", "/var/lib/docker/containers:/var/lib/docker/containers",
                    "--pid=host", "-v", f"{wd}:{wd}", "-w", wd, CLAB_IMAGE, "containerlab",
                    "deploy", "-t", str(topo), "--reconfigure"]
    assert "-it" not in argv
    assert cmd.inspect_argv(topo)[-5:] == ["inspect", "-t", str(topo), "--format", "json"]


def test_image_absent_means_no_containerlab(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(clab_mod.shutil, "which", _which({"docker": "/usr/bin/docker"}))
    monkeypatch.setattr(clab_mod.subprocess, "run",
                        lambda argv, **_kw: subprocess.CompletedProcess(argv, 1, b"", b"No such image"))
    assert not ClabCommand().available()


def test_missing_containerlab_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(clab_mod.shutil, "which", _which({}))
    cmd = ClabCommand()
    assert not cmd.available()
    with pytest.raises(TwinError) as err:
        cmd.deploy_argv(tmp_path / "x.clab.yml")
    assert str(err.value) == missing_message()
    for needed in ("containerlab is not installed", "https://containerlab.dev/install/", CLAB_IMAGE,
                   "--runtime docker"):
        assert needed in missing_message()
