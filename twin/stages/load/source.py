"""Read a YAML file and remember the line of every key, so errors can point at it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from twin.host.userfile import read_yaml
from twin.model.errors import PlanError, Problem

Loc = tuple[str | int, ...]


@dataclass
class YamlDoc:
    """A parsed YAML document and the 1-based line of each key or list item in it."""

    path: Path
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.path)

    def line_of(self, loc: Loc) -> int | None:
        """The line of `loc`, or of its closest ancestor that has one."""
        key = tuple(loc)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), None)

    def problem(self, loc: Loc, message: str, fix: str = "") -> Problem:
        dotted = ".".join(str(p) for p in loc) or "(document)"
        return Problem(file=self.name, line=self.line_of(loc), field=dotted, message=message, fix=fix)


def _record(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key: str | int = key_node.value
            sub = (*loc, key)
            lines[sub] = key_node.start_mark.line + 1
            _record(value_node, sub, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            sub = (*loc, i)
            lines[sub] = item.start_mark.line + 1
            _record(item, sub, lines)


def parse_doc(path: Path, *, within: Path | None = None, missing_fix: str = "check the path") -> YamlDoc:
    """Read and parse `path` (twin.host.userfile's limits) into a YamlDoc, whatever its top level holds;
    anything unreadable or malformed raises one PlanError that names the line."""
    data, root = read_yaml(path, within=within, missing_fix=missing_fix)
    lines: dict[Loc, int] = {(): 1}
    if root is not None:
        _record(root, (), lines)
    return YamlDoc(path=path, data=data, lines=lines)


def load_yaml(path: Path) -> YamlDoc:
    """Parse `path`, a mapping at the top level; a missing or malformed file raises one PlanError naming the line."""
    doc = parse_doc(path)
    if not isinstance(doc.data, dict):
        raise PlanError(
            [Problem(str(path), "(document)", "expected a mapping at the top level",
                     "start the file with keys such as 'name:' and 'kind:'", 1)]
        )
    return doc
