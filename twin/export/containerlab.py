"""`twin export clab`: write a plan as a containerlab topology file plus the files it binds, checked
against containerlab's JSON schema.

The topology itself (one container per node, what each kind of node runs and why) is built by
twin.runtime.clab.topology, the same builder the clab runtime deploys from.

Bind paths are relative to the topology file, as containerlab resolves them, so the topology
and its `<lab>-files/` folder move together. Before anything is written, the topology is
validated against containerlab's JSON schema when one is found (TWIN_CLAB_SCHEMA, or
containerlab/clab.schema.json in the reference folder, twin.host.reference); without one, validation is
skipped and callers say so. The bound files go only into a new or empty folder or one an earlier
export wrote (twin.host.owned): nothing else in it is overwritten or removed.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT7

from twin.host.owned import write_owned
from twin.host.reference import reference_path
from twin.kinds.facts import ClabKind
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.runtime.clab.topology import GENERATED_NOTE, clab_topology, dump_yaml, node_files

SCHEMA_ENV = "TWIN_CLAB_SCHEMA"
SCHEMA_REL = "containerlab/clab.schema.json"  # inside the reference folder (twin.host.reference)
MESSAGE_MAX = 200            # schema messages quote whole enums; keep each line readable

# The schema's rule for a short-form endpoint. It sits under `prefixItems`, which draft-07 (the
# schema's dialect) does not know, so validate_clab applies it itself.
_ENDPOINT = re.compile(r"^\S+:\S+$")
# Python's re has no Unicode property classes: \w (letters, digits, underscore) stands in.
_UNICODE_CLASS = re.compile(r"\\p\{[A-Za-z_]+\}")


def files_dir_name(lab: str) -> str:
    """The folder beside the topology file that holds the bound files."""
    return f"{lab}-files"


def write_clab(plan: Plan, out: Path, *, kind: ClabKind, image: str, host_image: str | None = None,
               mgmt_subnet: str | None = None, lab_name: str | None = None) -> list[Path]:
    """Write the topology to `out` and the files it binds to `<out dir>/<lab>-files/`.

    The topology is validated first (when a schema is found): nothing is written when it is
    invalid, nor when `<lab>-files/` holds files twin did not write (twin.host.owned). `out` itself,
    the file the user named, is replaced. Returns the files written, the topology first.
    """
    lab = lab_name or plan.name
    rel = files_dir_name(lab)
    doc = clab_topology(plan, kind=kind, image=image, files_dir=rel, mgmt_subnet=mgmt_subnet, lab_name=lab,
                        host_image=host_image)
    errors = validate_clab(doc)
    if errors:
        raise TwinError(f"the generated containerlab topology does not validate against {find_clab_schema()}:\n"
                        + "\n".join(errors))
    files = node_files(plan, kind)
    if out.is_dir():
        raise TwinError(f"{out} is a folder: name the .clab.yml file to write (the bound files go beside it)")
    written = write_owned(out.parent / rel, files, "twin export clab", prune=True)
    out.write_text(f"# containerlab topology of {plan.name}, {GENERATED_NOTE}.\n"
                   f"# Deploy: containerlab deploy -t {out.name}\n" + dump_yaml(doc))
    return [out, *written]


# -- schema validation --------------------------------------------------------------------------

def find_clab_schema() -> Path | None:
    """containerlab's JSON schema: TWIN_CLAB_SCHEMA, else containerlab/clab.schema.json in the
    reference folder ($TWIN_SONIC_REFERENCE, else $XDG_DATA_HOME/twin/reference)."""
    explicit = os.environ.get(SCHEMA_ENV)
    candidate = Path(explicit) if explicit else reference_path(SCHEMA_REL)
    return candidate if candidate is not None and candidate.is_file() else None


def schema_found() -> bool:
    """Whether validate_clab has a schema to validate against (otherwise it returns [])."""
    return find_clab_schema() is not None


def validate_clab(doc: dict[str, Any]) -> list[str]:
    """Every way `doc` breaks containerlab's schema, one line each; [] when valid or no schema is found."""
    path = find_clab_schema()
    if path is None:
        return []
    validator = _validator(str(path))
    try:
        errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    except Unresolvable as exc:
        raise TwinError(f"{path}: {exc}; only references inside the schema are followed (nothing is fetched)") from None
    return [line for e in errors for line in _describe(e)] + _endpoint_problems(doc)


@functools.cache
def _validator(path: str) -> Validator:
    """A validator for the schema at `path`, offline: a `$ref` to anything but the schema is not fetched."""
    try:
        schema = _python_patterns(json.loads(Path(path).read_text()))
    except (OSError, json.JSONDecodeError) as exc:
        raise TwinError(f"containerlab schema {path} cannot be read: {exc}") from None
    cls = validator_for(schema, default=Draft7Validator)
    resource: Resource[Any] = Resource.from_contents(schema, default_specification=DRAFT7)
    registry: Registry[Any] = Registry().with_resource(schema.get("$id", Path(path).as_uri()), resource)
    return cls(schema, registry=registry)


def _python_patterns(node: Any) -> Any:
    """The schema with its regexes rewritten for Python's re (no \\p{...} classes there)."""
    if isinstance(node, list):
        return [_python_patterns(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and isinstance(value, str):
            out[key] = _UNICODE_CLASS.sub(r"\\w", value)
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {_UNICODE_CLASS.sub(r"\\w", k): _python_patterns(v) for k, v in value.items()}
        else:
            out[key] = _python_patterns(value)
    return out


def _describe(error: ValidationError) -> list[str]:
    """`path: message` lines; for anyOf/oneOf failures, those of the branch the value came closest to."""
    if error.context:
        return [line for sub in _closest_branch(error) for line in _describe(sub)]
    where = "/".join(str(p) for p in error.absolute_path) or "(document)"
    message = error.message if len(error.message) <= MESSAGE_MAX else error.message[:MESSAGE_MAX - 3] + "..."
    return [f"{where}: {message}"]


def _closest_branch(error: ValidationError) -> list[ValidationError]:
    """The failed alternative that was meant: not one of another type; the fewest, then deepest, errors."""
    branches: dict[str | int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    depth = len(error.absolute_path)

    def other_type(errs: list[ValidationError]) -> bool:
        return all(e.validator == "type" and len(e.absolute_path) == depth for e in errs)

    candidates = [errs for errs in branches.values() if not other_type(errs)] or list(branches.values())
    return min(candidates, key=lambda errs: (len(errs), -max(len(e.absolute_path) for e in errs)))


def _endpoint_problems(doc: dict[str, Any]) -> list[str]:
    topology = doc.get("topology")
    links = topology.get("links") if isinstance(topology, dict) else None
    problems = []
    for i, link in enumerate(links if isinstance(links, list) else []):
        ends = link.get("endpoints") if isinstance(link, dict) else None
        for j, end in enumerate(ends if isinstance(ends, list) else []):
            if isinstance(end, str) and not _ENDPOINT.match(end):
                problems.append(f"topology/links/{i}/endpoints/{j}: '{end}' does not match '{_ENDPOINT.pattern}' "
                                "(node:interface)")
    return problems
