"""The BGP instance options frrcfgd renders from CONFIG_DB: BGP_GLOBALS' settings, a neighbor's or peer
group's session options, and an address family's own lines (distance, networks, aggregates,
redistribution, dampening, iBGP multipath, table-map). Pure.

Each option is a (field, line) pair, the field naming what CONFIG_DB row field it renders from, so a
change is sent as frrcfgd sends it: the new line when the field is Set, `no <line>` when it is gone.

What SONiC renders at boot (src/sonic-frr-mgmt-framework/templates: bgpd.conf.db.j2,
bgpd.conf.db.nbr_or_peer.j2, bgpd.conf.db.addr_family.j2), line for line. Where the boot template
ignores a field or writes a line FRR refuses, the line is the one frrcfgd sends when the field is Set
(its global_key_map, cmn_key_map), each such line an entry of twin.stages.render.frr_differences:
- `local_as_no_prepend`/`local_as_replace_as`: the template writes `local-as N` alone;
- `bfd_check_ctrl_plane_failure`: the template ignores it;
- `strict_capability_match`: the template compares the string with a boolean and never writes it;
- `confed_id`/`confed_peers`, `keepalive`/`holdtime`: the template ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Option = tuple[str, str]   # (CONFIG_DB field, FRR line without indentation)
# Fields whose line is FRR's default (traditional profile, version 8.4): when the field goes, FRR is left as
# it is, as a boot without the field leaves it (frrcfgd's `no bgp network import-check` would turn it off)
_DEFAULT_ON = frozenset({"network_import_check"})
_AF_NAMES = {"ipv4_unicast": "ipv4", "ipv6_unicast": "ipv6"}


def _true(row: Mapping[str, Any], field: str) -> bool:
    return str(row.get(field, "")).lower() == "true"


def _false(row: Mapping[str, Any], field: str) -> bool:
    return str(row.get(field, "")).lower() == "false"


# -- neighbors and peer groups (bgpd.conf.db.nbr_or_peer.j2) ------------------------------------------


def _local_as(row: Mapping[str, Any]) -> str:
    words = f"local-as {row['local_asn']}"
    if _true(row, "local_as_no_prepend"):  # FRR takes replace-as only after no-prepend
        words += " no-prepend" + (" replace-as" if _true(row, "local_as_replace_as") else "")
    return words


def _shutdown(row: Mapping[str, Any]) -> str | None:
    if row.get("admin_status") not in ("down", "false"):
        return None
    return f"shutdown message {row['shutdown_message']}" if row.get("shutdown_message") else "shutdown"


def _multihop(row: Mapping[str, Any]) -> str | None:
    if "ebgp_multihop_ttl" in row:
        return f"ebgp-multihop {row['ebgp_multihop_ttl']}"
    return "ebgp-multihop 255" if _true(row, "ebgp_multihop") else None


_FLAGS_AFTER_MULTIHOP = (("disable_ebgp_connected_route_check", "disable-connected-check"),
                         ("enforce_first_as", "enforce-first-as"))
_CAPABILITIES = (("capability_dynamic", "capability dynamic"),
                 ("capability_ext_nexthop", "capability extended-nexthop"),
                 ("dont_negotiate_capability", "dont-capability-negotiate"), ("enforce_multihop", "enforce-multihop"),
                 ("override_capability", "override-capability"))


def session_options(row: Mapping[str, Any]) -> list[Option]:
    """nbr_or_peer.j2's session options in its order, but remote-as, peer-group membership, description,
    bfd, update-source and timers (frr.py renders those for a neighbor, group_options for a group)."""
    out: list[Option] = []
    if "local_asn" in row:
        out.append(("local_asn", _local_as(row)))
    shutdown = _shutdown(row)
    if shutdown:
        out.append(("admin_status", shutdown))
    if "ttl_security_hops" in row:
        out.append(("ttl_security_hops", f"ttl-security hops {row['ttl_security_hops']}"))
    if _true(row, "solo_peer"):
        out.append(("solo_peer", "solo"))
    if "peer_port" in row:
        out.append(("peer_port", f"port {row['peer_port']}"))
    if _true(row, "passive_mode"):
        out.append(("passive_mode", "passive"))
    multihop = _multihop(row)
    if multihop:
        out.append(("ebgp_multihop", multihop))
    out += [(field, words) for field, words in _FLAGS_AFTER_MULTIHOP if _true(row, field)]
    if _true(row, "strict_capability_match"):
        out.append(("strict_capability_match", "strict-capability-match"))
    if "min_adv_interval" in row:
        out.append(("min_adv_interval", f"advertisement-interval {row['min_adv_interval']}"))
    out += [(field, words) for field, words in _CAPABILITIES if _true(row, field)]
    if _true(row, "bfd") and _true(row, "bfd_check_ctrl_plane_failure"):
        out.append(("bfd_check_ctrl_plane_failure", "bfd check-control-plane-failure"))
    return out


def group_options(row: Mapping[str, Any]) -> list[Option]:
    """A peer group's lines of nbr_or_peer.j2 but `peer-group` itself: remote-as, description, bfd,
    update-source, timers, then the session options."""
    out: list[Option] = []
    remote = row.get("peer_type", row.get("asn"))
    if remote not in (None, ""):
        out.append(("asn", f"remote-as {remote}"))
    if row.get("name"):
        out.append(("name", f"description {row['name']}"))
    if _true(row, "bfd"):
        out.append(("bfd", "bfd"))
    if "local_addr" in row:
        out.append(("local_addr", f"update-source {row['local_addr']}"))
    if "keepalive" in row and "holdtime" in row:
        out.append(("keepalive", f"timers {row['keepalive']} {row['holdtime']}"))
    if "conn_retry" in row:
        out.append(("conn_retry", f"timers connect {row['conn_retry']}"))
    # after bfd: removed last first, `no ... bfd check-control-plane-failure` goes before `no ... bfd`
    # (after it, FRR would turn BFD on again)
    return out + session_options(row)


# -- BGP_GLOBALS (bgpd.conf.db.j2) ----------------------------------------------------------------------


def _joined(row: Mapping[str, Any], first: str, second: str) -> str:
    return f"{row[first]} {row[second]}" if second in row else str(row[first])


def global_options(row: Mapping[str, Any]) -> list[Option]:
    """bgpd.conf.db.j2's instance lines before the peer groups, in its order, but router-id,
    log-neighbor-changes and default ipv4-unicast (frr.py renders those); then frrcfgd's lines for
    the fields the template ignores (confederation, timers)."""
    out: list[Option] = []
    if _false(row, "fast_external_failover"):
        out.append(("fast_external_failover", "no bgp fast-external-failover"))
    if _true(row, "always_compare_med"):
        out.append(("always_compare_med", "bgp always-compare-med"))
    if "default_local_preference" in row:
        out.append(("default_local_preference", f"bgp default local-preference {row['default_local_preference']}"))
    for field, words in (("default_show_hostname", "bgp default show-hostname"),
                         ("default_shutdown", "bgp default shutdown")):
        if _true(row, field):
            out.append((field, words))
    if "default_subgroup_pkt_queue_max" in row:
        out.append(("default_subgroup_pkt_queue_max",
                    f"bgp default subgroup-pkt-queue-max {row['default_subgroup_pkt_queue_max']}"))
    if _false(row, "rr_clnt_to_clnt_reflection"):
        out.append(("rr_clnt_to_clnt_reflection", "no bgp client-to-client reflection"))
    if "rr_cluster_id" in row:
        out.append(("rr_cluster_id", f"bgp cluster-id {row['rr_cluster_id']}"))
    for field, words in (("disable_ebgp_connected_rt_check", "bgp disable-ebgp-connected-route-check"),
                         ("deterministic_med", "bgp deterministic-med")):
        if _true(row, field):
            out.append((field, words))
    if "max_delay" in row:
        out.append(("max_delay", f"update-delay {_joined(row, 'max_delay', 'establish_wait')}"))
    if "max_med_time" in row:
        out.append(("max_med_time", f"bgp max-med on-startup {_joined(row, 'max_med_time', 'max_med_val')}"))
    if "max_med_admin" in row:  # the template writes it whatever the value, as here
        value = f" {row['max_med_admin_val']}" if "max_med_admin_val" in row else ""
        out.append(("max_med_admin", f"bgp max-med administrative{value}"))
    for field, words in (("read_quanta", "read-quanta"), ("write_quanta", "write-quanta"),
                         ("coalesce_time", "coalesce-time"),
                         ("gr_stale_routes_time", "bgp graceful-restart stalepath-time"),
                         ("gr_restart_time", "bgp graceful-restart restart-time")):
        if field in row:
            out.append((field, f"{words} {row[field]}"))
    for field, words in (("graceful_restart_enable", "bgp graceful-restart"),
                         ("graceful_shutdown", "bgp graceful-shutdown"),
                         ("gr_preserve_fw_state", "bgp graceful-restart preserve-fw-state")):
        if _true(row, field):
            out.append((field, words))
    if "ignore_as_path_length" in row:   # present: the template writes it whatever the value
        out.append(("ignore_as_path_length", "bgp bestpath as-path ignore"))
    if _true(row, "compare_confed_as_path"):
        out.append(("compare_confed_as_path", "bgp bestpath as-path confed"))
    if _true(row, "load_balance_mp_relax"):
        as_set = {"true": " as-set", "false": " no-as-set"}.get(str(row.get("as_path_mp_as_set", "")).lower(), "")
        out.append(("load_balance_mp_relax", f"bgp bestpath as-path multipath-relax{as_set}"))
    if _true(row, "rr_allow_out_policy"):
        out.append(("rr_allow_out_policy", "bgp route-reflector allow-outbound-policy"))
    if "external_compare_router_id" in row:
        out.append(("external_compare_router_id", "bgp bestpath compare-routerid"))
    if _true(row, "med_confed"):
        out.append(("med_confed", "bgp bestpath med confed"))
    if _true(row, "network_import_check"):
        out.append(("network_import_check", "bgp network import-check"))
    if "confed_id" in row:
        out.append(("confed_id", f"bgp confederation identifier {row['confed_id']}"))
    peers = row.get("confed_peers")
    if peers:
        members = peers if isinstance(peers, list) else str(peers).split(",")
        out.append(("confed_peers", "bgp confederation peers " + " ".join(str(p) for p in members)))
    return out


def global_tail_options(row: Mapping[str, Any], listen: Mapping[str, Any]) -> list[Option]:
    """bgpd.conf.db.j2's instance lines after the neighbors: listen limit, route-map delay, listen
    ranges (BGP_GLOBALS_LISTEN_PREFIX rows `default|<prefix>` of this instance)."""
    out: list[Option] = []
    if "max_dynamic_neighbors" in row:
        out.append(("max_dynamic_neighbors", f"bgp listen limit {row['max_dynamic_neighbors']}"))
    if "route_map_process_delay" in row:
        out.append(("route_map_process_delay", f"bgp route-map delay-timer {row['route_map_process_delay']}"))
    for key, entry in listen.items():
        vrf, _, prefix = key.partition("|")
        if vrf == "default" and prefix and (entry or {}).get("peer_group"):
            out.append((f"listen {prefix}", f"bgp listen range {prefix} peer-group {entry['peer_group']}"))
    return out


# -- an address family's own lines (bgpd.conf.db.addr_family.j2) -----------------------------------------


def _rows(db: Mapping[str, Mapping[str, Any]], table: str, family: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(prefix, row) of a `default|<family>|<prefix>` table's rows of this family, in the table's order."""
    out = []
    for key, row in db.get(table, {}).items():
        parts = key.split("|")
        if len(parts) == 3 and parts[0] == "default" and parts[1] == family:
            out.append((parts[2], row or {}))
    return out


