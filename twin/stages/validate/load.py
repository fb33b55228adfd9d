"""Read a folder of per-switch configs: DIR/<switch>/config_db.json (what `twin plan -o` writes),
or DIR/<switch>.json. Unreadable input is an error (exit 2), not a finding."""

from __future__ import annotations

from pathlib import Path

from twin.host.userfile import read_config_db
from twin.model.errors import PlanError, Problem
from twin.model.findings import SwitchConfig


def load_configs(directory: Path) -> list[SwitchConfig]:
    if not directory.is_dir():
        raise PlanError([Problem(str(directory), "(folder)", "not a folder of switch configs",
                                 "give the folder that holds <switch>/config_db.json")])
    paths = sorted(directory.glob("*/config_db.json")) or sorted(directory.glob("*.json"))
    if not paths:
        raise PlanError([Problem(str(directory), "(folder)", "no config_db.json files found",
                                 "expected <switch>/config_db.json or <switch>.json inside")])
    problems, out = [], []
    for path in paths:
        name = path.parent.name if path.name == "config_db.json" else path.stem
        try:  # twin.host.userfile: a regular UTF-8 file inside the folder, a JSON object of tables of objects
            db = read_config_db(path, within=directory, missing_fix="check the folder")
        except PlanError as exc:
            problems += exc.problems
            continue
        out.append(SwitchConfig(name, path, db))
    if problems:
        raise PlanError(problems)
    return out
