"""Your own fabric tests, written with twin's pytest plugin.

    pytest examples/test_fabric.py --twin-lab labs/default.yaml     # up, test, down
    pytest examples/test_fabric.py --twin-name default              # a lab that is already running
"""

from __future__ import annotations

from typing import Any


def test_every_session_is_established(twin_lab: Any) -> None:
    bgp = twin_lab.status()["bgp"]
    assert bgp["established"] == bgp["total"] > 0


def test_leaf1_has_full_ecmp_over_gnmi(twin_lab: Any, gnmi: Any) -> None:
    spines = len(twin_lab.plan.by_role("spine"))
    other = next(n for n in twin_lab.plan.by_role("leaf") if n.name != "leaf1")
    # fpmsyncd keys a host route by its bare address, as on SONiC
    reply = gnmi("leaf1").get(path=[f"/sonic-db:APPL_DB/localhost/ROUTE_TABLE/{other.loopback}"],
                              encoding="json_ietf")
    route = reply["notification"][0]["update"][0]["val"]
    assert len(route["nexthop"].split(",")) == spines


def test_jumbo_frames_cross_the_fabric(twin_lab: Any) -> None:
    servers = [h for h in twin_lab.plan.hosts if h.interfaces and h.interfaces[0].address]
    src, dst = servers[0], servers[-1]
    size = min(src.interfaces[0].mtu, twin_lab.plan.fabric.mtu) - 28  # IP + ICMP headers
    ping = twin_lab.exec(src.name, "ping", "-c", "2", "-M", "do", "-s", str(size),
                         str(dst.interfaces[0].address.ip))
    assert ping.returncode == 0, ping.stdout


def test_losing_a_spine_costs_under_200_ms(twin_lab: Any) -> None:
    report = twin_lab.drill("spine-loss", "spine1")
    assert report.passed and report.loss_ms <= 200
