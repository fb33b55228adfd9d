"""Node kinds registered by name; runtimes and exports look them up instead of testing kind strings.

Adding a node kind: a module twin/kinds/<module>.py with its data file <module>.yaml and a `KIND`
object implementing NodeKind (twin.kinds.protocol: its facts, how it is prepared, its containerlab
`exec:` lines), plus one line in KINDS below (see CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib
import re
from typing import cast

from twin.kinds.facts import ClabKind
from twin.kinds.protocol import NodeKind
from twin.model.errors import TwinError
from twin.model.plan import NodePlan

# name -> module under twin.kinds holding `KIND`
KINDS: dict[str, str] = {
    "frr-switch": "frr_switch",
    "sonic-vs": "sonic_vs",
    "frr-router": "frr_router",
    "host": "host",
}
DEFAULT_SWITCH = "frr-switch"


def get_kind(name: str) -> NodeKind:
    try:
        module = KINDS[name]
    except KeyError:
        raise TwinError(f"unknown node kind '{name}'; available: {', '.join(KINDS)}") from None
    return cast(NodeKind, importlib.import_module(f"twin.kinds.{module}").KIND)


def switch_kind(image: str | None) -> NodeKind:
    """The kind of the lab's switches when they run `image`: the switch kind whose image_pattern
    matches it, else twin's own FRR switch."""
    if not image:
        return get_kind(DEFAULT_SWITCH)
    for name in KINDS:
        kind = get_kind(name)
        pattern = kind.facts.image_pattern
        if kind.facts.plan_kind == "switch" and pattern and re.search(pattern, image):
            return kind
    return get_kind(DEFAULT_SWITCH)


def clab_switch_kind(clab_kind: ClabKind) -> NodeKind:
    """The switch kind containerlab calls `clab_kind` (export's --kind)."""
    for name in KINDS:
        kind = get_kind(name)
        if kind.facts.plan_kind == "switch" and kind.facts.clab_kind == clab_kind:
            return kind
    raise TwinError(f"no switch kind is exported as containerlab kind '{clab_kind}'")


def kind_of(node: NodePlan, switches: NodeKind) -> NodeKind:
    """The kind of one node in a lab whose switches are of kind `switches`."""
    if node.kind == "switch":
        return switches
    for name in KINDS:
        kind = get_kind(name)
        if kind.facts.plan_kind == node.kind:
            return kind
    raise TwinError(f"{node.name}: no node kind is registered for plan kind '{node.kind}'")
