"""The routing policy frrcfgd renders from CONFIG_DB: prefix, community and AS-path lists, route-maps,
and the per-address-family options of neighbors and peer groups. Pure.

What SONiC renders at boot (src/sonic-frr-mgmt-framework/templates: bgpd.conf.db.pref_list.j2,
bgpd.conf.db.route_map.j2, bgpd.conf.db.comm_list.j2, the AS_PATH_SET lines of bgpd.conf.db.j2 and
bgpd.conf.db.nbr_af.j2), line for line. Where the boot template ignores a field of the YANG model or
renders a line FRR refuses, the line is the one frrcfgd sends when the field is Set (its
route_map_key_map), which is what a SONiC switch runs once the field was written; each such line is
an entry of twin.stages.render.frr_differences:
- `set_local_pref`: the template reads `set_local_preference`, a field no model has;
- `set_asn` with `set_repeat_asn`: the template compares the string with 0 and fails; `set_asn`
  alone and `set_asn_list` it ignores;
- `set_community_ref` / `set_ext_community_ref`: the template names the set, which FRR refuses;
  frrcfgd sends the set's members;
- `set_ext_community_inline` with only route-origin members: the template's `soo` line is empty;
- `match_protocol` ospf3: FRR calls it ospf6, as frrcfgd writes it.
`match_ipv6_prefix_set` and `set_tag` render nothing, on SONiC as here (neither the templates nor
frrcfgd read them), nor does a route-map statement without `route_operation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Tables = Mapping[str, Mapping[str, Any]]
_IP = {"IPv4": "ip", "IPv6": "ipv6"}
_RT, _SOO = "route-target:", "route-origin:"
_SEND_COMMUNITY = {"standard": ("extended", "large"), "extended": ("", "large"), "large": ("", "extended"),
                   "both": ("large",), "none": ("all",)}
_TX_ADD_PATHS = {"tx_all_paths": "addpath-tx-all-paths", "tx_best_path_per_as": "addpath-tx-bestpath-per-AS"}
_METRIC = {"METRIC_SET_VALUE": "", "METRIC_ADD_VALUE": "+", "METRIC_SUBTRACT_VALUE": "-"}
_RTT = {"METRIC_SET_RTT": "rtt", "METRIC_ADD_RTT": "+rtt", "METRIC_SUBTRACT_RTT": "-rtt"}


def items(value: Any) -> list[str]:
    """A leaf-list field as its items (a config_db.json list, or the comma-joined form)."""
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return [] if value in (None, "") else str(value).split(",")


def _true(row: Mapping[str, Any], field: str) -> bool:
    return str(row.get(field, "")).lower() == "true"


# -- lists -------------------------------------------------------------------------------------------


def _prefix_line(ip: str, name: str, seq: str | None, action: str, prefix: str, length: str) -> str | None:
    head = f"{ip} prefix-list {name}{f' seq {seq}' if seq else ''} {action} {prefix}"
    if length == "exact":
        return head
    low, sep, high = length.partition("..")
    if not sep or "/" not in prefix:
        return None  # the template fails on it; SONiC's YANG takes any string here
    # the template compares the range's start with the prefix length as strings, as here
    return f"{head} ge {low} le {high}" if low > prefix.split("/")[1] else f"{head} le {high}"


def prefix_list_lines(db: Tables) -> list[str]:
    """bgpd.conf.db.pref_list.j2: PREFIX rows of every PREFIX_SET with a mode, IPv4 sets first."""
    sets, prefixes = db.get("PREFIX_SET", {}), db.get("PREFIX", {})
    lines: list[str] = []
    if not sets or not prefixes:
        return lines
    for mode in ("IPv4", "IPv6"):
        for name, row in sorted(sets.items()):
            if (row or {}).get("mode") != mode:
                continue
            for key, entry in sorted(prefixes.items(), key=lambda kv: _prefix_order(kv[0])):
                parts = key.split("|")
                if len(parts) == 4:
                    set_name, seq, prefix, length = parts
                elif len(parts) == 3:
                    (set_name, prefix, length), seq = parts, None
                else:
                    continue
                if set_name == name:
                    line = _prefix_line(_IP[mode], name, seq, (entry or {}).get("action", "permit"), prefix, length)
                    if line is not None:
                        lines.append(line)
    return lines


def _prefix_order(key: str) -> tuple[str, int, str]:
    parts = key.split("|")
    seq = parts[1] if len(parts) == 4 and parts[1].isdigit() else "0"
    return (parts[0], int(seq), key)


def _ext_members(members: list[str]) -> str:
    out = []
    for member in members:
        if _RT in member:
            out.append("rt " + member[len(_RT):])
        elif _SOO in member:
            out.append("soo " + member[len(_SOO):])
        else:
            out.append(member)
    return " ".join(out)


def community_list_lines(db: Tables) -> list[str]:
    """bgpd.conf.db.comm_list.j2: COMMUNITY_SET and EXTENDED_COMMUNITY_SET with type, match and members."""
    lines = []
    for table, keyword in (("COMMUNITY_SET", "community-list"), ("EXTENDED_COMMUNITY_SET", "extcommunity-list")):
        extended = table == "EXTENDED_COMMUNITY_SET"
        for name, row in sorted(db.get(table, {}).items()):
            row = row or {}
            if not all(f in row for f in ("set_type", "match_action", "community_member")):
                continue
            head = f"bgp {keyword} {str(row['set_type']).lower()} {name} permit"
            members = items(row["community_member"])
            match = str(row["match_action"]).lower()
            if match == "all":
                lines.append(f"{head} {_ext_members(members) if extended else ' '.join(members)}")
            elif match == "any":
                lines += [f"{head} {_ext_members([m]) if extended else m}" for m in members]
    return lines


def as_path_lines(db: Tables) -> list[str]:
    """bgpd.conf.db.j2: one `bgp as-path access-list NAME permit MEMBER` per AS_PATH_SET member."""
    return [f"bgp as-path access-list {name} permit {member}"
            for name, row in sorted(db.get("AS_PATH_SET", {}).items())
            for member in items((row or {}).get("as_path_set_member"))]


# -- route-maps ----------------------------------------------------------------------------------------


def _prefix_match(db: Tables, row: Mapping[str, Any], field: str, what: str) -> list[str]:
    name = row.get(field)
    sets = db.get("PREFIX_SET", {})
    if name is None or name not in sets:
        return []
    ip = _IP.get(str((sets[name] or {}).get("mode")))
    return [f" match {ip} {what} prefix-list {name}"] if ip else []  # no mode: SONiC's line is refused


def _prepend(row: Mapping[str, Any]) -> list[str]:
    if row.get("set_asn_list"):
        return [" set as-path prepend " + " ".join(str(row["set_asn_list"]).split(","))]
    if "set_asn" in row:
        repeat = str(row.get("set_repeat_asn", "1"))
        count = int(repeat) if repeat.isdigit() and int(repeat) > 0 else 1
        return [" set as-path prepend " + " ".join([str(row["set_asn"])] * count)]
    return []


def _members(db: Tables, table: str, name: Any) -> list[str] | None:
    row = db.get(table, {}).get(str(name))
    if not row or not all(f in row for f in ("set_type", "match_action", "community_member")):
        return None  # frrcfgd: "community set not found or configured"
    return items(row["community_member"])


def _ext_sets(members: list[str], rt_for_soo: bool) -> list[str]:
    rt = [m.split(":", 1)[1] for m in members if m.startswith(_RT)]
    soo = [m.split(":", 1)[1] for m in members if m.startswith(_SOO)]
    lines = [" set extcommunity rt " + " ".join(rt)] if rt else []
    if soo:  # the template writes the route-targets on its soo line (when it has any)
        lines.append(" set extcommunity soo " + " ".join(rt if rt and rt_for_soo else soo))
    return lines


def _metric(row: Mapping[str, Any]) -> list[str]:
    action = row.get("set_metric_action")
    if action is not None:
        lines = []
        if "set_metric" in row and action in _METRIC:
            lines.append(f" set metric {_METRIC[str(action)]}{row['set_metric']}")
        if action in _RTT:
            lines.append(f" set metric {_RTT[str(action)]}")
        return lines
    for field in ("set_med", "set_metric"):
        if field in row:
            return [f" set metric {row[field]}"]
    return []


def route_map_entry_lines(db: Tables, row: Mapping[str, Any]) -> list[str]:
    """The clauses of one ROUTE_MAP statement, in bgpd.conf.db.route_map.j2's order."""
    lines = []
    for field, words in (("match_as_path", "match as-path"), ("call_route_map", "call"),
                         ("match_community", "match community"), ("match_ext_community", "match extcommunity"),
                         ("match_interface", "match interface")):
        if field in row:
            lines.append(f" {words} {row[field]}")
    if items(row.get("match_tag")):
        lines.append(f" match tag {items(row['match_tag'])[0]}")
    if "match_src_vrf" in row:
        lines.append(f" match source-vrf {row['match_src_vrf']}")
    lines += _prefix_match(db, row, "match_prefix_set", "address")
    lines += _prefix_match(db, row, "match_next_hop_set", "next-hop")
    for field, words in (("match_local_pref", "match local-preference"), ("match_med", "match metric")):
        if field in row:
            lines.append(f" {words} {row[field]}")
    if "match_origin" in row:
        lines.append(f" match origin {str(row['match_origin']).lower()}")
    if items(row.get("match_neighbor")):
        lines.append(f" match peer {items(row['match_neighbor'])[0]}")
    if "match_protocol" in row:
        protocol = str(row["match_protocol"])
        lines.append(f" match source-protocol {'ospf6' if protocol == 'ospf3' else protocol}")
    lines += _prepend(row)
    if items(row.get("set_community_inline")):
        lines.append(" set community " + " ".join(items(row["set_community_inline"])))
    if "set_community_ref" in row:
        members = _members(db, "COMMUNITY_SET", row["set_community_ref"])
        if members:
            lines.append(" set community " + " ".join(members))
    if items(row.get("set_ext_community_inline")):
        lines += _ext_sets(items(row["set_ext_community_inline"]), rt_for_soo=True)
    if "set_ext_community_ref" in row:
        lines += _ext_sets(_members(db, "EXTENDED_COMMUNITY_SET", row["set_ext_community_ref"]) or [],
                           rt_for_soo=False)
    if "set_next_hop" in row:
        lines.append(f" set ip next-hop {row['set_next_hop']}")
    if "set_ipv6_next_hop_global" in row:
        lines.append(f" set ipv6 next-hop global {row['set_ipv6_next_hop_global']}")
    if _true(row, "set_ipv6_next_hop_prefer_global"):
        lines.append(" set ipv6 next-hop prefer-global")
    if "set_local_pref" in row:
        lines.append(f" set local-preference {row['set_local_pref']}")
    lines += _metric(row)
    if "set_origin" in row:
        lines.append(f" set origin {str(row['set_origin']).lower()}")
    return lines


