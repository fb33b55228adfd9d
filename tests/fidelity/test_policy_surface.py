"""Twin renders the routing policy surface line for line as SONiC's frrcfgd templates do.

Every case of policy_catalog (every leaf of sonic-route-map.yang, sonic-routing-policy-sets.yang and the
address-family options of sonic-bgp-common.yang, with values of their types) is rendered by twin and by
SONiC's own templates (twin.stages.render.sonic_templates); the policy lines (prefix, community and
AS-path lists, route-maps and their clauses, neighbor and peer-group address-family lines) are compared
in their context (twin.switch.frr.frr_drift.parse). A SONiC line twin lacks fails unless the allow-list
leaves it out; a line only twin renders fails unless the allow-list names it (twin_only).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from policy_catalog import CASES, SETS, config
from reference import TEMPLATES, needs_reference

from twin.stages.render.frr import render_frr
from twin.stages.render.frr_differences import adapt_lines, twin_only
from twin.stages.render.sonic_templates import render_with_templates
from twin.switch.frr.frr_drift import Path as LinePath
from twin.switch.frr.frr_drift import parse

pytestmark = needs_reference
_POLICY = ("route-map ", "ip prefix-list ", "ipv6 prefix-list ", "bgp community-list ", "bgp extcommunity-list ",
           "bgp as-path access-list ")
ROUTE_MAP_LEAVES = {"route_operation", "match_interface", "match_prefix_set", "match_ipv6_prefix_set",
                    "match_protocol", "match_next_hop_set", "match_src_vrf", "match_neighbor", "match_tag",
                    "match_med", "match_origin", "match_local_pref", "match_community", "match_ext_community",
                    "match_as_path", "call_route_map", "set_origin", "set_local_pref", "set_med", "set_metric_action",
                    "set_metric", "set_next_hop", "set_ipv6_next_hop_global", "set_ipv6_next_hop_prefer_global",
                    "set_repeat_asn", "set_asn", "set_asn_list", "set_community_inline", "set_community_ref",
                    "set_ext_community_inline", "set_ext_community_ref", "set_tag"}
AF_LEAVES = {"admin_status", "send_default_route", "default_rmap", "max_prefix_limit", "max_prefix_warning_only",
             "max_prefix_warning_threshold", "max_prefix_restart_interval", "route_map_in", "route_map_out",
             "soft_reconfiguration_in", "unsuppress_map_name", "rrclient", "weight", "as_override", "send_community",
             "tx_add_paths", "unchanged_as_path", "unchanged_med", "unchanged_nexthop", "filter_list_in",
             "filter_list_out", "nhself", "nexthop_self_force", "prefix_list_in", "prefix_list_out",
             "remove_private_as_enabled", "replace_private_as", "remove_private_as_all", "allow_as_in",
             "allow_as_count", "allow_as_origin", "cap_orf", "route_server_client"}
SET_LEAVES = {"PREFIX_SET": {"mode"}, "PREFIX": {"action"},
              "COMMUNITY_SET": {"set_type", "match_action", "action", "community_member"},
              "EXTENDED_COMMUNITY_SET": {"set_type", "match_action", "action", "community_member"},
              "AS_PATH_SET": {"action", "as_path_set_member"}}
# SONiC's boot template fails on these (set_repeat_asn compared with 0 as a string); twin renders frrcfgd's line
TEMPLATE_FAILS = {"set-asn-repeat": ("route-map RM permit 10", "set as-path prepend 65101 65101 65101")}


def _surface(text: str) -> set[LinePath]:
    out = set()
    for key, _ in parse(text):
        policy = key[0].startswith(_POLICY) and not key[0].startswith("route-map RM_SET_SRC")
        if policy or (len(key) == 3 and key[1].startswith("address-family ") and "neighbor " in key[2]):
            out.add(key)
    return out


def _leaves(table: str) -> set[str]:
    return {f for name in CASES for f, _ in
            [kv for row in config(name).get(table, {}).values() for kv in row.items()]}


def test_the_catalog_covers_every_leaf() -> None:
    assert ROUTE_MAP_LEAVES - _leaves("ROUTE_MAP") == set()
    assert AF_LEAVES - (_leaves("BGP_PEER_GROUP_AF") | _leaves("BGP_NEIGHBOR_AF")) == set()
    for table, leaves in SET_LEAVES.items():
        assert leaves <= {f for row in SETS[table].values() for f in row}, table
    masks = {key.split("|")[-1] for key in SETS["PREFIX"]}
    assert "exact" in masks and any(".." in m for m in masks)
    assert {row["mode"] for row in SETS["PREFIX_SET"].values()} == {"IPv4", "IPv6"}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(TEMPLATE_FAILS)))
def test_twin_renders_the_policy_as_sonic(name: str) -> None:
    assert TEMPLATES is not None
    db = config(name)
    sonic = _surface("\n".join(adapt_lines(render_with_templates(TEMPLATES, db).splitlines())))
    twin = _surface(render_frr(db))
    assert sorted(sonic - twin) == []
    assert [p for p in sorted(twin - sonic) if twin_only(p[-1]) is None] == []
    assert twin  # not vacuous: the case renders policy lines


@pytest.mark.parametrize("name", sorted(TEMPLATE_FAILS))
def test_where_sonic_s_template_fails_twin_renders_frrcfgd_s_line(name: str) -> None:
    assert TEMPLATES is not None
    with pytest.raises(TypeError):
        render_with_templates(TEMPLATES, config(name))
    line = TEMPLATE_FAILS[name]
    assert line in _surface(render_frr(config(name))) and twin_only(line[-1]) is not None


def test_the_comparison_sees_a_dropped_clause() -> None:
    """Not vacuous: SONiC's match line is missing from a rendering that drops match_prefix_set."""
    assert TEMPLATES is not None
    db = config("match-prefix-v4")
    sonic = _surface("\n".join(adapt_lines(render_with_templates(TEMPLATES, db).splitlines())))
    del db["ROUTE_MAP"]["RM|10"]["match_prefix_set"]
    assert ("route-map RM permit 10", "match ip address prefix-list PL4") in sonic - _surface(render_frr(db))
