"""Hand-written config_db.json files of single switches, rendered by SONiC's templates and by twin.

tests/fidelity/catalog: a classic (bgpcfgd) T0 with VLAN-attached servers and its T1 (they peer over
10.0.0.0/31), and the T0 in frrcfgd's dialect: numbered, unnumbered, without its peer group's AF
activation, without its route-map statements. Each is rendered with SONiC's own templates as SONiC
feeds them (twin.stages.render.sonic_templates) and with twin's renderer; what they mean to FRR (neighbors,
AF activation, policies, networks, maximum-paths, BFD, timers) must be the same once SONiC's lines
pass the allow-list (twin.stages.render.frr_differences), and each means what it was written to mean.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from frr_semantics import V4, Bgp, parse, semantics
from reference import REFERENCE, TEMPLATES, needs_reference

from twin.model.findings import SwitchConfig
from twin.stages.render.bgpcfgd import changes
from twin.stages.render.frr import render_frr
from twin.stages.render.frr_differences import adapt_lines
from twin.stages.render.sonic_templates import render_with_templates
from twin.stages.validate.yang import yang_findings

pytestmark = needs_reference
CATALOG = Path(__file__).parent / "catalog"
CONFIGS = sorted(p.stem for p in CATALOG.glob("*.json"))


def _db(name: str) -> dict[str, Any]:
    db: dict[str, Any] = json.loads((CATALOG / f"{name}.json").read_text())
    return db


def _sonic(name: str) -> Bgp:
    """SONiC's rendering, through the allow-list."""
    assert TEMPLATES is not None
    return parse("\n".join(adapt_lines(render_with_templates(TEMPLATES, _db(name)).splitlines())))


def _twin(name: str) -> Bgp:
    return parse(render_frr(_db(name)))


def test_catalog_holds_every_case() -> None:
    assert CONFIGS == ["t0-classic", "t0-frrcfgd", "t0-frrcfgd-no-af-activation", "t0-frrcfgd-no-route-map",
                       "t0-frrcfgd-unnumbered", "t1-classic"]


@pytest.mark.parametrize("name", CONFIGS)
def test_twin_means_what_sonic_means(name: str) -> None:
    assert semantics(_twin(name)) == semantics(_sonic(name))


@pytest.mark.parametrize("name", CONFIGS)
def test_sonic_templates_through_twin_mean_the_same(name: str) -> None:
    """render_frr with SONiC's templates (what a user's release renders, made runnable) means the same."""
    assert semantics(parse(render_frr(_db(name), TEMPLATES))) == semantics(_twin(name))


def test_the_comparison_sees_a_difference() -> None:
    """Not vacuous: without the allow-list SONiC's maximum-paths 514 differs from twin's 256."""
    assert TEMPLATES is not None
    raw = parse(render_with_templates(TEMPLATES, _db("t0-classic")))
    assert raw.max_paths == 514 and _twin("t0-classic").max_paths == 256
    assert semantics(raw) != semantics(_twin("t0-classic"))


@pytest.mark.parametrize("name", CONFIGS)
def test_catalog_passes_sonic_s_yang_models(name: str, tmp_path: Path) -> None:
    assert REFERENCE is not None
    cfg = SwitchConfig(name, tmp_path / name / "config_db.json", _db(name))
    assert [str(f) for f in yang_findings([cfg], REFERENCE / "sonic-yang-models")] == []


def test_classic_t0_and_t1_peer_with_each_other() -> None:
    t0, t1 = _db("t0-classic"), _db("t1-classic")
    to_t1, to_t0 = t0["BGP_NEIGHBOR"]["10.0.0.0"], t1["BGP_NEIGHBOR"]["10.0.0.1"]
    assert (to_t1["name"], to_t1["asn"], to_t1["local_addr"]) == (
        t1["DEVICE_METADATA"]["localhost"]["hostname"], t1["DEVICE_METADATA"]["localhost"]["bgp_asn"], "10.0.0.1")
    assert (to_t0["name"], to_t0["asn"], to_t0["local_addr"]) == (
        t0["DEVICE_METADATA"]["localhost"]["hostname"], t0["DEVICE_METADATA"]["localhost"]["bgp_asn"], "10.0.0.0")
    assert "Ethernet8|10.0.0.1/31" in t0["INTERFACE"] and "Ethernet0|10.0.0.0/31" in t1["INTERFACE"]
    assert t0["DEVICE_NEIGHBOR"]["Ethernet8"] == {"name": "t1-1", "port": "Ethernet0"}
    assert t1["DEVICE_NEIGHBOR"]["Ethernet0"] == {"name": "t0-1", "port": "Ethernet8"}


