"""Render frr.conf from a config_db dict only, the way SONiC's config daemons do.

DEVICE_METADATA|localhost picks the daemon, as SONiC's bgp container does:
- `frr_mgmt_framework_config: "true"` -> frrcfgd. Only what the tables say is rendered, over FRR's
  traditional defaults (SONiC's FRR is built with them): `no bgp default ipv4-unicast` unless
  BGP_GLOBALS default_ipv4_unicast is "true"; a peer group or neighbor is active for IPv4 only
  through BGP_PEER_GROUP_AF / BGP_NEIGHBOR_AF admin_status up; route-maps only from ROUTE_MAP and
  the AF tables' route_map_in/out; `neighbor X bfd` (bfdd's 300 ms x 3) for `bfd: "true"`; a
  neighbor keyed by an interface is BGP unnumbered (`neighbor Ethernet0 interface remote-as ...`);
  BGP_GLOBALS' settings, session options, an address family's own lines and listen ranges as
  twin.stages.render.frrcfgd_bgp renders them, the policy as twin.stages.render.frrcfgd_policy does,
  STATIC_ROUTE as twin.stages.render.frrcfgd_static does (staticd).
  eBGP without a policy both ways carries nothing, as on the switch.
- otherwise -> bgpcfgd, SONiC's default: twin.stages.render.bgpcfgd, its emulation of bgpd.main and the
  general peer templates as bgpcfgd pushes them.

With `templates` (a folder of a SONiC release's templates, twin.stages.render.sonic_templates) SONiC's own
templates render the config instead, made runnable on twin's FRR by the same allow-list
(twin.stages.render.frr_differences) as twin's own rendering.
"""

from __future__ import annotations

from ipaddress import ip_address
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from twin.stages.render.bgpcfgd import render_bgpcfgd
from twin.stages.render.config_db import AF, VRF
from twin.stages.render.frr_differences import adapt_lines, header_lines
from twin.stages.render.frrcfgd_bgp import (
    family_head,
    family_tail,
    global_options,
    global_tail_options,
    group_options,
    session_options,
)
from twin.stages.render.frrcfgd_policy import neighbor_af_options, policy_lines
from twin.stages.render.frrcfgd_static import static_route_lines
from twin.stages.render.sonic_templates import render_with_templates

