"""A lab's run directory and its state on disk (twin.model.state), written before anything is created,
so a crash can be cleaned up.

Layout under the run directory (default /run/twin, env TWIN_RUN_DIR):
  <lab>/state.json       the inventory: runtime, phase, namespaces, management addresses
  <lab>/plan.json        the plan the lab was brought up from
  <lab>/nodes/<node>/    per-node files: config_db.json, frr.conf, FRR pid files and vty sockets

Every path of a lab is built here, from names checked here (twin.model.names): a lab or node name that
is not one is refused before any path exists, and a removal is confined to the run root's own lab
folders, so no name a user types can point it anywhere else.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from twin.model.errors import TwinError
from twin.model.names import check_lab_name, check_node_name, is_lab_name
from twin.model.plan import Plan
from twin.model.state import LabState


def run_root() -> Path:
    return Path(os.environ.get("TWIN_RUN_DIR", "/run/twin"))


# What a lab needs in its run directory: each node's files, FRR's and redis's logs and dumps as they
# grow (about 70 KiB a node right after bring-up), with room to spare, and a floor for a small lab.
ROOM_PER_NODE = 1 << 20
ROOM_FLOOR = 16 << 20


def check_room(nodes: int) -> None:
    """Refuse to start a lab of `nodes` nodes where its run directory's filesystem has not the room
    (a full disk at `twin up` failed with a bare Errno 28 half-way through the switches)."""
    where = run_root()
    probe = where
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    need = ROOM_FLOOR + nodes * ROOM_PER_NODE
    free = shutil.disk_usage(probe).free
    if free < need:
        raise TwinError(f"not enough space for the lab's files in {where}: {free >> 20} MiB free on its "
                        f"filesystem, a lab of {nodes} nodes needs {need >> 20} MiB; free some space there, or "
                        "set TWIN_RUN_DIR to a folder on a filesystem with room")


def lab_dir(lab: str) -> Path:
    check_lab_name(lab)
    return run_root() / lab


def node_dir(lab: str, node: str) -> Path:
    check_node_name(node)
    return lab_dir(lab) / "nodes" / node


def save_state(state: LabState) -> None:
    path = lab_dir(state.lab) / "state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(state.model_dump_json(indent=2))
    tmp.replace(path)


def load_state(lab: str) -> LabState | None:
    path = lab_dir(lab) / "state.json"
    try:
        return LabState.model_validate_json(path.read_text())
    except FileNotFoundError:
        return None


def save_plan(lab: str, plan: Plan) -> None:
    path = lab_dir(lab) / "plan.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan.model_dump_json(indent=1))


def load_plan(lab: str) -> Plan:
    path = lab_dir(lab) / "plan.json"
    try:
        return Plan.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        raise TwinError(f"lab '{lab}' is not running (no {path}); start it with 'twin up'") from None


def known_labs() -> list[str]:
    root = run_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if is_lab_name(p.name) and p.is_dir() and not p.is_symlink())


def remove_lab_dir(lab: str) -> None:
    """Remove the lab's folder, and nothing but a folder directly in the run root: a symlink in its
    place is removed as a link, never followed."""
    path = lab_dir(lab)   # a checked name: one folder directly in the run root, nothing else
    if path.is_symlink():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)   # rmtree removes links inside, never what they point to