def test_classic_t0_announces_loopback_and_vlan_subnet() -> None:
    for bgp in (_sonic("t0-classic"), _twin("t0-classic")):
        assert bgp.networks == {"10.1.0.1/32", "192.168.0.0/24"}
        assert bgp.problems() == [] and not bgp.requires_policy
        assert sorted(p.name for p in bgp.neighbors()) == ["10.0.0.0", "10.0.0.2"]
        assert bgp.peers["PEER_V4"].af[V4].allowas_in == "1" and bgp.graceful_restart["restart-time"] == "240"
        assert all(p.timers == "3 9" and p.connect == "10" for p in bgp.neighbors())


def test_classic_t1_routes_without_allowas_in_or_graceful_restart() -> None:
    for bgp in (_sonic("t1-classic"), _twin("t1-classic")):
        assert bgp.problems() == [] and bgp.networks == {"10.1.0.100/32"}
        assert bgp.peers["PEER_V4"].af[V4].allowas_in is None and bgp.graceful_restart == {}


@pytest.mark.parametrize("name", ["t0-frrcfgd", "t0-frrcfgd-unnumbered"])
def test_frrcfgd_t0_routes_with_bfd(name: str) -> None:
    for bgp in (_sonic(name), _twin(name)):
        assert bgp.problems() == [] and len(bgp.neighbors()) == 2 and all(p.bfd for p in bgp.neighbors())
        assert bgp.networks == {"10.1.0.1/32", "10.2.0.0/31"} and bgp.max_paths == 2


def test_unnumbered_neighbors_are_the_interfaces() -> None:
    for bgp in (_sonic("t0-frrcfgd-unnumbered"), _twin("t0-frrcfgd-unnumbered")):
        assert sorted((p.name, bgp._inherit(p, "remote_as")) for p in bgp.neighbors()) == [
            ("Ethernet12", "external"), ("Ethernet8", "external")]


def test_without_af_activation_sessions_come_up_but_carry_nothing() -> None:
    for bgp in (_sonic("t0-frrcfgd-no-af-activation"), _twin("t0-frrcfgd-no-af-activation")):
        assert len(bgp.neighbors()) == 2 and not any(bgp.active(p) for p in bgp.neighbors())
        assert all("not active" in p for p in bgp.problems())


def test_ebgp_without_policy_carries_nothing() -> None:
    for bgp in (_sonic("t0-frrcfgd-no-route-map"), _twin("t0-frrcfgd-no-route-map")):
        assert bgp.requires_policy and all(bgp.active(p) for p in bgp.neighbors())
        assert len(bgp.problems()) == 4 and all("policy that permits" in p for p in bgp.problems())


# -- FRR 8.4 takes every line twin renders --------------------------------------------------------

needs_vtysh = pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")


def _dry_run(text: str, tmp_path: Path) -> str:
    path = tmp_path / "frr.conf"
    path.write_text(text)
    proc = subprocess.run(["vtysh", "-C", "-f", str(path)], capture_output=True, text=True, timeout=60)
    return "" if proc.returncode == 0 else (proc.stdout + proc.stderr).strip()


@needs_vtysh
@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("renderer", ["twin", "sonic-templates"])
def test_frr_takes_the_rendering(name: str, renderer: str, tmp_path: Path) -> None:
    text = render_frr(_db(name), TEMPLATES if renderer == "sonic-templates" else None)
    assert _dry_run(text, tmp_path) == ""


@needs_vtysh
def test_frr_takes_what_bgpcfgd_sends(tmp_path: Path) -> None:
    new = _db("t0-classic")
    old = json.loads(json.dumps(new))
    del old["BGP_NEIGHBOR"]["10.0.0.0"]
    new["BGP_NEIGHBOR"]["10.0.0.2"]["admin_status"] = "down"
    lines = changes(old, new)
    assert lines is not None and "  neighbor 10.0.0.0 remote-as 65100" in lines
    assert _dry_run("\n".join(lines) + "\n", tmp_path) == ""


@needs_vtysh
def test_the_dry_run_refuses_what_frr_cannot_take(tmp_path: Path) -> None:
    """Not vacuous: SONiC's own maximum-paths 514 is refused."""
    assert TEMPLATES is not None
    assert "maximum-paths 514" in _dry_run(render_with_templates(TEMPLATES, _db("t0-classic")), tmp_path)
