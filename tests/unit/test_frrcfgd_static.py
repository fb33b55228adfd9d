"""STATIC_ROUTE as frrcfgd gives it to staticd (twin.stages.render.frrcfgd_static), at boot and on a change
(twin.switch.config.apply): one line per next hop, a change sending the next hops gone and the new ones."""

from __future__ import annotations

import copy
from typing import Any

from twin.stages.render.frr import render_frr
from twin.stages.render.frrcfgd_static import static_route_lines
from twin.switch.config.apply import frr_lines
from twin.switch.frr.frr_split import per_daemon_configs


def _db() -> dict[str, Any]:
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "frr_mgmt_framework_config": "true"}},
        "BGP_GLOBALS": {"default": {"local_asn": "65101", "router_id": "10.1.0.1"}},
    }


def test_one_line_per_next_hop_as_the_template_renders_them() -> None:
    db = {"STATIC_ROUTE": {
        "default|10.9.0.0/24": {"nexthop": "10.0.0.0,10.0.0.2", "ifname": ",Ethernet12", "distance": "0,20",
                                "tag": "5,0"},
        "10.9.1.0/24": {"blackhole": "true", "distance": "30"},
        "default|fc00:9::/64": {"nexthop": "::", "ifname": "Ethernet8"},
        "default|10.9.2.0/24": {"nexthop": "10.0.0.0,10.0.0.2", "distance": "10"},   # lengths differ
        "default|10.9.3.0/24": {"nexthop": "0.0.0.0"},                              # no next hop
        "Vrf1|10.9.4.0/24": {"nexthop": "10.0.0.0"},                                # another VRF
    }}
    assert static_route_lines(db) == [
        "ip route 10.9.0.0/24 10.0.0.0 tag 5", "ip route 10.9.0.0/24 10.0.0.2 Ethernet12 20",
        "ip route 10.9.1.0/24 blackhole 30", "ipv6 route fc00:9::/64 Ethernet8"]


def test_static_routes_go_to_staticd_in_frr_conf() -> None:
    conf = render_frr({**_db(), "STATIC_ROUTE": {"default|10.9.0.0/24": {"nexthop": "10.0.0.0"}}})
    assert "\nip route 10.9.0.0/24 10.0.0.0\n" in conf
    files = per_daemon_configs(conf, ["zebra", "bgpd", "staticd"])
    assert files is not None and "ip route 10.9.0.0/24 10.0.0.0" in files["staticd"]
    assert "ip route" not in files["zebra"] + files["bgpd"]


def test_a_change_sends_the_next_hops_gone_then_the_new_ones() -> None:
    old = {**_db(), "STATIC_ROUTE": {"default|10.9.0.0/24": {"nexthop": "10.0.0.0,10.0.0.2"}}}
    new = copy.deepcopy(old)
    new["STATIC_ROUTE"]["default|10.9.0.0/24"] = {"nexthop": "10.0.0.2,10.0.0.4"}
    assert frr_lines(_db(), old) == ["ip route 10.9.0.0/24 10.0.0.0", "ip route 10.9.0.0/24 10.0.0.2"]
    assert frr_lines(old, new) == ["no ip route 10.9.0.0/24 10.0.0.0", "ip route 10.9.0.0/24 10.0.0.4"]
    assert frr_lines(new, _db()) == ["no ip route 10.9.0.0/24 10.0.0.4", "no ip route 10.9.0.0/24 10.0.0.2"]

