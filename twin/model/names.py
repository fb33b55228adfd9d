"""The names a user gives that become paths and kernel names: a lab's and a node's.

Checked here, once, before any path is built from them (twin.host.rundir builds every path of a lab
from these and calls the checks itself): a name is a name, never a path, so `twin down --name ..`
or `--name /` cannot point a removal outside the run root's own lab folders.
"""

from __future__ import annotations

import re

from twin.model.errors import PlanError, Problem

# Lab names become part of kernel interface names (tw-<lab>, 15 characters at most) and of
# namespace names (tw.<lab>.<node>); no '.', '/' or '_' (FRR pathspaces are tw_<lab>_<node>).
LAB_NAME = re.compile(r"^[a-z][a-z0-9-]{0,11}$")
# Node names as a topology may spell them (twin.model.topology.NAME_PATTERN, at most 40 characters).
NODE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")


def is_lab_name(name: str) -> bool:
    return LAB_NAME.fullmatch(name) is not None


def check_lab_name(name: str, source: str = "--name") -> None:
    """Refuse a lab name that is not one (PlanError naming `source`, the option or file it came from)."""
    if not is_lab_name(name):
        raise PlanError([Problem(
            source, "name", f"lab name {name!r} is not usable: lab names are 1-12 characters of a-z, 0-9 "
            "and '-', starting with a letter, because they become part of kernel interface names "
            "(at most 15 characters) and of the lab's folder under the run directory",
            "pick another name with --name")])


def check_node_name(name: str, source: str = "node") -> None:
    """Refuse a node name that could not be a topology's (a path, '..', a '/')."""
    if NODE_NAME.fullmatch(name) is None:
        raise PlanError([Problem(
            source, "node", f"node name {name!r} is not usable: node names are letters, digits, '_' and '-', "
            "starting with a letter, at most 40 characters", "name a node of the lab ('twin status' lists them)")])
