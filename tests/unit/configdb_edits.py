"""Shared test helpers: the committed leaf1 config_db and small in-place edits of a CONFIG_DB."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from twin.stages.configdb import ConfigDb

LEAF1 = Path(__file__).resolve().parents[2] / "configs" / "default" / "leaf1" / "config_db.json"

Mutation = Callable[[ConfigDb], Any]


def set_at(*path: str, value: Any) -> Mutation:
    """Set db[path...] = value (creating nothing on the way); returns the db."""
    def mutate(db: ConfigDb) -> ConfigDb:
        node: Any = db
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
        return db
    return mutate


def drop_at(*path: str) -> Mutation:
    """Delete db[path...]; returns the db."""
    def mutate(db: ConfigDb) -> ConfigDb:
        node: Any = db
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]
        return db
    return mutate


def both(first: Mutation, second: Mutation) -> Mutation:
    def mutate(db: ConfigDb) -> ConfigDb:
        first(db)
        second(db)
        return db
    return mutate
