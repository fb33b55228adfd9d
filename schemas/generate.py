"""Write the JSON Schemas of twin's input files from their pydantic models: `make json-schemas`.

schemas/topology.schema.json is the topology file (topologies/*.yaml, twin.model.topology.TopologyFile),
schemas/lab.schema.json the lab file (labs/*.yaml, twin.model.lab.LabFile). Editors validate with them
(`# yaml-language-server: $schema=../schemas/topology.schema.json`); tests/unit/test_file_schemas.py fails
when a model changed and these files were not regenerated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from twin.model.lab import LabFile
from twin.model.topology import TopologyFile

HERE = Path(__file__).resolve().parent
DIALECT = "https://json-schema.org/draft/2020-12/schema"

# file name -> (the model, the title editors show, what the file is)
SCHEMAS: dict[str, tuple[type[BaseModel], str, str]] = {
    "topology.schema.json": (TopologyFile, "twin topology file",
                             "A twin topology (topologies/*.yaml): kind clos, rail or explicit, and fabric "
                             "settings. Generated from twin.model.topology.TopologyFile by schemas/generate.py."),
    "lab.schema.json": (LabFile, "twin lab file",
                        "A twin lab (labs/*.yaml): a topology file plus runtime, health, gNMI, SLO, drill, "
                        "traffic and RoCE settings. Generated from twin.model.lab.LabFile by schemas/generate.py."),
}


def schema_of(model: type[BaseModel], title: str, description: str) -> dict[str, Any]:
    """The model's JSON Schema (what the model validates), with the dialect, a title and a description."""
    body = model.model_json_schema(mode="validation")
    body.pop("title", None)
    body.pop("description", None)
    return {"$schema": DIALECT, "title": title, "description": description, **body}


def render() -> dict[str, str]:
    """Each schema file's name and text, exactly as committed."""
    return {name: json.dumps(schema_of(*spec), indent=2, ensure_ascii=False) + "\n"
            for name, spec in SCHEMAS.items()}


def main(folder: Path = HERE) -> int:
    for name, text in render().items():
        path = folder / name
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            path.write_text(text, encoding="utf-8")
        print(f"{path}: {'up to date' if old == text else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
