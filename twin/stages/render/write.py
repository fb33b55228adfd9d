"""Write a plan's configs to disk: configs/<lab>/<switch>/{config_db.json, frr.conf}."""

from __future__ import annotations

from pathlib import Path

from twin.host.owned import write_owned
from twin.model.plan import Plan
from twin.stages.render.config_db import dumps, node_config_db
from twin.stages.render.frr import render_frr


def rendered_files(plan: Plan) -> dict[str, str]:
    """Relative path -> content for every switch we render (imported FRR routers keep their own)."""
    files: dict[str, str] = {}
    for node in plan.nodes:
        if node.kind != "switch":
            continue
        db = node_config_db(plan, node)
        files[f"{node.name}/config_db.json"] = dumps(db)
        files[f"{node.name}/frr.conf"] = render_frr(db)
    return files


def write_configs(plan: Plan, out: Path, command: str = "twin plan -o") -> list[Path]:
    """Write the rendered configs into `out`, a new or empty folder or one twin wrote before
    (twin.host.owned): the files of an earlier write that are no longer rendered are removed, nothing
    else is touched. TwinError, with nothing written, when `out` holds files twin did not write."""
    return write_owned(out, rendered_files(plan), command, prune=True)


def write_tree(root: Path, files: dict[str, str]) -> list[Path]:
    """Write `files` (`<node>/<name>` -> text) under `root`, a folder of twin's own (a lab's run
    directory); nothing is removed."""
    written = []
    for rel, text in sorted(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
