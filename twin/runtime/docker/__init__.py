"""The docker runtime: every node a container made through the Engine API (runtime.py)."""

from twin.runtime.docker.runtime import DockerRuntime

__all__ = ["DockerRuntime"]
