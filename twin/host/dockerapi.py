"""The Docker Engine API client, with the error a user can act on when there is no engine."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from twin.model.errors import TwinError

if TYPE_CHECKING:
    import docker

LAB_LABEL, NODE_LABEL = "org.twin.lab", "org.twin.node"
NOT_RUNNING = ("the Docker engine is not reachable ({why}): 'make lab-up RUNTIME=docker' installs Debian's "
               "docker.io and starts it; or start it yourself ('systemctl start docker', or 'dockerd &')")


@functools.cache
def client() -> docker.DockerClient:
    import docker  # ~0.12 s to import: only when a lab asks for the engine, not in every CLI command
    import docker.errors

    try:
        c = docker.from_env(timeout=120)
        c.ping()
    except docker.errors.DockerException as exc:
        raise TwinError(NOT_RUNNING.format(why=str(exc).split(": ")[-1][:200])) from None
    return c


def engine_running() -> bool:
    try:
        client()
    except TwinError:
        return False
    return True


def container_name(lab: str, node: str) -> str:
    return f"tw-{lab}-{node}"


def network_name(lab: str) -> str:
    return f"tw-{lab}"
