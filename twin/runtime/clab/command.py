"""Running containerlab: its command lines (the native binary, else its container image) and the
output of `containerlab inspect --format json`."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from twin.model.errors import TwinError

CLAB_IMAGE = "ghcr.io/srl-labs/clab"


# -- `containerlab inspect --format json` -------------------------------------------------------

class InspectedNode(TypedDict):
    container: str
    image: str
    kind: str
    state: str
    mgmt_ipv4: str | None
    pid: NotRequired[int]


def clab_inspect_nodes(json_text: str) -> dict[str, InspectedNode]:
    """Node name -> container facts, from `containerlab inspect --format json`.

    Reads the list form of older releases (`{"containers": [...]}`, or a bare list) and the form
    keyed by lab name of newer ones (`{"<lab>": [...]}`). The node name is the `clab-node-name`
    label when present, else the container name without containerlab's `clab-<lab>-` prefix.
    """
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise TwinError(f"containerlab inspect did not print JSON: {exc}") from None
    nodes: dict[str, InspectedNode] = {}
    for lab, entry in _inspect_entries(data):
        name, node = _inspected(lab, entry)
        nodes[name] = node
    return nodes


def _inspect_entries(data: Any) -> Iterator[tuple[str | None, dict[str, Any]]]:
    if isinstance(data, dict) and isinstance(data.get("containers"), list):
        groups: list[tuple[str | None, Any]] = [(None, data["containers"])]
    elif isinstance(data, list):
        groups = [(None, data)]
    elif isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        groups = [(str(lab), entries) for lab, entries in data.items()]
    else:
        raise TwinError("unrecognised containerlab inspect JSON: expected {\"containers\": [...]} "
                        "or {\"<lab>\": [...]}")
    for lab, entries in groups:
        for entry in entries:
            if not isinstance(entry, dict):
                raise TwinError(f"unrecognised containerlab inspect entry: {entry!r}")
            yield lab, entry


def _inspected(lab: str | None, entry: dict[str, Any]) -> tuple[str, InspectedNode]:
    container = str(entry.get("name") or entry.get("container_name") or "")
    lab = str(entry.get("lab_name") or lab or "")
    labels = entry.get("labels") or entry.get("Labels") or {}
    name = labels.get("clab-node-name") if isinstance(labels, dict) else None
    if not name:
        prefix = f"clab-{lab}-"
        name = container.removeprefix(prefix) if lab and container.startswith(prefix) else container
    node: InspectedNode = {"container": container, "image": str(entry.get("image") or ""),
                           "kind": str(entry.get("kind") or ""), "state": str(entry.get("state") or ""),
                           "mgmt_ipv4": _address(entry.get("ipv4_address"))}
    pid = entry.get("pid", entry.get("Pid"))
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
        node["pid"] = pid
    return str(name), node


def _address(value: Any) -> str | None:
    """`172.20.20.2/24` -> `172.20.20.2`; None for `N/A`, empty or anything that is not an address."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return str(ipaddress.ip_interface(value).ip)
    except ValueError:
        return None


# -- running containerlab -----------------------------------------------------------------------

def missing_message() -> str:
    """What to tell a user who has no containerlab."""
    return ("containerlab is not installed. Install it natively (bash -c \"$(curl -sL https://get.containerlab.dev)\", "
            "see https://containerlab.dev/install/) or pull its container image (docker pull "
            f"{CLAB_IMAGE}), which twin runs when the binary is absent. Meanwhile run the lab with "
            "'--runtime docker'.")


@dataclass(frozen=True)
class ClabCommand:
    """containerlab's command lines here: the native binary when installed, else its container image.

    The container form is containerlab's documented one, without `-it` (nothing is interactive):
    host network and PID namespace, the Docker socket, and the topology's folder mounted at the
    same path, so relative binds resolve to the same host paths for the Docker daemon.
    """

    image: str = CLAB_IMAGE

    def native(self) -> str | None:
        return shutil.which("containerlab")

    def image_present(self) -> bool:
        docker = shutil.which("docker")
        if docker is None:
            return False
        proc = subprocess.run([docker, "image", "inspect", self.image], capture_output=True, check=False)
        return proc.returncode == 0

    def available(self) -> bool:
        return self.native() is not None or self.image_present()

    def prefix(self, workdir: Path) -> list[str]:
        """The command that runs containerlab, ready for its arguments; TwinError when there is none."""
        native = self.native()
        if native is not None:
            return [native]
        if self.image_present():
            return self.container_prefix(workdir)
        raise TwinError(missing_message())

    def container_prefix(self, workdir: Path) -> list[str]:
        wd = str(workdir)
        return ["docker", "run", "--rm", "--privileged", "--network", "host",
                "-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", "/var/run/netns:/var/run/netns",
                "-v", "/etc/hosts:/etc/hosts", "-v", "/var/lib/docker/containers:/var/lib/docker/containers",
                "--pid=host", "-v", f"{wd}:{wd}", "-w", wd, self.image, "containerlab"]

    def deploy_argv(self, topo: Path) -> list[str]:
        """Deploy (`--reconfigure`: a lab left by an earlier run is replaced)."""
        path = topo.resolve()
        return [*self.prefix(path.parent), "deploy", "-t", str(path), "--reconfigure"]

    def destroy_argv(self, topo: Path) -> list[str]:
        """Destroy and remove containerlab's lab directory (`clab-<lab>/`); the bound files stay."""
        path = topo.resolve()
        return [*self.prefix(path.parent), "destroy", "-t", str(path), "--cleanup"]

    def inspect_argv(self, topo: Path) -> list[str]:
        path = topo.resolve()
        return [*self.prefix(path.parent), "inspect", "-t", str(path), "--format", "json"]
