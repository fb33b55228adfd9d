"""frrcfgd's BGP instance options as twin renders them (twin.stages.render.frrcfgd_bgp) and changes them at
runtime (twin.switch.config.apply): BGP_GLOBALS settings, neighbor and peer-group session options, an
address family's distance, networks, aggregates, redistribution, dampening and multipath, listen ranges;
and how FRR shows them (twin.switch.frr.frr_drift)."""

from __future__ import annotations

import copy
from typing import Any

from twin.stages.render.frr import render_frr
from twin.stages.render.frrcfgd_bgp import family_tail, global_options, group_options, session_options
from twin.switch.config.apply import frr_lines
from twin.switch.frr.frr_drift import canonical, drift

NB, PG = "default|10.0.0.0", "default|PEER_V4"


def _db() -> dict[str, Any]:
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "frr_mgmt_framework_config": "true"}},
        "BGP_GLOBALS": {"default": {"local_asn": "65101", "router_id": "10.1.0.1"}},
        "BGP_PEER_GROUP": {PG: {}},
        "BGP_NEIGHBOR": {NB: {"asn": "65100", "peer_group_name": "PEER_V4"}},
        "BGP_PEER_GROUP_AF": {"default|PEER_V4|ipv4_unicast": {"admin_status": "up"}},
    }


def _with(table: str, key: str, **fields: Any) -> dict[str, Any]:
    db = copy.deepcopy(_db())
    db.setdefault(table, {}).setdefault(key, {}).update(fields)
    return db


def _bgp(*lines: str) -> list[str]:
    return ["router bgp 65101", *lines, "exit"]


def test_session_options_in_the_template_s_order() -> None:
    row = {"local_asn": "65005", "local_as_no_prepend": "true", "local_as_replace_as": "true",
           "admin_status": "down", "shutdown_message": "going away", "ttl_security_hops": "2", "solo_peer": "true",
           "peer_port": "1179", "passive_mode": "true", "disable_ebgp_connected_route_check": "true",
           "enforce_first_as": "true", "strict_capability_match": "true", "min_adv_interval": "5",
           "capability_dynamic": "true", "capability_ext_nexthop": "false", "bfd": "true",
           "bfd_check_ctrl_plane_failure": "true", "auth_password": "x"}
    assert [line for _, line in session_options(row)] == [
        "local-as 65005 no-prepend replace-as", "shutdown message going away", "ttl-security hops 2", "solo",
        "port 1179", "passive", "disable-connected-check", "enforce-first-as", "strict-capability-match",
        "advertisement-interval 5", "capability dynamic", "bfd check-control-plane-failure"]
    # FRR takes replace-as only after no-prepend: alone, the template's `local-as N`
    assert session_options({"local_asn": "1", "local_as_replace_as": "true"}) == [("local_asn", "local-as 1")]
    assert session_options({"ebgp_multihop": "true"}) == [("ebgp_multihop", "ebgp-multihop 255")]
    assert session_options({"ebgp_multihop": "true", "ebgp_multihop_ttl": "3"}) == [
        ("ebgp_multihop", "ebgp-multihop 3")]
    # without bfd FRR would turn BFD on with it: not rendered
    assert session_options({"bfd_check_ctrl_plane_failure": "true"}) == []


def test_a_peer_group_renders_as_a_neighbor() -> None:
    lines = [line for _, line in group_options({"peer_type": "external", "asn": "65100", "name": "FABRIC",
                                                "admin_status": "down", "bfd": "true", "local_addr": "10.1.0.1",
                                                "keepalive": "3", "holdtime": "9", "conn_retry": "5"})]
    assert lines == ["remote-as external", "description FABRIC", "bfd", "update-source 10.1.0.1", "timers 3 9",
                     "timers connect 5", "shutdown"]
    conf = render_frr(_with("BGP_PEER_GROUP", PG, asn="65100", passive_mode="true"))
    assert " neighbor PEER_V4 remote-as 65100\n" in conf and " neighbor PEER_V4 passive\n" in conf


