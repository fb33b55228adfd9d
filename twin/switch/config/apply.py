"""Program only what changed between two CONFIG_DBs in FRR (the kernel side: twin.switch.config.kernel).

FRR lines follow the daemon the config selects, as on SONiC:
- frrcfgd: changing one neighbor's description sends one `neighbor X description` line: no other
  session resets and BFD does not flap. A prefix list, community list, AS-path list or route-map
  changes by the lines that differ between the two renderings (a clause removed is `no`-ed), a
  neighbor's or peer group's address-family option by its own line, in IPv4 and IPv6 unicast. A
  BGP_GLOBALS setting, a neighbor's or peer group's session option, an address family's distance,
  network, aggregate, redistribution, dampening or multipath, a listen range: the line frrcfgd sends for
  that field (twin.stages.render.frrcfgd_bgp.option_changes), `no <line>` when it is gone. A static
  route's next hops (STATIC_ROUTE, for staticd): those gone negated, the new ones added.
  A change of the switch's own ASN or router-id has no incremental form in FRR; `frr_lines`
  returns None and the caller reloads BGP whole.
- bgpcfgd: what bgpcfgd sends on that CONFIG_DB change (twin.stages.render.bgpcfgd.changes): a new
  neighbor's policies, peer groups and instance, `no neighbor X` for a deleted one, only
  admin_status for a changed one; a new bgp_asn reloads BGP whole (None).
"""

from __future__ import annotations

from typing import Any

from twin.stages.configdb import ConfigDb
from twin.stages.render import bgpcfgd
from twin.stages.render.frr import frr_context, is_frrcfgd
from twin.stages.render.frrcfgd_bgp import option_changes
from twin.switch.frr.frr_drift import converge_lines, drift, negate

# A neighbor's lines, in the order the rendered frr.conf has them: (context field, FRR words); its session
# options (twin.stages.render.frrcfgd_bgp) follow.
_NEIGHBOR = (("asn", "remote-as {}"), ("group", "peer-group {}"), ("name", "description {}"),
             ("bfd", "bfd"), ("local_addr", "update-source {}"), ("timers", "timers {}"),
             ("connect", "timers connect {}"))


def _neighbor_lines(nb: dict[str, Any]) -> list[str]:
    """A neighbor keyed by an interface (BGP unnumbered) says so on its remote-as and peer-group lines."""
    unnumbered = "interface " if nb.get("intf") else ""
    return [*(f" neighbor {nb['ip']} {unnumbered if field in ('asn', 'group') else ''}{words.format(nb[field])}"
              for field, words in _NEIGHBOR if nb[field]),
            *option_changes([], nb["options"], f" neighbor {nb['ip']} ")]


