"""Runtimes registered by name, imported only when asked for (`twin --help` imports no Docker client).

Adding a runtime: a package under twin/runtime/ with a class that implements
twin.runtime.protocol.Runtime and takes the switch image (`image: str | None`), plus one line in
RUNTIMES below (see CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

from twin.host.lablock import LabLock
from twin.host.rundir import load_state
from twin.model.errors import TwinError
from twin.model.names import check_lab_name, is_lab_name
from twin.model.state import LabState
from twin.runtime.protocol import ProgressFn, Runtime

__all__ = ["RUNTIMES", "ProgressFn", "Runtime", "all_labs", "check_lab_name", "down_lab", "get_runtime",
           "runtime_of"]

# name -> "module:class"; the class is called with the switch image (None: the runtime's default).
RUNTIMES: dict[str, str] = {
    "netns": "twin.runtime.netns:NetnsRuntime",
    "docker": "twin.runtime.docker:DockerRuntime",
    "clab": "twin.runtime.clab:ClabRuntime",
}


def runtime_class(name: str) -> Callable[[str | None], Runtime]:
    """The class registered as `name`, imported now."""
    try:
        target = RUNTIMES[name]
    except KeyError:
        raise TwinError(f"unknown runtime '{name}'; available: {', '.join(RUNTIMES)}") from None
    module, _, attr = target.partition(":")
    return cast(Callable[[str | None], Runtime], getattr(importlib.import_module(module), attr))


def get_runtime(name: str, image: str | None = None, templates: Path | None = None) -> Runtime:
    """The runtime called `name`; `image` is the switch image of the container runtimes, `templates`
    a SONiC release's FRR templates to render twin's switches with."""
    runtime = runtime_class(name)(image)
    if templates is not None:
        runtime.templates = templates
    return runtime


def runtime_of(state: LabState) -> Runtime:
    """The runtime a running lab was brought up with."""
    return get_runtime(state.runtime, state.image)


def all_labs() -> list[str]:
    """Every lab on this machine, whatever its runtime (half-created ones included). Only lab names:
    a namespace or container that looks like a lab's but whose name is not one is no lab of twin's."""
    return sorted({lab for name in RUNTIMES for lab in get_runtime(name).labs() if is_lab_name(lab)})


def down_lab(lab: str) -> list[str]:
    """Remove a lab with the runtime that made it (from its state, or its containers after a crash).
    Refused (LabBusyError) while another command brings it up or removes it, or when it exists
    under another run root."""
    with LabLock(lab, "down"):
        state = load_state(lab)
        if state is not None:
            return runtime_of(state).down(lab)
        from twin.runtime.containers import docker_labs

        return get_runtime("docker" if lab in docker_labs() else "netns").down(lab)
