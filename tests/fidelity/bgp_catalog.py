"""Configs that cover every leaf of the BGP instance models twin's frrcfgd emulation renders (test
helper): sonic-bgp-global.yang (BGP_GLOBALS but the EVPN/VRF-leaking leaves, BGP_GLOBALS_AF's IPv4/IPv6
leaves, BGP_GLOBALS_AF_NETWORK, BGP_GLOBALS_AF_AGGREGATE_ADDR, BGP_GLOBALS_LISTEN_PREFIX),
sonic-bgp-common.yang's neighbor and peer-group leaves (BGP_NEIGHBOR, BGP_PEER_GROUP) and
sonic-route-redistribute.yang (ROUTE_REDISTRIBUTE), each with values of the leaf's type that FRR 8.4
takes. Each case is the frrcfgd T0 of tests/fidelity/catalog with rows added (policy_catalog's sets
with it, so route-maps the rows name exist).
"""

from __future__ import annotations

import copy
from typing import Any

from policy_catalog import SETS, base

G, PG, NB = "default", "default|PEER_V4", "default|10.0.0.0"
AF4, AF6 = "default|ipv4_unicast", "default|ipv6_unicast"


def _glob(**fields: Any) -> dict[str, Any]:
    return {"BGP_GLOBALS": {G: fields}}


def _nb(**fields: Any) -> dict[str, Any]:
    return {"BGP_NEIGHBOR": {NB: fields}}


def _pg(**fields: Any) -> dict[str, Any]:
    return {"BGP_PEER_GROUP": {PG: fields}}


def _af(key: str = AF4, **fields: Any) -> dict[str, Any]:
    return {"BGP_GLOBALS_AF": {key: fields}}


_SESSION: dict[str, dict[str, Any]] = {
    "local-as": {"local_asn": "65005"},
    "local-as-no-prepend": {"local_asn": "65005", "local_as_no_prepend": "true"},
    "local-as-replace-as": {"local_asn": "65005", "local_as_no_prepend": "true", "local_as_replace_as": "true"},
    "shutdown-message": {"admin_status": "down", "shutdown_message": "maintenance window"},
    "ttl-security": {"ttl_security_hops": "2"},
    "password": {"auth_password": "s3cret"},
    "solo-port-passive": {"solo_peer": "true", "peer_port": "1179", "passive_mode": "true"},
    "multihop": {"ebgp_multihop": "true"},
    "multihop-ttl": {"ebgp_multihop": "true", "ebgp_multihop_ttl": "3"},
    "connected-check-first-as": {"disable_ebgp_connected_route_check": "true", "enforce_first_as": "true"},
    "strict-capability": {"strict_capability_match": "true", "min_adv_interval": "5"},
    "capabilities": {"capability_dynamic": "true", "capability_ext_nexthop": "true",
                     "dont_negotiate_capability": "true", "enforce_multihop": "true", "override_capability": "true"},
    "bfd-control-plane": {"bfd": "true", "bfd_check_ctrl_plane_failure": "true"},
    "flags-false": {"solo_peer": "false", "passive_mode": "false", "ebgp_multihop": "false",
                    "capability_dynamic": "false", "strict_capability_match": "false"},
}

