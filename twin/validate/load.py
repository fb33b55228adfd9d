"""Read a folder of per-switch configs: DIR/<switch>/config_db.json (what `twin plan -o` writes),
or DIR/<switch>.json. Unreadable input is an error (exit 2), not a finding."""

from __future__ import annotations

import json
from pathlib import Path

from twin.errors import PlanError, Problem
from twin.validate.findings import SwitchConfig


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
        try:
            db = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), "(json)", f"not valid JSON: {exc.msg}", "fix the syntax", exc.lineno))
            continue
        except OSError as exc:
            problems.append(Problem(str(path), "(file)", f"cannot read: {exc.strerror}"))
            continue
        if not isinstance(db, dict):
            problems.append(Problem(str(path), "(document)", "a config_db.json is an object of tables", "", 1))
            continue
        out.append(SwitchConfig(name, path, db))
    if problems:
        raise PlanError(problems)
    return out
