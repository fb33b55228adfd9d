"""Render frr.conf from a config_db dict only, the way SONiC's config daemons do.

DEVICE_METADATA|localhost picks the daemon, as SONiC's bgp container does:
- `frr_mgmt_framework_config: "true"` -> frrcfgd. Only what the tables say is rendered, over FRR's
  traditional defaults (SONiC's FRR is built with them): `no bgp default ipv4-unicast` unless
  BGP_GLOBALS default_ipv4_unicast is "true"; a peer group or neighbor is active for IPv4 only
  through BGP_PEER_GROUP_AF / BGP_NEIGHBOR_AF admin_status up; route-maps only from ROUTE_MAP and
  the AF tables' route_map_in/out; `neighbor X bfd` (bfdd's 300 ms x 3) for `bfd: "true"`. eBGP
  without a policy both ways carries nothing, as on the switch.
- otherwise (bgpcfgd, SONiC's default): twin's approximation of bgpcfgd's general peer templates,
  every peer group active with permit-all FROM/TO_BGP_PEER_V4 policies (a faithful bgpcfgd
  rendering is not built yet).
"""

from __future__ import annotations

from ipaddress import ip_address
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from twin.render.config_db import AF, PEER_GROUP, ROUTE_MAP_IN, ROUTE_MAP_OUT, VRF

# bgpcfgd's general peer templates: one peer group with permit-all policies both ways
CLASSIC_GROUP = PEER_GROUP
CLASSIC_MAPS = (ROUTE_MAP_IN, ROUTE_MAP_OUT)

_env = Environment(loader=PackageLoader("twin.render", "templates"), undefined=StrictUndefined,
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


def _af(row: dict[str, Any]) -> dict[str, Any]:
    status = row.get("admin_status")
    return {"activate": None if status is None else status in ("up", "true"),
            "rm_in": _first(row.get("route_map_in")), "rm_out": _first(row.get("route_map_out"))}


def frr_context(db: dict[str, dict[str, Any]]) -> dict[str, Any]:
    meta = db["DEVICE_METADATA"]["localhost"]
    frrcfgd = is_frrcfgd(db)
    glob = db.get("BGP_GLOBALS", {}).get(VRF, {})
    # frrcfgd renders `router bgp` only from BGP_GLOBALS|default local_asn; bgpcfgd from DEVICE_METADATA
    asn = glob.get("local_asn") if frrcfgd else glob.get("local_asn", meta.get("bgp_asn"))
    router_id = glob.get("router_id")
    if router_id is None:
        loops = [k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k]
        router_id = loops[0].split("/")[0] if loops else "0.0.0.0"
    keepalive, holdtime = glob.get("keepalive"), glob.get("holdtime")
    if not frrcfgd:
        keepalive, holdtime = keepalive or "3", holdtime or "9"
    neighbors = []
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        ip = key.split("|", 1)[1] if "|" in key else key
        nb_keepalive, nb_holdtime = row.get("keepalive", keepalive), row.get("holdtime", holdtime)
        neighbors.append({
            "ip": ip, "asn": row.get("asn"), "name": row.get("name"),
            "group": row.get("peer_group_name", None if frrcfgd else CLASSIC_GROUP),
            "timers": f"{nb_keepalive} {nb_holdtime}" if nb_keepalive and nb_holdtime else None,
            "connect": row.get("conn_retry"),
            "local_addr": row.get("local_addr") if frrcfgd else None,
            "bfd": row.get("bfd") == "true",
            "shutdown": row.get("admin_status", "up") in ("down", "false"),
        })
    neighbors.sort(key=lambda nb: ip_address(nb["ip"]))
    networks = [_parts(k)[2] for k in db.get("BGP_GLOBALS_AF_NETWORK", {})
                if _parts(k)[:2] == [VRF, AF] and len(_parts(k)) == 3]
    af = db.get("BGP_GLOBALS_AF", {}).get(f"{VRF}|{AF}", {})
    groups = sorted({_parts(k)[-1] for k in db.get("BGP_PEER_GROUP", {})})
    if frrcfgd:
        af_of: dict[str, dict[str, Any]] = {}
        for table in ("BGP_PEER_GROUP_AF", "BGP_NEIGHBOR_AF"):
            for key, row in db.get(table, {}).items():
                vrf, name, family = [*_parts(key), "", "", ""][:3]
                if vrf == VRF and family == AF:
                    af_of[name] = _af(row)
        subjects = [{"name": g, **af_of[g]} for g in groups if g in af_of]
        subjects += [{"name": nb["ip"], **af_of[nb["ip"]]} for nb in neighbors if nb["ip"] in af_of]
        route_maps = sorted(({"name": _parts(k)[0], "seq": int(_parts(k)[1]), "action": row["route_operation"]}
                             for k, row in db.get("ROUTE_MAP", {}).items()
                             if len(_parts(k)) == 2 and _parts(k)[1].isdigit() and "route_operation" in row),
                            key=lambda m: (m["name"], m["seq"]))
        default_ipv4 = glob.get("default_ipv4_unicast") == "true"
    else:
        groups = sorted(set(groups) | {CLASSIC_GROUP})
        subjects = [{"name": g, "activate": True, "rm_in": CLASSIC_MAPS[0], "rm_out": CLASSIC_MAPS[1]}
                    for g in groups]
        route_maps = [{"name": name, "seq": 100, "action": "permit"} for name in CLASSIC_MAPS]
        default_ipv4 = True
    return {
        "frrcfgd": frrcfgd, "defaults": "traditional" if frrcfgd else "datacenter",
        "groups": groups, "subjects": subjects, "route_maps": route_maps, "default_ipv4": default_ipv4,
        "hostname": meta["hostname"], "asn": asn, "router_id": router_id,
        "timers": f"{keepalive} {holdtime}" if keepalive and holdtime else None,
        "log_changes": glob.get("log_nbr_state_changes", "false" if frrcfgd else "true") == "true",
        "mp_relax": glob.get("load_balance_mp_relax", "false" if frrcfgd else "true") == "true",
        "neighbors": neighbors, "networks": networks,
        "max_paths": af.get("max_ebgp_paths", None if frrcfgd else "64"),
    }


def render_frr(db: dict[str, dict[str, Any]]) -> str:
    return _env.get_template("frr.conf.j2").render(**frr_context(db))
