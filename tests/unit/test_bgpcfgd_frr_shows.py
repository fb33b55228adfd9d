"""What bgpcfgd's monitors, dynamic, aggregate and static-route managers render is what FRR 8.4 then shows
(twin.switch.frr.frr_drift): no drift where FRR only words it otherwise. The running config below is what
a zebra, bgpd and staticd of FRR 8.4.4 showed after loading the rendering of these rows."""

from __future__ import annotations

import json
from pathlib import Path

from twin.stages.configdb import ConfigDb
from twin.stages.render import bgpcfgd
from twin.switch.frr.frr_drift import drift

CATALOG = Path(__file__).resolve().parents[1] / "fidelity" / "catalog"
ROWS: ConfigDb = {
    "BGP_MONITORS": {"10.20.30.40": {"name": "BGPMonitor", "admin_status": "up", "local_addr": "10.1.0.1"}},
    "BGP_PEER_RANGE": {"BGPSLBPassive": {"ip_range": "10.255.0.0/25,fc00:1::/64", "name": "BGPSLBPassive",
                                         "src_address": "10.1.0.32", "peer_asn": "65432"}},
    "BGP_AGGREGATE_ADDRESS": {"192.168.0.0/16": {"summary-only": "true"}, "fc00::/48": {"as-set": "true"}},
    "STATIC_ROUTE": {"10.50.0.0/24": {"nexthop": "10.0.0.0"},
                     "10.51.0.0/24": {"blackhole": "true", "advertise": "false"},
                     "fc00:50::/64": {"nexthop": "fc00::2,fc00::3", "distance": "0,10",
                                      "nexthop-vrf": "default,default"}},
}
# what FRR showed of them (and of the T0 around them, the lines these rows do not touch left out)
RUNNING = """ip route 10.50.0.0/24 10.0.0.0 tag 1
ip route 10.51.0.0/24 blackhole tag 2
ipv6 route fc00:50::/64 fc00::2 tag 1
ipv6 route fc00:50::/64 fc00::3 tag 1 10
router bgp 65101
 neighbor BGPMON peer-group
 neighbor BGPMON update-source 10.1.0.1
 neighbor BGPSLBPassive peer-group
 neighbor BGPSLBPassive remote-as 65432
 neighbor BGPSLBPassive passive
 neighbor BGPSLBPassive ebgp-multihop 255
 neighbor BGPSLBPassive update-source 10.1.0.32
 neighbor 10.20.30.40 remote-as 65101
 neighbor 10.20.30.40 peer-group BGPMON
 neighbor 10.20.30.40 description BGPMonitor
 bgp listen range 10.255.0.0/25 peer-group BGPSLBPassive
 bgp listen range fc00:1::/64 peer-group BGPSLBPassive
 !
 address-family ipv4 unicast
  aggregate-address 192.168.0.0/16 summary-only
  redistribute static route-map STATIC_ROUTE_FILTER
  neighbor BGPMON activate
  neighbor BGPMON maximum-prefix 1
  neighbor BGPMON route-map FROM_BGPMON in
  neighbor BGPMON route-map TO_BGPMON out
  neighbor BGPSLBPassive activate
  neighbor BGPSLBPassive soft-reconfiguration inbound
  neighbor BGPSLBPassive route-map FROM_BGP_SPEAKER in
  neighbor BGPSLBPassive route-map TO_BGP_SPEAKER out
 exit-address-family
 !
 address-family ipv6 unicast
  aggregate-address fc00::/48 as-set
  redistribute static route-map STATIC_ROUTE_FILTER
  neighbor BGPSLBPassive activate
  neighbor 10.20.30.40 activate
 exit-address-family
exit
!
route-map FROM_BGPMON deny 10
exit
!
route-map TO_BGPMON permit 10
exit
!
route-map FROM_BGP_SPEAKER permit 10
exit
!
route-map TO_BGP_SPEAKER deny 1
exit
!
route-map STATIC_ROUTE_FILTER permit 10
 match tag 1
exit
"""


def _rendered() -> str:
    db: ConfigDb = json.loads((CATALOG / "t0-classic.json").read_text())
    lines = []
    asn = bgpcfgd.bgp_asn(db)
    assert asn is not None
    for table, rows in ROWS.items():
        db[table] = rows
    for kind in ("monitors", "dynamic"):
        lines += bgpcfgd.group_lines(db, kind=kind)
        for peer in bgpcfgd.peers(db, kind):
            lines += bgpcfgd.neighbor_lines(db, peer)
    lines += bgpcfgd.aggregate.boot_lines(db, asn, "disabled") + bgpcfgd.static.boot_lines(db, asn)
    return "\n".join(bgpcfgd.adapt_lines(lines)) + "\n"


def test_frr_shows_what_the_managers_render() -> None:
    assert drift(_rendered(), RUNNING) == []


def test_the_comparison_sees_a_static_route_s_distance() -> None:
    running = RUNNING.replace("fc00::3 tag 1 10", "fc00::3 tag 1 20")
    assert [d.line for d in drift(_rendered(), running)] == ["ipv6 route fc00:50::/64 fc00::3 tag 1 10",
                                                            "ipv6 route fc00:50::/64 fc00::3 tag 1 20"]


def test_the_comparison_sees_a_member_activated_where_its_group_is_not() -> None:
    running = RUNNING.replace("  neighbor 10.20.30.40 activate\n", "")
    assert [d.line for d in drift(_rendered(), running)] == ["neighbor 10.20.30.40 activate"]
