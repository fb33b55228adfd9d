"""Scenario files: a drill of several timed faults, as `twin drill --scenario` and a lab's drills name them."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from twin.model.drill import Scenario
from twin.model.errors import PlanError
from twin.stages.load.loader import pydantic_problems
from twin.stages.load.source import load_yaml


def load_scenario(path: Path) -> Scenario:
    doc = load_yaml(path)
    data = dict(doc.data)
    data.setdefault("name", path.stem)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise PlanError(pydantic_problems(doc, exc)) from None