# name -> rows added to the base (with policy_catalog's SETS): every leaf at least once
CASES: dict[str, dict[str, Any]] = {
    **{f"neighbor-{name}": _nb(**row) for name, row in _SESSION.items()},
    **{f"peer-group-{name}": _pg(**row) for name, row in _SESSION.items()},
    "neighbor-peer-type": _nb(peer_type="external"),
    "peer-group-remote-as": _pg(asn="65100"),
    "peer-group-external": _pg(peer_type="external"),
    "peer-group-session": _pg(admin_status="down", keepalive="3", holdtime="9", conn_retry="5",
                              local_addr="10.1.0.1", bfd="true"),
    "global-defaults": _glob(fast_external_failover="false", always_compare_med="true", default_local_preference="200",
                             default_show_hostname="true", default_shutdown="true",
                             default_subgroup_pkt_queue_max="20"),
    "global-reflection": _glob(rr_clnt_to_clnt_reflection="false", rr_cluster_id="10.9.9.9",
                               disable_ebgp_connected_rt_check="true", deterministic_med="true",
                               rr_allow_out_policy="true"),
    "global-cluster-id-number": _glob(rr_cluster_id="5"),
    "global-delays": _glob(max_delay="100", establish_wait="50", max_med_time="100", max_med_val="20",
                           max_med_admin="true", max_med_admin_val="30"),
    "global-delay-only": _glob(max_delay="100", max_med_time="100", max_med_admin="true"),
    "global-quanta": _glob(read_quanta="5", write_quanta="50", coalesce_time="500", route_map_process_delay="10",
                           max_dynamic_neighbors="50"),
    "global-graceful": _glob(gr_stale_routes_time="300", gr_restart_time="100", graceful_restart_enable="true",
                             graceful_shutdown="true", gr_preserve_fw_state="true"),
    "global-bestpath": _glob(ignore_as_path_length="true", compare_confed_as_path="true",
                             external_compare_router_id="true", med_confed="true", network_import_check="true"),
    "global-mp-as-set": _glob(as_path_mp_as_set="true"),
    "global-mp-no-as-set": _glob(as_path_mp_as_set="false"),
    "global-false": _glob(fast_external_failover="true", always_compare_med="false", deterministic_med="false",
                          graceful_restart_enable="false", network_import_check="false"),
    "global-confederation": _glob(confed_id="100", confed_peers=["65001", "65002"]),
    "global-timers": _glob(keepalive="10", holdtime="30"),
    # FRR takes a listen range only for a peer group with a remote-as
    "listen-range": {"BGP_GLOBALS_LISTEN_PREFIX": {"default|10.5.0.0/16": {"peer_group": "PEER_V4"}},
                     "BGP_PEER_GROUP": {PG: {"peer_type": "external"}}},
    "af-distance": _af(ebgp_route_distance="30", ibgp_route_distance="200", local_route_distance="100"),
    "af-ibgp-paths": _af(max_ibgp_paths="4", ibgp_equal_cluster_length="true"),
    "af-ibgp-paths-plain": _af(max_ibgp_paths="8"),
    "af-table-map": _af(route_download_filter="RM"),
    "af-dampening": _af(route_flap_dampen="true", route_flap_dampen_half_life="10",
                        route_flap_dampen_reuse_threshold="700", route_flap_dampen_suppress_threshold="2500",
                        route_flap_dampen_max_suppress="50"),
    "af-dampening-plain": _af(route_flap_dampen="true"),
    "af-dampening-half-life": _af(route_flap_dampen="true", route_flap_dampen_half_life="10"),
    "af-dampening-partial": _af(route_flap_dampen="true", route_flap_dampen_half_life="10",
                                route_flap_dampen_reuse_threshold="700"),
    "af-ipv6": _af(AF6, max_ebgp_paths="4", max_ibgp_paths="2", route_flap_dampen="true"),
    "network-policy": {"BGP_GLOBALS_AF_NETWORK": {"default|ipv4_unicast|10.1.0.1/32": {"policy": "RM"},
                                                  "default|ipv4_unicast|10.7.0.0/16": {"backdoor": "true"}}},
    "network-backdoor-policy": {"BGP_GLOBALS_AF_NETWORK": {
        "default|ipv4_unicast|10.7.0.0/16": {"backdoor": "true", "policy": "RM"},
        "default|ipv6_unicast|fc00:7::/48": {}}},
    "aggregate": {"BGP_GLOBALS_AF_AGGREGATE_ADDR": {
        "default|ipv4_unicast|10.2.0.0/16": {"as_set": "true", "summary_only": "true"},
        "default|ipv4_unicast|10.3.0.0/16": {"summary_only": "true"},
        "default|ipv4_unicast|10.4.0.0/16": {"as_set": "true"},
        "default|ipv6_unicast|fc00:8::/32": {}}},
    "redistribute": {"ROUTE_REDISTRIBUTE": {"default|connected|bgp|ipv4": {"route_map": ["RM"]},
                                            "default|static|bgp|ipv4": {},
                                            "default|connected|bgp|ipv6": {}}},
}
# Where twin renders frrcfgd's line in place of the template's: case -> (the template's line, twin's)
FRRCFGD_LINES: dict[str, tuple[str, str]] = {
    "neighbor-local-as-no-prepend": ("neighbor 10.0.0.0 local-as 65005", "neighbor 10.0.0.0 local-as 65005 no-prepend"),
    "neighbor-local-as-replace-as": ("neighbor 10.0.0.0 local-as 65005",
                                     "neighbor 10.0.0.0 local-as 65005 no-prepend replace-as"),
    "peer-group-local-as-no-prepend": ("neighbor PEER_V4 local-as 65005", "neighbor PEER_V4 local-as 65005 no-prepend"),
    "peer-group-local-as-replace-as": ("neighbor PEER_V4 local-as 65005",
                                       "neighbor PEER_V4 local-as 65005 no-prepend replace-as"),
}


def config(name: str) -> dict[str, Any]:
    """The base T0 with the policy sets and case `name`'s rows."""
    db = base()
    for table, rows in [*SETS.items(), *CASES[name].items()]:
        for key, row in rows.items():
            db.setdefault(table, {}).setdefault(key, {}).update(copy.deepcopy(row))
    return db