def _dampening(row: Mapping[str, Any]) -> str | None:
    """The template's `bgp dampening` with the values it has up to the first one missing; None for
    two or three of them, a line FRR refuses (an entry of frr_differences)."""
    values: list[str] = []
    for field in ("route_flap_dampen_half_life", "route_flap_dampen_reuse_threshold",
                  "route_flap_dampen_suppress_threshold", "route_flap_dampen_max_suppress"):
        if field not in row:
            break
        values.append(str(row[field]))
    return None if len(values) in (2, 3) else " ".join(["bgp dampening", *values])


def family_head(db: Mapping[str, Mapping[str, Any]], family: str) -> list[Option]:
    """An address family's lines before its peer groups and neighbors: distance, networks, aggregates,
    redistribution, in addr_family.j2's order."""
    out: list[Option] = []
    af = db.get("BGP_GLOBALS_AF", {}).get(f"default|{family}", {}) or {}
    if all(f in af for f in ("ebgp_route_distance", "ibgp_route_distance", "local_route_distance")):
        out.append(("distance", f"distance bgp {af['ebgp_route_distance']} {af['ibgp_route_distance']} "
                                f"{af['local_route_distance']}"))
    for prefix, row in _rows(db, "BGP_GLOBALS_AF_NETWORK", family):
        end = ("backdoor " if _true(row, "backdoor") else "") + (f"route-map {row['policy']}"
                                                                  if "policy" in row else "")
        out.append((f"network {prefix}", f"network {prefix} {end}".rstrip()))
    for prefix, row in _rows(db, "BGP_GLOBALS_AF_AGGREGATE_ADDR", family):
        end = ("as-set " if _true(row, "as_set") else "") + ("summary-only" if _true(row, "summary_only") else "")
        out.append((f"aggregate {prefix}", f"aggregate-address {prefix} {end}".rstrip()))
    for key, row in db.get("ROUTE_REDISTRIBUTE", {}).items():
        parts = key.split("|")
        if len(parts) == 4 and parts[0] == "default" and parts[3] == _AF_NAMES.get(family):
            maps = (row or {}).get("route_map")
            names = maps if isinstance(maps, list) else ([] if maps in (None, "") else str(maps).split(","))
            lines = [f"redistribute {parts[1]} route-map {m}" for m in names] or [f"redistribute {parts[1]}"]
            out += [(f"redistribute {parts[1]} {i}", line) for i, line in enumerate(lines)]
    return out


