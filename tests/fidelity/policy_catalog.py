"""Configs that cover every leaf of the routing policy models twin's frrcfgd emulation renders
(test helper): sonic-route-map.yang (ROUTE_MAP_SET, ROUTE_MAP), sonic-routing-policy-sets.yang
(PREFIX_SET, PREFIX, COMMUNITY_SET, EXTENDED_COMMUNITY_SET, AS_PATH_SET) and the address-family
options of sonic-bgp-common.yang's sonic-bgp-cmn-af (BGP_NEIGHBOR_AF, BGP_PEER_GROUP_AF), each with
values of the leaf's type. Each case is the frrcfgd T0 of tests/fidelity/catalog with rows added.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

BASE = Path(__file__).parent / "catalog" / "t0-frrcfgd.json"
PG4, PG6, NB4 = "default|PEER_V4|ipv4_unicast", "default|PEER_V4|ipv6_unicast", "default|10.0.0.0|ipv4_unicast"

SETS: dict[str, dict[str, Any]] = {
    "PREFIX_SET": {"PL4": {"mode": "IPv4"}, "PL6": {"mode": "IPv6"}, "NH4": {"mode": "IPv4"}},
    "PREFIX": {"PL4|10|10.2.0.0/31|exact": {"action": "deny"}, "PL4|20|10.0.0.0/8|16..24": {"action": "permit"},
               "PL4|30|10.0.0.0/16|24..32": {"action": "permit"}, "PL4|40|0.0.0.0/0|0..32": {},
               "PL6|10|fc00::/64|exact": {"action": "permit"}, "PL6|20|fc00::/48|56..64": {"action": "deny"},
               "NH4|5|10.0.0.0/31|exact": {"action": "permit"}},
    "COMMUNITY_SET": {"C_ANY": {"set_type": "STANDARD", "match_action": "ANY", "action": "permit",
                                "community_member": ["65000:1", "65000:2"]},
                      "C_ALL": {"set_type": "STANDARD", "match_action": "ALL", "action": "permit",
                                "community_member": ["65000:3", "65000:4"]},
                      "C_EXP": {"set_type": "EXPANDED", "match_action": "ANY", "action": "deny",
                                "community_member": ["^65000:.*$"]}},
    "EXTENDED_COMMUNITY_SET": {"E_ANY": {"set_type": "STANDARD", "match_action": "ANY", "action": "permit",
                                         "community_member": ["route-target:65000:1", "route-origin:65000:2"]},
                               "E_ALL": {"set_type": "STANDARD", "match_action": "ALL", "action": "permit",
                                         "community_member": ["route-target:65000:3", "route-origin:65000:4"]},
                               "E_RT": {"set_type": "STANDARD", "match_action": "ANY",
                                        "community_member": ["route-target:65000:5"]}},
    "AS_PATH_SET": {"AP": {"action": "permit", "as_path_set_member": ["^65100_", "_65200$"]}},
    "ROUTE_MAP_SET": {"FROM_BGP_PEER_V4": {}, "TO_BGP_PEER_V4": {}, "CALLED": {}, "RM": {}},
}


def _rm(**fields: Any) -> dict[str, Any]:
    return {"ROUTE_MAP": {"RM|10": {"route_operation": "permit", **fields}, "CALLED|10": {"route_operation": "deny"}}}


def _af(**fields: Any) -> dict[str, Any]:
    return {"BGP_PEER_GROUP_AF": {PG4: {"admin_status": "up", "route_map_in": ["FROM_BGP_PEER_V4"],
                                        "route_map_out": ["TO_BGP_PEER_V4"], **fields}}}


# name -> rows added to the base (with SETS): every leaf at least once
CASES: dict[str, dict[str, Any]] = {
    "sets-only": {},
    "match-prefix-v4": _rm(match_prefix_set="PL4"),
    "match-prefix-v6": _rm(match_prefix_set="PL6"),
    "match-ipv6-prefix-set": _rm(match_ipv6_prefix_set="PL6"),
    "match-next-hop-v4": _rm(match_next_hop_set="NH4"),
    "match-bgp-attributes": _rm(match_community="C_ANY", match_ext_community="E_ANY", match_as_path="AP",
                                match_med="100", match_origin="IGP", match_local_pref="200", match_tag=["7"]),
    "match-interface-peer": _rm(match_interface="Ethernet0", match_neighbor=["10.0.0.0"]),
    "match-protocol-vrf": _rm(match_protocol="bgp", match_src_vrf="default"),
    "match-origin-egp": _rm(match_origin="EGP", set_origin="INCOMPLETE"),
    "call": _rm(call_route_map="CALLED"),
    "set-attributes": _rm(set_origin="IGP", set_med="50", set_next_hop="10.0.0.1",
                          set_ipv6_next_hop_global="fc00::1", set_ipv6_next_hop_prefer_global="true",
                          set_tag="9"),
    "set-local-pref": _rm(set_local_pref="300"),
    "set-metric-value": _rm(set_metric_action="METRIC_SET_VALUE", set_metric="10"),
    "set-metric-add": _rm(set_metric_action="METRIC_ADD_VALUE", set_metric="10"),
    "set-metric-subtract": _rm(set_metric_action="METRIC_SUBTRACT_VALUE", set_metric="10"),
    "set-metric-rtt": _rm(set_metric_action="METRIC_SET_RTT"),
    "set-metric-add-rtt": _rm(set_metric_action="METRIC_ADD_RTT"),
    "set-metric-subtract-rtt": _rm(set_metric_action="METRIC_SUBTRACT_RTT"),
    "set-metric-plain": _rm(set_metric="20"),
    "set-community-inline": _rm(set_community_inline=["65000:10", "no-export"]),
    "set-community-ref": _rm(set_community_ref="C_ALL"),
    "set-ext-community-inline": _rm(set_ext_community_inline=["route-target:65000:10", "route-origin:65000:11"]),
    "set-ext-community-rt": _rm(set_ext_community_inline=["route-target:65000:12"]),
    "set-ext-community-soo": _rm(set_ext_community_inline=["route-origin:65000:13"]),
    "set-ext-community-ref": _rm(set_ext_community_ref="E_ALL"),
    "set-asn-repeat": _rm(set_asn="65101", set_repeat_asn="3"),
    "set-asn": _rm(set_asn="65101"),
    "set-asn-list": _rm(set_asn_list="65101,65102"),
    "deny-statement": {"ROUTE_MAP": {"RM|20": {"route_operation": "deny", "match_prefix_set": "PL4"}}},
    "af-nexthop-self": _af(nhself="true"),
    "af-nexthop-self-force": _af(nhself="true", nexthop_self_force="true"),
    "af-allowas-in": _af(allow_as_in="true"),
    "af-allowas-in-count": _af(allow_as_in="true", allow_as_count="2"),
    "af-allowas-in-origin": _af(allow_as_in="true", allow_as_origin="true"),
    "af-send-community-standard": _af(send_community="standard"),
    "af-send-community-extended": _af(send_community="extended"),
    "af-send-community-large": _af(send_community="large"),
    "af-send-community-both": _af(send_community="both"),
    "af-send-community-all": _af(send_community="all"),
    "af-default-originate": _af(send_default_route="true"),
    "af-default-originate-rmap": _af(send_default_route="true", default_rmap="RM"),
    "af-rr-client-soft-in": _af(rrclient="true", soft_reconfiguration_in="true"),
    "af-max-prefix": _af(max_prefix_limit="1000", max_prefix_warning_threshold="80",
                         max_prefix_restart_interval="5"),
    "af-max-prefix-warning": _af(max_prefix_limit="1000", max_prefix_warning_only="true"),
    "af-weight-lists": _af(weight="100", prefix_list_in="PL4", prefix_list_out="PL4", filter_list_in="AP",
                           filter_list_out="AP", unsuppress_map_name="RM"),
    "af-as-override-rpas": _af(as_override="true", remove_private_as_enabled="true"),
    "af-rpas-all-replace": _af(remove_private_as_enabled="true", remove_private_as_all="true",
                               replace_private_as="true"),
    "af-tx-add-paths-all": _af(tx_add_paths="tx_all_paths"),
    "af-tx-add-paths-per-as": _af(tx_add_paths="tx_best_path_per_as"),
    "af-unchanged": _af(unchanged_as_path="true", unchanged_med="true", unchanged_nexthop="true"),
    "af-unchanged-as-path": _af(unchanged_as_path="true"),
    "af-cap-orf": _af(cap_orf="both"),
    "af-route-server-client": _af(route_server_client="true"),
    "af-neighbor-row": {"BGP_NEIGHBOR_AF": {NB4: {"admin_status": "up", "weight": "10",
                                                 "soft_reconfiguration_in": "true"}}},
    "af-ipv6": {"BGP_PEER_GROUP_AF": {PG6: {"admin_status": "up", "route_map_in": ["RM"],
                                            "route_map_out": ["RM"], "allow_as_in": "true",
                                            "prefix_list_in": "PL6"}}},
    "af-deactivate": {"BGP_NEIGHBOR_AF": {NB4: {"admin_status": "down"}}},
}


def base() -> dict[str, Any]:
    db: dict[str, Any] = json.loads(BASE.read_text())
    return db


def config(name: str) -> dict[str, Any]:
    """The base T0 with the policy sets and case `name`'s rows."""
    db = base()
    for table, rows in [*SETS.items(), *CASES[name].items()]:
        for key, row in rows.items():
            db.setdefault(table, {}).setdefault(key, {}).update(copy.deepcopy(row))
    return db
