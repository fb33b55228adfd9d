"""The JSON Schemas of the topology and lab files (schemas/*.schema.json): generated from the models,
committed in step with them, and every shipped topology and lab validates against its schema."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from twin.model.lab import LabFile
from twin.model.topology import TopologyFile

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.yaml"))
LABS = sorted((ROOT / "labs").glob("*.yaml"))


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("schemas_generate", SCHEMAS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return body


def _errors(schema: dict[str, Any], doc: Any) -> list[str]:
    """Every error with where it is, those inside an anyOf (an optional section) included."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    found = []
    pending = list(validator.iter_errors(doc))
    while pending:
        e = pending.pop()
        found.append(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
        pending += e.context or []
    return found


def test_the_committed_schemas_are_what_the_models_generate() -> None:
    generated = _generator().render()
    assert set(generated) == {"topology.schema.json", "lab.schema.json"}
    for name, text in generated.items():
        committed = (SCHEMAS / name).read_text(encoding="utf-8")
        assert committed == text, (f"schemas/{name} is not what the models generate: a model changed; "
                                   "run `make json-schemas` and commit the result")


def test_the_generator_writes_the_files_it_compares(tmp_path: Path) -> None:
    _generator().main(tmp_path)
    for name in ("topology.schema.json", "lab.schema.json"):
        assert (tmp_path / name).read_text(encoding="utf-8") == (SCHEMAS / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["topology.schema.json", "lab.schema.json"])
def test_each_schema_is_a_valid_2020_12_schema(name: str) -> None:
    schema = _schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_there_are_shipped_files_to_check() -> None:
    assert len(TOPOLOGIES) >= 4 and len(LABS) >= 4


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.name)
def test_every_shipped_topology_validates_against_the_topology_schema(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert _errors(_schema("topology.schema.json"), doc) == []


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_every_shipped_lab_validates_against_the_lab_schema(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert _errors(_schema("lab.schema.json"), doc) == []


# What an editor must flag, each refused by the model too: the schema says what the loader says.
BAD_TOPOLOGIES = [
    ({"name": "x", "kind": "mesh"}, "kind"),
    ({"name": "x", "kind": "clos", "clos": {"spines": 2, "leaves": 4, "spine": 1}}, "clos"),
    ({"name": "x", "kind": "clos", "clos": {"spines": 0, "leaves": 4}}, "clos/spines"),
    ({"name": "1x", "kind": "clos"}, "name"),
    ({"name": "x", "kind": "explicit", "nodes": {"a": {"role": "tor"}}}, "nodes/a/role"),
    ({"name": "x", "kind": "explicit", "links": [{"endpoints": ["a:Ethernet0"]}]}, "links/0/endpoints"),
    ({"name": "x", "kind": "clos", "fabric": {"mtu": 99999}}, "fabric/mtu"),
]
BAD_LABS = [
    ({"name": "x"}, "(top)"),
    ({"name": "x", "topology": "t.yaml", "runtime": "kvm"}, "runtime"),
    ({"name": "x", "topology": "t.yaml", "gnmi": {"port": 0}}, "gnmi/port"),
    ({"name": "x", "topology": "t.yaml", "health": {"timeout": 5}}, "health"),
    ({"name": "x", "topology": "t.yaml", "roce": {"compute_dscp": 64}}, "roce/compute_dscp"),
]


@pytest.mark.parametrize(("doc", "where"), BAD_TOPOLOGIES)
def test_the_topology_schema_refuses_what_the_model_refuses(doc: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError):
        TopologyFile.model_validate(doc)
    errors = _errors(_schema("topology.schema.json"), doc)
    assert any(e.startswith(f"{where}:") for e in errors), errors


@pytest.mark.parametrize(("doc", "where"), BAD_LABS)
def test_the_lab_schema_refuses_what_the_model_refuses(doc: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError):
        LabFile.model_validate(doc)
    errors = _errors(_schema("lab.schema.json"), doc)
    assert any(e.startswith(f"{where}:") for e in errors), errors
