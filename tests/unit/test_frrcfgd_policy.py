"""frrcfgd's routing policy as twin renders it (twin.stages.render.frrcfgd_policy) and changes it at
runtime (twin.switch.config.apply): prefix lists, route-map clauses, community and AS-path lists,
neighbor and peer-group address-family options."""

from __future__ import annotations

import copy
from typing import Any

from twin.stages.render.frr import render_frr
from twin.stages.render.frrcfgd_policy import (
    community_list_lines,
    neighbor_af_options,
    prefix_list_lines,
    route_map_entry_lines,
)
from twin.switch.config.apply import frr_lines

PG = "default|PEER_V4|ipv4_unicast"


def _db() -> dict[str, Any]:
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "frr_mgmt_framework_config": "true"}},
        "BGP_GLOBALS": {"default": {"local_asn": "65101", "router_id": "10.1.0.1"}},
        "BGP_PEER_GROUP": {"default|PEER_V4": {}},
        "BGP_NEIGHBOR": {"default|10.0.0.0": {"asn": "65100", "peer_group_name": "PEER_V4"}},
        "BGP_PEER_GROUP_AF": {PG: {"admin_status": "up", "route_map_in": ["FROM_BGP_PEER_V4"],
                                   "route_map_out": ["TO_BGP_PEER_V4"]}},
        "ROUTE_MAP": {"FROM_BGP_PEER_V4|100": {"route_operation": "permit"},
                      "TO_BGP_PEER_V4|100": {"route_operation": "permit"}},
    }


def _filter(db: dict[str, Any]) -> dict[str, Any]:
    db = copy.deepcopy(db)
    db["PREFIX_SET"] = {"FABRIC_IN": {"mode": "IPv4"}}
    db["PREFIX"] = {"FABRIC_IN|10|10.2.0.0/31|exact": {"action": "deny"},
                    "FABRIC_IN|20|0.0.0.0/0|0..32": {"action": "permit"}}
    db["ROUTE_MAP"]["FROM_BGP_PEER_V4|100"]["match_prefix_set"] = "FABRIC_IN"
    return db


def test_prefix_lists_as_the_template_renders_them() -> None:
    db = {"PREFIX_SET": {"A": {"mode": "IPv4"}, "B": {"mode": "IPv6"}, "NOMODE": {}},
          "PREFIX": {"A|10|10.2.0.0/31|exact": {"action": "deny"}, "A|20|10.0.0.0/8|9..24": {},
                     "A|30|10.0.0.0/8|16..24": {}, "B|5|fc00::/48|56..64": {"action": "deny"},
                     "NOMODE|1|10.0.0.0/8|exact": {}, "A|10.9.0.0/16|exact": {}}}
    assert prefix_list_lines(db) == [
        "ip prefix-list A permit 10.9.0.0/16",  # PREFIX_NOSEQ_LIST
        "ip prefix-list A seq 10 deny 10.2.0.0/31",
        "ip prefix-list A seq 20 permit 10.0.0.0/8 ge 9 le 24",
        # the template compares "16" > "8" as strings: no ge, as on SONiC
        "ip prefix-list A seq 30 permit 10.0.0.0/8 le 24",
        "ipv6 prefix-list B seq 5 deny fc00::/48 ge 56 le 64",
    ]


def test_route_map_clauses() -> None:
    db = {"PREFIX_SET": {"P": {"mode": "IPv6"}}, "COMMUNITY_SET": {
        "C": {"set_type": "STANDARD", "match_action": "ALL", "community_member": ["1:1", "1:2"]}}}
    row = {"route_operation": "permit", "match_prefix_set": "P", "match_origin": "IGP", "match_tag": ["7"],
           "match_neighbor": ["10.0.0.0"], "set_local_pref": "300", "set_community_ref": "C",
           "set_metric_action": "METRIC_ADD_VALUE", "set_metric": "5", "set_asn": "65101", "set_repeat_asn": "2",
           "set_ext_community_inline": ["route-target:1:1"], "call_route_map": "OTHER", "match_protocol": "ospf3"}
    assert route_map_entry_lines(db, row) == [
        " call OTHER", " match tag 7", " match ipv6 address prefix-list P", " match origin igp",
        " match peer 10.0.0.0", " match source-protocol ospf6", " set as-path prepend 65101 65101",
        " set community 1:1 1:2", " set extcommunity rt 1:1", " set local-preference 300", " set metric +5"]