def route_map_statements(db: Tables) -> list[tuple[str, int, str]]:
    """(name, sequence, permit|deny) of every ROUTE_MAP statement SONiC renders, in order."""
    out = []
    for key, row in db.get("ROUTE_MAP", {}).items():
        parts = key.split("|")
        if len(parts) == 2 and parts[1].isdigit() and "route_operation" in (row or {}):
            out.append((parts[0], int(parts[1]), str(row["route_operation"])))
    return sorted(out)


def route_map_lines(db: Tables) -> list[str]:
    """bgpd.conf.db.route_map.j2: every statement with a route_operation, its clauses, `exit`."""
    lines = []
    for name, seq, action in route_map_statements(db):
        lines += [f"route-map {name} {action} {seq}",
                  *route_map_entry_lines(db, db["ROUTE_MAP"][f"{name}|{seq}"]), "exit", "!"]
    return lines


def policy_lines(db: Tables) -> list[str]:
    """Every top-level policy line, in bgpd.conf.db.j2's order: prefix-lists, route-maps, AS-path
    lists, community lists."""
    lists = prefix_list_lines(db)
    return [*lists, *(["!"] if lists else []), *route_map_lines(db), *as_path_lines(db), *community_list_lines(db)]


# -- neighbor and peer-group address-family options ------------------------------------------------


