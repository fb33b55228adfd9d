"""Load a topology file (twin intent YAML, containerlab .clab.yml, NVIDIA Air .json/.dot) into a validated Topology.

The stages, each collecting every problem before it stops: parse (line-numbered), expand or import,
validate the topology, then read and check the config_db.json files switches bring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from twin.model.errors import PlanError, Problem
from twin.model.topology import Endpoint, Link, Node, Topology, TopologyFile
from twin.stages.load import generators
from twin.stages.load.air import AirDoc, read_air, to_topology
from twin.stages.load.bound_config import with_configs
from twin.stages.load.source import YamlDoc, load_yaml
from twin.stages.load.topology_checks import validate_topology

FIX_MARK = " | fix: "  # validators raise ValueError(f"{message}{FIX_MARK}{fix}")


def pydantic_problems(doc: YamlDoc, exc: ValidationError, base: tuple[str | int, ...] = ()) -> list[Problem]:
    """Turn pydantic's errors into problems that name the file, the line and the field."""
    problems = []
    for err in exc.errors():
        loc = (*base, *(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))))
        kind = err["type"]
        if kind == "extra_forbidden":
            message, fix = "unknown field", "remove it or check its spelling"
        elif kind == "missing":
            message, fix = "required field is missing", "add it"
        elif kind == "value_error" and FIX_MARK in err["msg"]:  # a validator's own "message | fix: fix"
            message, _, fix = err["msg"].removeprefix("Value error, ").partition(FIX_MARK)
        else:
            message, fix = err["msg"], "correct the value"
            if "input" in err and not isinstance(err["input"], dict | list):
                message += f" (got {err['input']!r})"
        problems.append(doc.problem(loc, message, fix))
    return problems


def is_clab(doc: YamlDoc) -> bool:
    return isinstance(doc.data.get("topology"), dict)


def load_topology(path: Path) -> Topology:
    """Read (once), expand and validate; raise one PlanError listing every problem found."""
    air = read_air(path)  # NVIDIA Air topologies: .dot, or .json of Air's shape
    return topology_from(air if air is not None else load_yaml(path))


def topology_from(source: YamlDoc | AirDoc) -> Topology:
    """The topology of a file already read: an Air topology, a twin topology file or a containerlab
    file; expanded and validated, one PlanError listing every problem found."""
    topo = to_topology(source) if isinstance(source, AirDoc) else _from_yaml(source)
    problems = validate_topology(topo)
    if problems:
        raise PlanError(topo.locate(problems))
    return with_configs(topo)  # switches that bring their own config_db.json: read and checked


def _from_yaml(doc: YamlDoc) -> Topology:
    """A twin topology file or a containerlab file, with the line of every field."""
    if is_clab(doc):
        from twin.stages.load.clab_import import import_clab

        topo = import_clab(doc)
    else:
        topo = _from_twin(doc)
    lines = {".".join(str(p) for p in loc): line for loc, line in doc.lines.items() if loc}
    return topo.model_copy(update={"lines": lines})


def _from_twin(doc: YamlDoc) -> Topology:
    try:
        spec = TopologyFile.model_validate(doc.data)
    except ValidationError as exc:
        raise PlanError(pydantic_problems(doc, exc)) from None
    kind_spec: Any = {"clos": spec.clos, "rail": spec.rail}.get(spec.kind)
    if spec.kind in ("clos", "rail") and kind_spec is None:
        raise PlanError([doc.problem(("kind",), f"kind '{spec.kind}' needs a '{spec.kind}:' section",
                                     f"add '{spec.kind}:' with the fabric's sizes")])
    if spec.kind == "clos":
        nodes, links, problems = generators.clos(spec.clos, spec.fabric)  # type: ignore[arg-type]
    elif spec.kind == "rail":
        nodes, links, problems = generators.rail(spec.rail, spec.fabric)  # type: ignore[arg-type]
    else:
        nodes, links, problems = _explicit(doc, spec)
    if problems:
        raise PlanError([doc.problem((p.field,), p.message, p.fix) if not p.file else p for p in problems])
    return Topology(name=spec.name, kind=spec.kind, source=doc.name, fabric=spec.fabric,
                    nodes=nodes, links=links)


def parse_endpoint(text: str) -> Endpoint:
    node, _, iface = text.partition(":")
    return Endpoint(node=node.strip(), iface=iface.strip() or None)


def _explicit(doc: YamlDoc, spec: TopologyFile) -> tuple[list[Node], list[Link], list[Problem]]:
    problems: list[Problem] = []
    if not spec.nodes:
        problems.append(doc.problem(("nodes",), "an explicit topology needs nodes", "add a 'nodes:' mapping"))
    counters: dict[str, int] = {}
    nodes = []
    base = doc.path.parent
    for name, ns in spec.nodes.items():
        counters[ns.role] = counters.get(ns.role, 0) + 1
        nodes.append(Node(
            name=name, role=ns.role, index=ns.index or counters[ns.role], asn=ns.asn, image=ns.image,
            frr_conf=(base / ns.frr_conf) if ns.frr_conf else None,
            daemons=(base / ns.daemons) if ns.daemons else None,
            config_db=(base / ns.config_db).absolute() if ns.config_db else None, exec=ns.exec,
        ))
    links = []
    for i, ls in enumerate(spec.links):
        a, b = (parse_endpoint(e) for e in ls.endpoints)
        links.append(Link(a=a, b=b, line=doc.line_of(("links", i))))
    return nodes, links, problems
