"""A node kind's facts, read from its data file (twin/kinds/<module>.yaml) and checked on load.

The facts are what differs between kinds of node as data: the plan's word for the node, the image it
runs, its management interface, sysctls, what containerlab calls it and where files are bound inside
its container. Code in the kind's module covers only the quirks data cannot say (port naming, boot).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from twin import __version__
from twin.model.errors import TwinError

ClabKind = Literal["linux", "sonic-vs"]
# How runtimes start a node of the kind: twin's switch (databases, kernel, FRR from config_db.json),
# the user's FRR files, a server's per-NIC set-up, or SONiC-VS's boot order (twin.kinds.sonic_vs).
Boot = Literal["twin-switch", "frr", "server", "sonic-vs"]


class _Facts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ContainerFacts(_Facts):
    """How the node's container is created (Docker Engine API create_container / host config)."""

    init: bool = True                             # docker's --init (tini) as PID 1
    entrypoint: list[str] | None = None           # None: the image's own
    tty: bool = False
    stdin_open: bool = False
    security_opt: list[str] | None = None
    network_mode: Literal["none"] | None = None   # "none": no management network (servers)
    # run-directory sub-folder ("." for itself) -> where it is bound inside the container
    run_dir_binds: dict[str, str] = {}

    def create_options(self) -> dict[str, Any]:
        """create_container keywords beyond the image's defaults ({} when it keeps them)."""
        if self.entrypoint is None and not self.tty and not self.stdin_open:
            return {}
        return {"entrypoint": self.entrypoint, "tty": self.tty, "stdin_open": self.stdin_open}

    def binds(self, rundir: Path) -> dict[str, dict[str, str]]:
        """run_dir_binds as the Engine API wants binds, the folders made."""
        out = {}
        for sub, target in self.run_dir_binds.items():
            folder = rundir if sub == "." else rundir / sub
            folder.mkdir(parents=True, exist_ok=True)
            out[str(folder)] = {"bind": target, "mode": "rw"}
        return out


class KindFacts(_Facts):
    name: str                                     # the name the kinds registry knows it by
    summary: str
    plan_kind: Literal["switch", "router", "host"]   # NodePlan.kind of the nodes of this kind
    clab_kind: ClabKind                           # containerlab's kind for such a node
    boot: Boot                                    # how runtimes start it
    # The image it runs by default; "{version}" is twin's version. None: the lab's switch image decides.
    image: str | None = None
    image_pattern: str | None = None              # switch images that make a switch this kind (regex)
    runs_linux_nodes: bool = True                 # its image also runs the lab's servers and routers
    image_hint: str = "load it with 'docker load'"   # how to get the image onto a machine without a registry
    # vtysh and the SONiC CLI run as they are inside the node (SONiC's own); False: twin points them at
    # the daemons and databases it runs from the node's run directory
    own_cli: bool = False
    mgmt_interface: str | None = None
    sysctls: dict[str, str] = {}
    # file of the node's run directory -> where containerlab binds it (":ro" when read-only)
    clab_binds: dict[str, str] = {}
    container: ContainerFacts = ContainerFacts()

    def default_image(self) -> str | None:
        return None if self.image is None else self.image.format(version=__version__)


@cache
def load_facts(module: str) -> KindFacts:
    """The facts in twin/kinds/<module>.yaml; TwinError naming the file when it is missing or wrong."""
    path = resources.files("twin.kinds").joinpath(f"{module}.yaml")
    try:
        return KindFacts.model_validate(yaml.safe_load(path.read_text()))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise TwinError(f"node kind data file twin/kinds/{module}.yaml: {exc}") from None