def _max_prefix(row: Mapping[str, Any]) -> str:
    words = f"maximum-prefix {row['max_prefix_limit']}"
    if "max_prefix_warning_threshold" in row:
        words += f" {row['max_prefix_warning_threshold']}"
    if "max_prefix_restart_interval" in row:
        words += f" restart {row['max_prefix_restart_interval']}"
    elif _true(row, "max_prefix_warning_only"):
        words += " warning-only"
    return words


def _flag_options(row: Mapping[str, Any]) -> list[str]:
    """The options of nbr_af.j2 up to maximum-prefix, in its order (without the neighbor)."""
    out = []
    if row.get("tx_add_paths") in _TX_ADD_PATHS:
        out.append(_TX_ADD_PATHS[str(row["tx_add_paths"])])
    if _true(row, "nhself"):
        out.append("next-hop-self force" if _true(row, "nexthop_self_force") else "next-hop-self")
    if _true(row, "remove_private_as_enabled"):
        out.append("remove-private-AS" + (" all" if _true(row, "remove_private_as_all") else "")
                   + (" replace-AS" if _true(row, "replace_private_as") else ""))
    for kind in _SEND_COMMUNITY.get(str(row.get("send_community")), ()):
        out.append(f"no-send-community {kind}".rstrip())
    if _true(row, "as_override"):
        out.append("as-override")
    if _true(row, "send_default_route"):
        out.append("default-originate" + (f" route-map {row['default_rmap']}" if "default_rmap" in row else ""))
    for field, words in (("rrclient", "route-reflector-client"),
                         ("soft_reconfiguration_in", "soft-reconfiguration inbound")):
        if _true(row, field):
            out.append(words)
    if "max_prefix_limit" in row:
        out.append(_max_prefix(row))
    return out