def test_globals_as_the_template_renders_them() -> None:
    row = {"fast_external_failover": "false", "always_compare_med": "true", "rr_cluster_id": "10.9.9.9",
           "max_delay": "100", "establish_wait": "50", "max_med_admin": "false", "ignore_as_path_length": "false",
           "load_balance_mp_relax": "true", "as_path_mp_as_set": "true", "confed_peers": ["65001", "65002"],
           "network_import_check": "false"}
    assert [line for _, line in global_options(row)] == [
        "no bgp fast-external-failover", "bgp always-compare-med", "bgp cluster-id 10.9.9.9", "update-delay 100 50",
        # the template writes these whatever their value, as SONiC boots them
        "bgp max-med administrative", "bgp bestpath as-path ignore",
        "bgp bestpath as-path multipath-relax as-set", "bgp confederation peers 65001 65002"]


def test_dampening_lines_frr_refuses_are_left_out() -> None:
    af = {"route_flap_dampen": "true", "route_flap_dampen_half_life": "10"}
    db = {"BGP_GLOBALS_AF": {"default|ipv4_unicast": af}}
    assert family_tail(db, "ipv4_unicast", ebgp_paths=False) == [("route_flap_dampen", "bgp dampening 10")]
    af["route_flap_dampen_reuse_threshold"] = "700"
    assert family_tail(db, "ipv4_unicast", ebgp_paths=False) == []
    af.update(route_flap_dampen_suppress_threshold="2000", route_flap_dampen_max_suppress="60")
    assert family_tail(db, "ipv4_unicast", ebgp_paths=False) == [("route_flap_dampen", "bgp dampening 10 700 2000 60")]


def test_a_neighbor_option_set_changed_and_removed_sends_frrcfgd_s_lines() -> None:
    passive = _with("BGP_NEIGHBOR", NB, passive_mode="true", ebgp_multihop="true")
    assert frr_lines(_db(), passive) == _bgp(" neighbor 10.0.0.0 passive", " neighbor 10.0.0.0 ebgp-multihop 255")
    ttl = _with("BGP_NEIGHBOR", NB, passive_mode="true", ebgp_multihop="true", ebgp_multihop_ttl="3")
    assert frr_lines(passive, ttl) == _bgp(" neighbor 10.0.0.0 ebgp-multihop 3")
    assert frr_lines(ttl, _db()) == _bgp(" no neighbor 10.0.0.0 ebgp-multihop 3", " no neighbor 10.0.0.0 passive")
    down = _with("BGP_NEIGHBOR", NB, admin_status="down", shutdown_message="maintenance")
    assert frr_lines(_db(), down) == _bgp(" neighbor 10.0.0.0 shutdown message maintenance")
    assert frr_lines(down, _db()) == _bgp(" no neighbor 10.0.0.0 shutdown message maintenance")


def test_bfd_off_takes_its_control_plane_check_first() -> None:
    """`no ... bfd check-control-plane-failure` after `no ... bfd` would turn BFD on again."""
    on = _with("BGP_NEIGHBOR", NB, bfd="true", bfd_check_ctrl_plane_failure="true")
    assert frr_lines(on, _db()) == _bgp(" no neighbor 10.0.0.0 bfd check-control-plane-failure",
                                        " no neighbor 10.0.0.0 bfd")
    group = _with("BGP_PEER_GROUP", PG, bfd="true", bfd_check_ctrl_plane_failure="true")
    assert frr_lines(group, _db()) == _bgp(" no neighbor PEER_V4 bfd check-control-plane-failure",
                                           " no neighbor PEER_V4 bfd")


def test_global_options_change_line_by_line() -> None:
    db = _with("BGP_GLOBALS", "default", fast_external_failover="false", network_import_check="true",
               route_map_process_delay="10")
    assert frr_lines(_db(), db) == _bgp(" no bgp fast-external-failover", " bgp network import-check",
                                        " bgp route-map delay-timer 10")
    # import-check is FRR's default: its removal leaves FRR as a boot without the field would
    assert frr_lines(db, _db()) == _bgp(" bgp fast-external-failover", " no bgp route-map delay-timer 10")


def test_listen_ranges_follow_their_peer_group() -> None:
    db = _with("BGP_PEER_GROUP", "default|DYN", peer_type="external")
    db["BGP_GLOBALS_LISTEN_PREFIX"] = {"default|10.5.0.0/16": {"peer_group": "DYN"}}
    assert frr_lines(_db(), db) == _bgp(" neighbor DYN peer-group", " neighbor DYN remote-as external",
                                        " bgp listen range 10.5.0.0/16 peer-group DYN")
    assert frr_lines(db, _db()) == _bgp(" no bgp listen range 10.5.0.0/16 peer-group DYN",
                                        " no neighbor DYN peer-group")


