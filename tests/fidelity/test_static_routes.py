"""Twin gives staticd the static routes SONiC's frrcfgd templates render (staticd.db.conf.j2), line for line.

Every case (every leaf of sonic-static-route.yang's STATIC_ROUTE twin emulates, with values of their
types, one or several next hops, IPv4 and IPv6, keys with and without the VRF) is rendered by twin and by
SONiC's own templates (twin.stages.render.sonic_templates); the `ip route` / `ipv6 route` lines must be
the same. Twin's rendering of every case is parsed by FRR 8.4's own vtysh (--dryrun).
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from policy_catalog import base
from reference import TEMPLATES, needs_reference

from twin.stages.render.frr import render_frr
from twin.stages.render.frr_differences import adapt_lines
from twin.stages.render.sonic_templates import render_with_templates

pytestmark = needs_reference
CASES: dict[str, dict[str, dict[str, Any]]] = {
    "nexthop": {"default|10.9.0.0/24": {"nexthop": "10.0.0.0"}},
    "no-vrf-in-key": {"10.9.0.0/24": {"nexthop": "10.0.0.0"}},
    "nexthop-ifname": {"default|10.9.1.0/24": {"nexthop": "10.0.0.0", "ifname": "Ethernet8"}},
    "ifname-only": {"default|10.9.1.0/24": {"nexthop": "0.0.0.0", "ifname": "Ethernet8"}},
    "tag-distance": {"default|10.9.2.0/24": {"nexthop": "10.0.0.0", "tag": "5", "distance": "20"}},
    "zero-tag-distance": {"default|10.9.2.0/24": {"nexthop": "10.0.0.0", "tag": "0", "distance": "0"}},
    "nexthop-vrf": {"default|10.9.2.0/24": {"nexthop": "10.0.0.0", "nexthop-vrf": "default"}},
    "blackhole": {"default|10.9.3.0/24": {"blackhole": "true", "tag": "7", "distance": "30"}},
    "ecmp": {"default|10.9.4.0/24": {"nexthop": "10.0.0.0,10.0.0.2", "ifname": "Ethernet8,Ethernet12",
                                     "distance": "10,20"}},
    "mixed": {"default|10.9.5.0/24": {"blackhole": "false,true", "nexthop": "10.0.0.0,0.0.0.0"}},
    "no-next-hop": {"default|10.9.6.0/24": {"nexthop": "0.0.0.0"}},
    "lengths-differ": {"default|10.9.7.0/24": {"nexthop": "10.0.0.0,10.0.0.2", "distance": "10"}},
    "ipv6": {"default|fc00:9::/64": {"nexthop": "fc00::1", "distance": "5"},
             "default|fc00:a::/64": {"blackhole": "true"}},
    "other-vrf": {"Vrf1|10.9.8.0/24": {"nexthop": "10.0.0.0"}},
}
RENDER_NOTHING = {"no-next-hop", "lengths-differ", "other-vrf"}


def config(name: str) -> dict[str, Any]:
    db = base()
    db["STATIC_ROUTE"] = copy.deepcopy(CASES[name])
    return db


def _routes(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.startswith(("ip route ", "ipv6 route "))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_twin_renders_static_routes_as_sonic(name: str) -> None:
    assert TEMPLATES is not None
    sonic = _routes("\n".join(adapt_lines(render_with_templates(TEMPLATES, config(name)).splitlines())))
    twin = _routes(render_frr(config(name)))
    assert twin == sonic
    assert (twin == []) == (name in RENDER_NOTHING)


def test_the_cases_cover_every_field_twin_emulates() -> None:
    fields = {f for rows in CASES.values() for row in rows.values() for f in row}
    assert fields == {"nexthop", "ifname", "tag", "distance", "nexthop-vrf", "blackhole"}


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_frr_takes_every_static_route_twin_renders(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "frr.conf"
    conf.write_text(render_frr(config(name)))
    proc = subprocess.run(["vtysh", "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