AF6 = "ipv6_unicast"
_env = Environment(loader=PackageLoader("twin.stages.render", "templates"), undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def is_frrcfgd(db: dict[str, dict[str, Any]]) -> bool:
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    return str(meta.get("frr_mgmt_framework_config", "")).lower() == "true"


def _parts(key: str) -> list[str]:
    return key.split("|")


def _first(value: Any) -> str | None:
    """A route_map_in/out leaf-list (max one element in SONiC's YANG) as one name."""
    if isinstance(value, list):
        return str(value[0]) if value else None
    return None if value in (None, "") else str(value).split(",")[0]


def _af(name: str, row: dict[str, Any]) -> dict[str, Any]:
    status = row.get("admin_status")
    return {"activate": None if status is None else status in ("up", "true"),
            "rm_in": _first(row.get("route_map_in")), "rm_out": _first(row.get("route_map_out")),
            "options": neighbor_af_options(name, row)}


def _subjects(db: dict[str, dict[str, Any]], family: str, groups: list[str],
              neighbors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The peer groups', then the neighbors' settings in one address family (BGP_*_AF rows)."""
    af_of: dict[str, dict[str, Any]] = {}
    for table in ("BGP_PEER_GROUP_AF", "BGP_NEIGHBOR_AF"):
        for key, row in db.get(table, {}).items():
            vrf, name, af = [*_parts(key), "", "", ""][:3]
            if vrf == VRF and af == family:
                af_of[name] = _af(name, row or {})
    subjects = [{"name": g, **af_of[g]} for g in groups if g in af_of]
    return subjects + [{"name": nb["ip"], **af_of[nb["ip"]]} for nb in neighbors if nb["ip"] in af_of]


def _neighbor_order(name: str) -> tuple[int, int, str]:
    """Addresses first (IPv4, then IPv6, numerically), then interfaces (unnumbered) by name."""
    try:
        ip = ip_address(name)
        return (ip.version, int(ip), "")
    except ValueError:
        return (9, 0, name)


def _is_interface(name: str) -> bool:
    return _neighbor_order(name)[0] == 9


def frr_context(db: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The context of frr.conf.j2: what frrcfgd's templates render from the tables (frrcfgd configs)."""
    if not is_frrcfgd(db):
        raise ValueError("frr_context reads frrcfgd configs; bgpcfgd configs are twin.stages.render.bgpcfgd's")
    meta = db["DEVICE_METADATA"]["localhost"]
    glob = db.get("BGP_GLOBALS", {}).get(VRF, {})
    # frrcfgd renders `router bgp` only from BGP_GLOBALS|default local_asn, not DEVICE_METADATA's bgp_asn
    asn = glob.get("local_asn")
    router_id = glob.get("router_id")
    if router_id is None:
        loops = [k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k]
        router_id = loops[0].split("/")[0] if loops else "0.0.0.0"
    keepalive, holdtime = glob.get("keepalive"), glob.get("holdtime")
    neighbors = []
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        ip = key.split("|", 1)[1] if "|" in key else key
        nb_keepalive, nb_holdtime = row.get("keepalive", keepalive), row.get("holdtime", holdtime)
        neighbors.append({
            "ip": ip, "intf": _is_interface(ip), "asn": row.get("peer_type", row.get("asn")), "name": row.get("name"),
            "group": row.get("peer_group_name"),
            "timers": f"{nb_keepalive} {nb_holdtime}" if nb_keepalive and nb_holdtime else None,
            "connect": row.get("conn_retry"), "local_addr": row.get("local_addr"),
            "bfd": row.get("bfd") == "true", "options": session_options(row),
        })
    neighbors.sort(key=lambda nb: _neighbor_order(nb["ip"]))
    af = db.get("BGP_GLOBALS_AF", {}).get(f"{VRF}|{AF}", {})
    groups = sorted({_parts(k)[-1] for k in db.get("BGP_PEER_GROUP", {})})
    # a peer group's lines as a neighbor's (nbr_or_peer.j2): its `name` is its description
    group_options_of = {_parts(k)[-1]: group_options(row or {}) for k, row in db.get("BGP_PEER_GROUP", {}).items()}
    return {
        "frrcfgd": True, "defaults": "traditional",
        "groups": groups, "group_options": group_options_of, "subjects": _subjects(db, AF, groups, neighbors),
        "subjects_v6": _subjects(db, AF6, groups, neighbors), "policy": policy_lines(db),
        "static_routes": static_route_lines(db),
        "default_ipv4": glob.get("default_ipv4_unicast") == "true",
        "hostname": meta["hostname"], "asn": asn, "router_id": router_id,
        "timers": f"{keepalive} {holdtime}" if keepalive and holdtime else None,
        "log_changes": glob.get("log_nbr_state_changes") == "true",
        "options": global_options(glob), "tail": global_tail_options(glob, db.get("BGP_GLOBALS_LISTEN_PREFIX", {})),
        "neighbors": neighbors,
        "family_head": family_head(db, AF), "family_tail": family_tail(db, AF, ebgp_paths=False),
        "family_head_v6": family_head(db, AF6), "family_tail_v6": family_tail(db, AF6, ebgp_paths=True),
        "max_paths": af.get("max_ebgp_paths"),
    }


def _set_src(db: dict[str, dict[str, Any]]) -> list[str]:
    """Twin's RM_SET_SRC for frrcfgd configs (frr.conf.j2's, see frr_differences)."""
    return ["route-map RM_SET_SRC permit 10", f" set src {frr_context(db)['router_id']}", "exit",
            "ip protocol bgp route-map RM_SET_SRC"]


def _runnable(sonic: str, db: dict[str, dict[str, Any]]) -> str:
    """SONiC's rendering as twin's FRR runs it: twin's header, SONiC's lines through the allow-list."""
    lines = adapt_lines(sonic.splitlines())
    extra = _set_src(db) if is_frrcfgd(db) else []
    return "\n".join([*header_lines(), "!", *lines, "!", *extra, "end"]) + "\n"


def render_frr(db: dict[str, dict[str, Any]], templates: Path | None = None) -> str:
    """frr.conf for `db`: twin's own rendering, or SONiC's templates from `templates` made runnable."""
    if templates is not None:
        return _runnable(render_with_templates(templates, db), db)
    if is_frrcfgd(db):
        return _env.get_template("frr.conf.j2").render(**frr_context(db))
    return render_bgpcfgd(db)