def test_address_family_lines_change_line_by_line() -> None:
    db = _with("BGP_GLOBALS_AF", "default|ipv4_unicast", ebgp_route_distance="30", ibgp_route_distance="200",
               local_route_distance="100", max_ibgp_paths="4")
    db["BGP_GLOBALS_AF_AGGREGATE_ADDR"] = {"default|ipv4_unicast|10.2.0.0/16": {"as_set": "true"}}
    db["BGP_GLOBALS_AF_NETWORK"] = {"default|ipv4_unicast|10.7.0.0/16": {"policy": "RM"}}
    db["ROUTE_REDISTRIBUTE"] = {"default|connected|bgp|ipv6": {"route_map": ["RM"]}}
    assert frr_lines(_db(), db) == _bgp(
        " address-family ipv4 unicast", "  distance bgp 30 200 100", "  network 10.7.0.0/16 route-map RM",
        "  aggregate-address 10.2.0.0/16 as-set", "  maximum-paths ibgp 4", " exit-address-family",
        " address-family ipv6 unicast", "  redistribute connected route-map RM", " exit-address-family")
    summary = copy.deepcopy(db)
    summary["BGP_GLOBALS_AF_AGGREGATE_ADDR"]["default|ipv4_unicast|10.2.0.0/16"] = {"summary_only": "true"}
    summary["BGP_GLOBALS_AF_NETWORK"]["default|ipv4_unicast|10.7.0.0/16"] = {}
    # FRR refuses an aggregate it has again: removed first; a network's new line replaces its route-map
    assert frr_lines(db, summary) == _bgp(
        " address-family ipv4 unicast", "  no aggregate-address 10.2.0.0/16 as-set", "  network 10.7.0.0/16",
        "  aggregate-address 10.2.0.0/16 summary-only", " exit-address-family")


def test_frr_s_way_of_showing_the_lines() -> None:
    bgp = "router bgp 65101"
    assert canonical((bgp, "neighbor 10.0.0.0 enforce-multihop")) == (bgp, "neighbor 10.0.0.0 disable-connected-check")
    assert canonical((bgp, "bgp cluster-id 5")) == (bgp, "bgp cluster-id 0.0.0.5")
    assert canonical((bgp, "neighbor 10.0.0.0 port 179")) is None
    assert canonical((bgp, "bgp route-map delay-timer 10")) == ("bgp route-map delay-timer 10",)
    assert canonical((bgp, "bgp route-map delay-timer 5")) is None
    assert canonical((bgp, "address-family ipv4 unicast", "network 10.7.0.0/16 backdoor route-map RM")) == (
        bgp, "address-family ipv4 unicast", "network 10.7.0.0/16 route-map RM backdoor")
    assert canonical((bgp, "address-family ipv4 unicast", "bgp dampening 15 750 2000 60")) == (
        bgp, "address-family ipv4 unicast", "bgp dampening")
    assert canonical((bgp, "update-delay 100 100")) == (bgp, "update-delay 100")


def test_what_frr_does_not_show_is_no_drift() -> None:
    rendered = ("router bgp 65101\n neighbor PG peer-group\n neighbor PG remote-as 65100\n neighbor PG solo\n"
                " neighbor 10.0.0.0 remote-as 65100\n neighbor 10.0.0.0 peer-group PG\n neighbor 10.0.0.0 solo\n"
                " neighbor 10.0.0.9 remote-as 65100\n neighbor 10.0.0.9 solo\nexit\n")
    running = ("router bgp 65101\n neighbor PG peer-group\n neighbor PG remote-as 65100\n"
               " neighbor 10.0.0.0 peer-group PG\n neighbor 10.0.0.9 remote-as 65100\nexit\n")
    # a member's remote-as and solo on a group or member FRR never shows; a lone neighbor's solo it does
    assert [(d.kind, d.line) for d in drift(rendered, running)] == [("missing", "neighbor 10.0.0.9 solo")]
    shut = "router bgp 65101\n bgp default shutdown\n neighbor 10.0.0.9 remote-as 65100\nexit\n"
    assert drift(shut, shut.replace("exit", " neighbor 10.0.0.9 shutdown\nexit")) == []
