"""Every config twin generates, rendered with SONiC's own templates, is one a SONiC switch routes with.

For each shipped lab, the plan's config_db.json of every switch is fed to SONiC's frrcfgd templates
(sonic-frr-templates in the reference folder, `frr.conf.j2` as sonic-cfggen feeds it) and the resulting
FRR config is read for what it means: every neighbor active for IPv4 with a permitting policy both
ways, the loopback and server subnets announced, maximum-paths at least the spine count, BFD on every
session. The same configs pass SONiC's YANG models whole, and twin's own rendering means the same.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from frr_semantics import parse, semantics
from reference import REFERENCE, REPO, TEMPLATES, needs_reference

from twin.model.findings import SwitchConfig
from twin.model.plan import NodePlan, Plan
from twin.stages import configdb
from twin.stages.lab_file import load_lab
from twin.stages.render.config_db import build_config_db
from twin.stages.render.frr import render_frr
from twin.stages.render.sonic_templates import render_with_templates
from twin.stages.validate.yang import yang_findings

pytestmark = needs_reference
LABS = sorted((REPO / "labs").glob("*.yaml"))


def _switches(lab: Path) -> tuple[Plan, list[NodePlan]]:
    plan = load_lab(lab).plan
    return plan, [n for n in plan.nodes if n.kind == "switch"]


def _problems(plan: Plan, node: NodePlan, db: dict[str, Any]) -> list[str]:
    assert TEMPLATES is not None
    bgp = parse(render_with_templates(TEMPLATES, db))
    out = [f"{node.name}: {p}" for p in bgp.problems()]
    if len(bgp.neighbors()) != len(node.neighbors):
        out.append(f"{node.name}: SONiC renders {len(bgp.neighbors())} neighbors, the plan has {len(node.neighbors)}")
    missing = {str(n) for n in node.networks} - bgp.networks
    if missing:
        out.append(f"{node.name}: {sorted(missing)} not announced")
    spines = len(plan.by_role("spine"))
    if bgp.max_paths is None or bgp.max_paths < spines:
        out.append(f"{node.name}: maximum-paths {bgp.max_paths} < {spines} spines")
    if plan.fabric.bfd.enabled:
        out += [f"{node.name}: no BFD on {p.name}" for p in bgp.neighbors() if not p.bfd]
    return out


@pytest.mark.parametrize("lab", LABS, ids=[p.stem for p in LABS])
def test_sonic_templates_route_with_every_generated_config(lab: Path) -> None:
    plan, switches = _switches(lab)
    problems = [p for node in switches for p in _problems(plan, node, build_config_db(plan, node))]
    assert problems == []


@pytest.mark.parametrize("lab", LABS, ids=[p.stem for p in LABS])
def test_twin_renders_what_sonic_renders(lab: Path) -> None:
    """Neighbors, activation, policies, networks, maximum-paths, BFD, timers: the same meaning."""
    assert TEMPLATES is not None
    plan, switches = _switches(lab)
    for node in switches:
        db = build_config_db(plan, node)
        assert semantics(parse(render_frr(db))) == semantics(parse(render_with_templates(TEMPLATES, db))), node.name


@pytest.mark.parametrize("lab", LABS, ids=[p.stem for p in LABS])
def test_every_generated_table_has_a_yang_model_and_passes_it(lab: Path, tmp_path: Path) -> None:
    assert REFERENCE is not None
    plan, switches = _switches(lab)
    cfgs = [SwitchConfig(n.name, tmp_path / n.name / "config_db.json", build_config_db(plan, n)) for n in switches]
    assert [t for c in cfgs for t in c.db if t not in configdb.KNOWN_TABLES] == []
    assert [str(f) for f in yang_findings(cfgs, REFERENCE / "sonic-yang-models")] == []


@pytest.mark.parametrize(("drop", "expected"), [
    pytest.param("BGP_PEER_GROUP_AF", "is not active for IPv4 unicast", id="no-af-activation"),
    pytest.param("ROUTE_MAP", "policy that permits", id="no-route-map-statements"),
])
def test_the_check_catches_a_config_that_would_carry_nothing(drop: str, expected: str) -> None:
    """The oracle above is not vacuous: without activation or policy SONiC's rendering carries nothing."""
    plan, switches = _switches(REPO / "labs/default.yaml")
    node = switches[0]
    db = copy.deepcopy(build_config_db(plan, node))
    del db[drop]
    problems = _problems(plan, node, db)
    assert len(problems) >= len(node.neighbors) and all(expected in p for p in problems), problems
