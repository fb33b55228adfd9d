"""bgpcfgd's StaticRouteMgr as twin emulates it: CONFIG_DB STATIC_ROUTE as staticd lines, the redistribution
route-map with the first route and without the last, at boot and on every change, over the classic T0.
The command shapes are those sonic-bgpcfgd's tests/test_static_rt.py expects (sonic-buildimage 086b03bd)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from twin.model.routing_surface import not_emulated
from twin.stages.configdb import ConfigDb
from twin.stages.render.bgpcfgd_static import StaticRoutes, next_hops
from twin.stages.render.frr import render_frr
from twin.switch.config.apply import frr_lines

CATALOG = Path(__file__).resolve().parents[1] / "fidelity" / "catalog"
REDIST_ON = ["route-map STATIC_ROUTE_FILTER permit 10", " match tag 1", "router bgp 65101", " address-family ipv4",
             "  redistribute static route-map STATIC_ROUTE_FILTER", " exit-address-family", " address-family ipv6",
             "  redistribute static route-map STATIC_ROUTE_FILTER", " exit-address-family", "exit"]
REDIST_OFF = ["router bgp 65101", " address-family ipv4", "  no redistribute static route-map STATIC_ROUTE_FILTER",
              " exit-address-family", " address-family ipv6", "  no redistribute static route-map STATIC_ROUTE_FILTER",
              " exit-address-family", "exit", "no route-map STATIC_ROUTE_FILTER"]


@pytest.fixture
def t0() -> ConfigDb:
    db: ConfigDb = json.loads((CATALOG / "t0-classic.json").read_text())
    return db


def _with(db: ConfigDb, rows: dict[str, Any]) -> ConfigDb:
    out = copy.deepcopy(db)
    out["STATIC_ROUTE"] = copy.deepcopy(rows)
    return out


@pytest.mark.parametrize(("key", "row", "lines"), [
    ("10.1.0.0/24", {"nexthop": "10.0.0.57"}, ["ip route 10.1.0.0/24 10.0.0.57 tag 1"]),
    ("default|10.1.0.0/24", {"nexthop": "10.0.0.57,10.0.0.59", "ifname": "PortChannel0001,PortChannel0002",
                             "distance": "10,20"},
     ["ip route 10.1.0.0/24 10.0.0.57 PortChannel0001 10 tag 1",
      "ip route 10.1.0.0/24 10.0.0.59 PortChannel0002 20 tag 1"]),
    ("fc00:10::/64", {"nexthop": "fc00::72", "ifname": "PortChannel0001", "distance": "10", "nexthop-vrf": "Vrf1"},
     ["ipv6 route fc00:10::/64 fc00::72 PortChannel0001 10 nexthop-vrf Vrf1 tag 1"]),
    ("10.1.0.0/24", {"blackhole": "true", "advertise": "false"}, ["ip route 10.1.0.0/24 blackhole tag 2"]),
    ("10.1.0.0/24", {"ifname": "Ethernet8"}, ["ip route 10.1.0.0/24 Ethernet8 tag 1"]),
    ("10.1.0.0/24", {"nexthop": "10.0.0.57,10.0.0.59", "distance": "10"}, []),       # lists of different lengths
    ("10.1.0.0/24", {"nexthop": "fc00::1"}, []),                                     # an address of the other family
    ("10.1.0.0/24", {"nexthop": "10.0.0.57", "bfd": "true"}, []),                    # staticroutebfd's
    ("10.1.0.0/24", {"nexthop": "0.0.0.0,10.0.0.59"}, ["ip route 10.1.0.0/24 10.0.0.59 tag 1"]),  # hop skipped
])
def test_a_route_s_next_hops(key: str, row: dict[str, str], lines: list[str]) -> None:
    got = StaticRoutes("65101", {}).set(key, row)
    assert got == (lines + REDIST_ON if lines else [])


def test_routes_at_boot_with_redistribution_once(t0: ConfigDb) -> None:
    rendered = render_frr(_with(t0, {"10.50.0.0/24": {"nexthop": "10.0.0.0"},
                                     "10.51.0.0/24": {"blackhole": "true", "advertise": "false"}})).splitlines()
    at = rendered.index("ip route 10.50.0.0/24 10.0.0.0 tag 1")
    assert rendered[at:at + len(REDIST_ON) + 2] == ["ip route 10.50.0.0/24 10.0.0.0 tag 1", *REDIST_ON,
                                                    "ip route 10.51.0.0/24 blackhole tag 2"]
    assert rendered.count("route-map STATIC_ROUTE_FILTER permit 10") == 1


def test_routes_of_another_vrf_are_left_out(t0: ConfigDb) -> None:
    rendered = render_frr(_with(t0, {"Vrf1|10.52.0.0/24": {"nexthop": "10.0.0.0"}}))
    assert not any("10.52.0.0" in line for line in rendered.splitlines())


def test_route_changes_send_the_difference(t0: ConfigDb) -> None:
    one = _with(t0, {"10.50.0.0/24": {"nexthop": "10.0.0.0"}})
    assert frr_lines(t0, one) == ["ip route 10.50.0.0/24 10.0.0.0 tag 1", *REDIST_ON]
    two = _with(t0, {"10.50.0.0/24": {"nexthop": "10.0.0.0,10.0.0.2"}})
    assert frr_lines(one, two) == ["ip route 10.50.0.0/24 10.0.0.2 tag 1"]
    hidden = _with(t0, {"10.50.0.0/24": {"nexthop": "10.0.0.0,10.0.0.2", "advertise": "false"}})
    assert frr_lines(two, hidden) == [  # a new tag: every next hop again
        "no ip route 10.50.0.0/24 10.0.0.0 tag 1", "no ip route 10.50.0.0/24 10.0.0.2 tag 1",
        "ip route 10.50.0.0/24 10.0.0.0 tag 2", "ip route 10.50.0.0/24 10.0.0.2 tag 2"]
    assert frr_lines(hidden, t0) == ["no ip route 10.50.0.0/24 10.0.0.0 tag 2",
                                     "no ip route 10.50.0.0/24 10.0.0.2 tag 2", *REDIST_OFF]


def test_a_failed_set_is_not_kept() -> None:
    """bgpcfgd's SET fails on lists of different lengths: nothing is pushed and nothing remembered."""
    assert next_hops("10.1.0.0/24", {"nexthop": "10.0.0.1,10.0.0.3", "ifname": "Ethernet0"}) is None
    mgr = StaticRoutes("65101", {})
    assert mgr.set("10.1.0.0/24", {"nexthop": "10.0.0.1,10.0.0.3", "ifname": "Ethernet0"}) == []
    assert mgr.routes == {}


def test_a_bfd_route_is_named_not_emulated(t0: ConfigDb) -> None:
    """staticroutebfd's routes (bfd "true") are left out by bgpcfgd and by twin, and reported as such."""
    db = _with(t0, {"10.50.0.0/24": {"nexthop": "10.0.0.0"}, "10.51.0.0/24": {"nexthop": "10.0.0.0", "bfd": "true"}})
    assert not any("10.51.0.0" in line for line in render_frr(db).splitlines())
    assert [(i.table, i.key, i.field) for i in not_emulated(db) if i.table == "STATIC_ROUTE"] == [
        ("STATIC_ROUTE", "10.51.0.0/24", "bfd")]
