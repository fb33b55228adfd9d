"""A static route written over gNMI (CONFIG_DB STATIC_ROUTE, as frrcfgd gives it to staticd) lands in the
switch's kernel, next hop and blackhole alike, changes with its next hops, and leaves when it is deleted.
A 2 x 2 lab."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from labtools import netns_exec, running_lab, twin_json, until
from pygnmi.client import gNMIclient

pytestmark = pytest.mark.needs_root
# pygnmi splits a path at every `/`, a prefix's too: the table is written whole
ROUTES = "/sonic-db:CONFIG_DB/localhost/STATIC_ROUTE"
VIA, HOLE = "10.99.0.0/24", "10.99.1.0/24"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "sr", check_clean=True) as name:
        yield twin_json("status", "--name", name)


def _client(status: dict[str, Any], node: str) -> gNMIclient:
    return gNMIclient(**next(n for n in status["nodes"] if n["name"] == node)["gnmi"])


def _static(lab: str, node: str) -> dict[str, list[str]]:
    """The switch's kernel routes of protocol static: destination -> its next hops (or the route type)."""
    # zebra installs them with its own protocol number (196), which `ip` names static: `proto static` (4)
    # would not match them
    out = netns_exec(lab, node, "ip", "-4", "-j", "route", "show").stdout
    routes = {}
    for r in json.loads(out or "[]"):
        if r.get("protocol") != "static":
            continue
        hops = [r["gateway"]] if "gateway" in r else [h["gateway"] for h in r.get("nexthops", [])]
        routes[r["dst"]] = hops or [r.get("type", "")]
    return routes


def test_a_static_route_reaches_the_kernel_and_leaves_with_its_entry(lab: dict[str, Any]) -> None:
    name = lab["lab"]
    with _client(lab, "leaf1") as gc:
        neighbors = gc.get(path=["/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR"], encoding="json_ietf")
        peers = sorted(k.split("|")[-1] for k in neighbors["notification"][0]["update"][0]["val"])
        first, second = peers[0], peers[1]
        gc.set(update=[(ROUTES, {f"default|{VIA}": {"nexthop": first}, f"default|{HOLE}": {"blackhole": "true"}})],
               encoding="json_ietf")
        assert until(lambda: _static(name, "leaf1") == {VIA: [first], HOLE: ["blackhole"]}, timeout=10), \
            _static(name, "leaf1")
        gc.set(update=[(ROUTES, {f"default|{VIA}": {"nexthop": f"{first},{second}"}})], encoding="json_ietf")
        # the table written whole: the blackhole route's entry went with it
        assert until(lambda: {d: sorted(h) for d, h in _static(name, "leaf1").items()} == {VIA: [first, second]},
                     timeout=10), _static(name, "leaf1")
        gc.set(delete=[ROUTES], encoding="json_ietf")
        assert until(lambda: _static(name, "leaf1") == {}, timeout=10), _static(name, "leaf1")
    assert _static(name, "leaf2") == {}   # only the switch it was written to