def test_community_lists() -> None:
    db = {"COMMUNITY_SET": {"A": {"set_type": "STANDARD", "match_action": "ANY", "community_member": ["1:1", "1:2"]}},
          "EXTENDED_COMMUNITY_SET": {"E": {"set_type": "STANDARD", "match_action": "ALL",
                                           "community_member": ["route-target:1:1", "route-origin:2:2"]}}}
    assert community_list_lines(db) == ["bgp community-list standard A permit 1:1",
                                        "bgp community-list standard A permit 1:2",
                                        "bgp extcommunity-list standard E permit rt 1:1 soo 2:2"]


def test_neighbor_af_options() -> None:
    row = {"allow_as_in": "true", "allow_as_count": "2", "send_community": "standard", "nhself": "true",
           "send_default_route": "true", "default_rmap": "DEF", "max_prefix_limit": "100",
           "max_prefix_warning_only": "true", "weight": "10", "prefix_list_in": "P", "unchanged_med": "true",
           "soft_reconfiguration_in": "true", "rrclient": "true", "remove_private_as_enabled": "true",
           "replace_private_as": "true"}
    assert neighbor_af_options("PG", row) == [
        "neighbor PG next-hop-self", "neighbor PG remove-private-AS replace-AS",
        "no neighbor PG send-community extended", "no neighbor PG send-community large",
        "neighbor PG default-originate route-map DEF", "neighbor PG route-reflector-client",
        "neighbor PG soft-reconfiguration inbound", "neighbor PG maximum-prefix 100 warning-only",
        "neighbor PG allowas-in 2", "neighbor PG weight 10", "neighbor PG prefix-list P in",
        "neighbor PG attribute-unchanged med"]


def test_the_tester_s_prefix_filter_reaches_frr() -> None:
    text = render_frr(_filter(_db()))
    assert "ip prefix-list FABRIC_IN seq 10 deny 10.2.0.0/31" in text
    assert "route-map FROM_BGP_PEER_V4 permit 100\n match ip address prefix-list FABRIC_IN\nexit" in text


def test_af_options_render_in_their_family() -> None:
    db = _db()
    db["BGP_PEER_GROUP_AF"][PG]["allow_as_in"] = "true"
    db["BGP_PEER_GROUP_AF"]["default|PEER_V4|ipv6_unicast"] = {"admin_status": "up", "weight": "5"}
    text = render_frr(db)
    v4 = text.split(" address-family ipv4 unicast")[1].split("exit-address-family")[0]
    v6 = text.split(" address-family ipv6 unicast")[1].split("exit-address-family")[0]
    assert "  neighbor PEER_V4 allowas-in\n" in v4 and "weight" not in v4
    assert "  neighbor PEER_V4 activate\n  neighbor PEER_V4 weight 5\n" in v6


def test_a_filter_is_pushed_and_removed_line_by_line() -> None:
    before, after = _db(), _filter(_db())
    assert frr_lines(before, after) == [
        "ip prefix-list FABRIC_IN seq 10 deny 10.2.0.0/31", "ip prefix-list FABRIC_IN seq 20 permit 0.0.0.0/0 le 32",
        "route-map FROM_BGP_PEER_V4 permit 100", " match ip address prefix-list FABRIC_IN", "exit"]
    assert frr_lines(after, before) == [
        "route-map FROM_BGP_PEER_V4 permit 100", " no match ip address prefix-list FABRIC_IN", "exit",
        "no ip prefix-list FABRIC_IN seq 20 permit 0.0.0.0/0 le 32",
        "no ip prefix-list FABRIC_IN seq 10 deny 10.2.0.0/31"]


def test_af_option_changes() -> None:
    before = _db()
    after = copy.deepcopy(before)
    after["BGP_PEER_GROUP_AF"][PG].update({"send_community": "extended", "weight": "7"})
    assert frr_lines(before, after) == [
        "router bgp 65101", " address-family ipv4 unicast", "  no neighbor PEER_V4 send-community",
        "  no neighbor PEER_V4 send-community large", "  neighbor PEER_V4 weight 7", " exit-address-family", "exit"]
    assert frr_lines(after, before) == [
        "router bgp 65101", " address-family ipv4 unicast", "  no neighbor PEER_V4 weight 7",
        "  neighbor PEER_V4 send-community large", "  neighbor PEER_V4 send-community", " exit-address-family",
        "exit"]