def family_tail(db: Mapping[str, Mapping[str, Any]], family: str, ebgp_paths: bool) -> list[Option]:
    """An address family's lines after its peer groups and neighbors: dampening, multipath (eBGP's
    with `ebgp_paths`: frr.py renders IPv4's itself) and the table-map."""
    out: list[Option] = []
    af = db.get("BGP_GLOBALS_AF", {}).get(f"default|{family}", {}) or {}
    dampening = _dampening(af) if _true(af, "route_flap_dampen") else None
    if dampening:
        out.append(("route_flap_dampen", dampening))
    if ebgp_paths and "max_ebgp_paths" in af:
        out.append(("max_ebgp_paths", f"maximum-paths {af['max_ebgp_paths']}"))
    if "max_ibgp_paths" in af:
        cluster = " equal-cluster-length" if _true(af, "ibgp_equal_cluster_length") else ""
        out.append(("max_ibgp_paths", f"maximum-paths ibgp {af['max_ibgp_paths']}{cluster}"))
    if "route_download_filter" in af:
        out.append(("route_download_filter", f"table-map {af['route_download_filter']}"))
    return out


def option_changes(old: list[Option], new: list[Option], prefix: str = "") -> list[str]:
    """What frrcfgd sends when these options change: `no <line>` for a field gone (last first), then the
    line of each field Set anew or to another value. `prefix` goes before each line (`neighbor X `)."""
    was, now = dict(old), dict(new)
    old = [(f, line) for f, line in old if f not in _DEFAULT_ON or f in now]
    indent = prefix[:len(prefix) - len(prefix.lstrip())]
    # an aggregate FRR already has is changed by removing it first (FRR refuses it again: "There is
    # already same aggregate network")
    gone = [(f, line) for f, line in reversed(old) if f not in now
            or (f.startswith("aggregate ") and now[f] != line)]
    lines = [indent + _negated(prefix.lstrip() + line) for _, line in gone]
    lines += [prefix + line for field, line in new if was.get(field) != line]
    return lines


def _negated(line: str) -> str:
    return line[3:] if line.startswith("no ") else f"no {line}"