def neighbor_af_options(name: str, row: Mapping[str, Any]) -> list[str]:
    """nbr_af.j2's lines for a neighbor or peer group in one address family, but its activation and
    route-maps (`neighbor NAME ...`, unindented)."""
    words = _flag_options(row)
    if _true(row, "route_server_client"):
        words.append("route-server-client")
    if _true(row, "allow_as_in"):
        words.append("allowas-in origin" if _true(row, "allow_as_origin")
                     else f"allowas-in {row['allow_as_count']}" if "allow_as_count" in row else "allowas-in")
    for field, fmt in (("cap_orf", "capability orf prefix-list {}"), ("weight", "weight {}"),
                       ("prefix_list_in", "prefix-list {} in"), ("prefix_list_out", "prefix-list {} out"),
                       ("unsuppress_map_name", "unsuppress-map {}"), ("filter_list_in", "filter-list {} in"),
                       ("filter_list_out", "filter-list {} out")):
        if field in row:
            words.append(fmt.format(row[field]))
    unchanged = [w for f, w in (("unchanged_as_path", "as-path"), ("unchanged_med", "med"),
                                ("unchanged_nexthop", "next-hop")) if _true(row, f)]
    if unchanged:
        words.append("attribute-unchanged " + " ".join(unchanged))
    return [f"no neighbor {name} send-community{w.removeprefix('no-send-community')}"
            if w.startswith("no-send-community") else f"neighbor {name} {w}" for w in words]