def _changed_neighbor(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    ip = b["ip"]
    if a["asn"] != b["asn"] or a["group"] != b["group"]:
        return [f" no neighbor {ip}", *_neighbor_lines(b)]
    # the options first: `no ... bfd check-control-plane-failure` after `no ... bfd` would turn BFD on again
    return [*option_changes(a["options"], b["options"], f" neighbor {ip} "),
            *(f" neighbor {ip} {words.format(b[field])}" if b[field] else f" no neighbor {ip} {words.split(' {}')[0]}"
              for field, words in _NEIGHBOR[2:] if a[field] != b[field])]


def _af_lines(a: dict[str, Any] | None, b: dict[str, Any] | None, name: str) -> list[str]:
    """Address-family lines for one peer group or neighbor (None: no AF row)."""
    was = a or {"activate": None, "rm_in": None, "rm_out": None, "options": []}
    now = b or {"activate": None, "rm_in": None, "rm_out": None, "options": []}
    lines = []
    if was["activate"] != now["activate"]:
        lines.append(f"  {'' if now['activate'] else 'no '}neighbor {name} activate")
    # an option gone is negated (`no neighbor X weight 5`, `neighbor X send-community` back), then the new ones
    lines += [f"  {negate(o)}" for o in reversed(was["options"]) if o not in now["options"]]
    lines += [f"  {o}" for o in now["options"] if o not in was["options"]]
    for field, direction in (("rm_in", "in"), ("rm_out", "out")):
        if was[field] != now[field]:
            lines.append(f"  neighbor {name} route-map {now[field]} {direction}" if now[field]
                         else f"  no neighbor {name} route-map {was[field]} {direction}")
    return lines


def policy_changes(old: list[str], new: list[str]) -> list[str]:
    """What turns FRR's policy (prefix, community and AS-path lists, route-maps) rendered as `old`
    into `new`: each line gone removed (a route-map statement gone whole), each new one added in
    its statement, as the config daemon converges FRR on a rendering."""
    lines: list[str] = []
    for line in converge_lines(drift("\n".join(new), "\n".join(old))):
        if lines and lines[-1].startswith("route-map ") and not line.startswith(" "):
            lines.append("exit")  # a statement without clauses is left as one with clauses is
        lines.append(line)
    return [*lines, "exit"] if lines and lines[-1].startswith("route-map ") else lines


def frr_lines(old: ConfigDb, new: ConfigDb) -> list[str] | None:
    """FRR config lines that turn `old` into `new`, or None when BGP must be reloaded whole."""
    if is_frrcfgd(old) != is_frrcfgd(new):
        return None  # the other daemon renders the config: SONiC restarts the bgp container
    if not is_frrcfgd(new):
        return bgpcfgd.changes(old, new)
    a, b = frr_context(old), frr_context(new)
    if (a["asn"], a["router_id"]) != (b["asn"], b["router_id"]):
        return None
    lines = policy_changes(a["policy"], b["policy"])
    # a static route's next hops gone, then the new ones (frrcfgd: its next-hop sets' difference)
    lines += option_changes([(r, r) for r in a["static_routes"]], [(r, r) for r in b["static_routes"]])
    bgp: list[str] = []
    for field, line in (("log_changes", "bgp log-neighbor-changes"), ("default_ipv4", "bgp default ipv4-unicast")):
        if a[field] != b[field]:
            bgp.append(f" {'' if b[field] else 'no '}{line}")
    if a["timers"] != b["timers"]:
        bgp.append(f" timers bgp {b['timers']}" if b["timers"] else " no timers bgp")
    bgp += option_changes(a["options"], b["options"], " ")
    bgp += [f" neighbor {g} peer-group" for g in sorted(set(b["groups"]) - set(a["groups"]))]
    for g in b["groups"]:
        bgp += option_changes(a["group_options"].get(g, []), b["group_options"].get(g, []), f" neighbor {g} ")
    olds = {nb["ip"]: nb for nb in a["neighbors"]}
    news = {nb["ip"]: nb for nb in b["neighbors"]}
    for ip in sorted(set(olds) - set(news)):
        bgp.append(f" no neighbor {ip}")
    for ip, nb in news.items():
        if ip not in olds:
            bgp += _neighbor_lines(nb)
        elif olds[ip] != nb:
            bgp += _changed_neighbor(olds[ip], nb)
    bgp += option_changes(a["tail"], b["tail"], " ")
    bgp += [f" no neighbor {g} peer-group" for g in sorted(set(a["groups"]) - set(b["groups"]))]
    af = option_changes(a["family_head"], b["family_head"], "  ")
    recreated = {ip for ip in news if ip in olds and (olds[ip]["asn"], olds[ip]["group"])
                 != (news[ip]["asn"], news[ip]["group"])}
    fresh = recreated | {ip for ip in news if ip not in olds} | (set(b["groups"]) - set(a["groups"]))
    live = set(news) | set(b["groups"])
    af += _family_lines(a["subjects"], b["subjects"], fresh, live)
    if a["max_paths"] != b["max_paths"]:
        af.append(f"  maximum-paths {b['max_paths']}" if b["max_paths"] else "  no maximum-paths")
    af += option_changes(a["family_tail"], b["family_tail"], "  ")
    if af:
        bgp += [" address-family ipv4 unicast", *af, " exit-address-family"]
    af6 = option_changes(a["family_head_v6"], b["family_head_v6"], "  ")
    af6 += _family_lines(a["subjects_v6"], b["subjects_v6"], fresh, live)
    af6 += option_changes(a["family_tail_v6"], b["family_tail_v6"], "  ")
    if af6:
        bgp += [" address-family ipv6 unicast", *af6, " exit-address-family"]
    if bgp:
        lines += [f"router bgp {b['asn']}", *bgp, "exit"]
    return lines


def _family_lines(subjects_a: list[dict[str, Any]], subjects_b: list[dict[str, Any]], fresh: set[str],
                  live: set[str]) -> list[str]:
    """One address family's lines for every peer group and neighbor whose settings there changed:
    `fresh` ones (new, or made anew) get all of theirs, those not `live` (deleted) none."""
    was = {s["name"]: s for s in subjects_a}
    now = {s["name"]: s for s in subjects_b}
    lines: list[str] = []
    for name in sorted(set(was) | set(now)):
        if name not in live:
            continue  # the neighbor or group is gone, and its AF settings with it
        before = None if name in fresh else was.get(name)
        lines += _af_lines(before, now.get(name), name)
    return lines
