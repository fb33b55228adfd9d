"""Twin renders the BGP instance surface line for line as SONiC's frrcfgd templates do.

Every case of bgp_catalog (every leaf of BGP_GLOBALS, BGP_GLOBALS_AF, BGP_NEIGHBOR, BGP_PEER_GROUP,
BGP_GLOBALS_AF_NETWORK, BGP_GLOBALS_AF_AGGREGATE_ADDR, BGP_GLOBALS_LISTEN_PREFIX and ROUTE_REDISTRIBUTE
twin emulates, with values of their types) is rendered by twin and by SONiC's own templates
(twin.stages.render.sonic_templates); every line of the BGP instance is compared in its context as FRR
shows it (twin.switch.frr.frr_drift.parse). A SONiC line twin lacks fails unless the allow-list leaves
it out; a line only twin renders fails unless the allow-list names it (twin_only); where twin renders
frrcfgd's line in place of the template's (FRRCFGD_LINES) exactly that pair differs. Twin's rendering
of every case is parsed by FRR 8.4's own vtysh (--dryrun), so no line twin sends is one FRR refuses.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bgp_catalog import CASES, FRRCFGD_LINES, config
from policy_catalog import base
from reference import TEMPLATES, needs_reference

from twin.model.routing_surface import surface
from twin.stages.render.frr import render_frr
from twin.stages.render.frr_differences import adapt_lines, twin_only
from twin.stages.render.sonic_templates import render_with_templates
from twin.switch.frr.frr_drift import Path as LinePath
from twin.switch.frr.frr_drift import parse

pytestmark = needs_reference
TABLES = ("BGP_GLOBALS", "BGP_GLOBALS_AF", "BGP_NEIGHBOR", "BGP_PEER_GROUP", "BGP_GLOBALS_AF_NETWORK",
          "BGP_GLOBALS_AF_AGGREGATE_ADDR", "BGP_GLOBALS_LISTEN_PREFIX", "ROUTE_REDISTRIBUTE")
# cases whose rows change nothing FRR runs, on SONiC as here
RENDER_NOTHING = {"neighbor-password", "peer-group-password", "neighbor-flags-false", "peer-group-flags-false",
                  "af-dampening-partial", "global-false", "global-mp-no-as-set"}


def _surface(text: str) -> set[LinePath]:
    """The BGP instance's lines, and bgpd's route-map delay (shown outside the instance)."""
    return {key for key, _ in parse(text) if key[0].startswith(("router bgp", "bgp route-map delay-timer"))}


def _sonic(name: str) -> set[LinePath]:
    assert TEMPLATES is not None
    return _surface("\n".join(adapt_lines(render_with_templates(TEMPLATES, config(name)).splitlines())))


def _leaves(table: str) -> set[str]:
    return {field for name in CASES for row in CASES[name].get(table, {}).values() for field in row}


def test_the_catalog_covers_every_leaf_the_surface_says_this_test_proves() -> None:
    in_base = {table: {f for row in base().get(table, {}).values() for f in row} for table in TABLES}
    proved = [e for e in surface().entries if e.reader == "frrcfgd" and e.status == "emulated"
              and (e.test or "").startswith("tests/fidelity/test_bgp_surface.py")]
    assert proved
    for entry in proved:
        if entry.field != "*":
            covered = _leaves(entry.table) | in_base[entry.table] | {"ip_prefix", "protocol"}   # key parts
            assert entry.field in covered, f"{entry.table} {entry.field}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_twin_renders_the_bgp_instance_as_sonic(name: str) -> None:
    sonic, twin = _sonic(name), _surface(render_frr(config(name)))
    instead = FRRCFGD_LINES.get(name)
    missing = sorted(p for p in sonic - twin if instead is None or p[-1] != instead[0])
    assert missing == []
    extra = [p for p in sorted(twin - sonic) if twin_only(p[-1]) is None and (instead is None or p[-1] != instead[1])]
    assert extra == []
    if instead is not None:
        assert any(p[-1] == instead[1] for p in twin) and not any(p[-1] == instead[0] for p in twin)
    if name not in RENDER_NOTHING:   # not vacuous: the case's rows change what FRR is given
        assert twin != _surface(render_frr(base()))
    else:
        assert twin == _surface(render_frr(base()))


def test_the_comparison_sees_a_dropped_option() -> None:
    """Not vacuous: SONiC's line is missing from a rendering that drops the field."""
    db = config("neighbor-solo-port-passive")
    del db["BGP_NEIGHBOR"]["default|10.0.0.0"]["passive_mode"]
    assert ("router bgp 65101", "neighbor 10.0.0.0 passive") in _sonic("neighbor-solo-port-passive") - _surface(
        render_frr(db))


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_frr_takes_every_line_twin_renders(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "frr.conf"
    conf.write_text(render_frr(config(name)))
    proc = subprocess.run(["vtysh", "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
