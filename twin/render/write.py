"""Write a plan's configs to disk: configs/<lab>/<switch>/{config_db.json, frr.conf}."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from twin.plan.models import Plan
from twin.render.config_db import dumps, node_config_db
from twin.render.frr import render_frr


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


def write_configs(plan: Plan, out: Path) -> list[Path]:
    """Replace `out` with the rendered configs. Only folders twin wrote before are removed."""
    return write_tree(out, rendered_files(plan), lambda d: (d / "config_db.json").exists())


def write_tree(root: Path, files: dict[str, str], ours: Callable[[Path], bool]) -> list[Path]:
    """Write `files` (`<node>/<name>` -> text) under `root`, and remove the node folders of an
    earlier write that are no longer wanted, where `ours(folder)` says twin wrote that folder."""
    root.mkdir(parents=True, exist_ok=True)
    wanted = {rel.split("/")[0] for rel in files}
    for child in root.iterdir():
        if child.is_dir() and child.name not in wanted and ours(child):
            shutil.rmtree(child)
    written = []
    for rel, text in sorted(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
