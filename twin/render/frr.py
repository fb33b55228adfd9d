"""Render frr.conf from a config_db dict only, the way SONiC's config daemons do."""

from __future__ import annotations

from ipaddress import ip_address
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from twin.render.config_db import AF, BFD_PROFILE, PEER_GROUP, VRF

_env = Environment(loader=PackageLoader("twin.render", "templates"), undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def frr_context(db: dict[str, dict[str, Any]]) -> dict[str, Any]:
    meta = db["DEVICE_METADATA"]["localhost"]
    glob = db.get("BGP_GLOBALS", {}).get(VRF, {})
    asn = glob.get("local_asn", meta.get("bgp_asn"))
    router_id = glob.get("router_id")
    if router_id is None:
        loops = [k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k]
        router_id = loops[0].split("/")[0] if loops else "0.0.0.0"
    keepalive, holdtime = glob.get("keepalive", "3"), glob.get("holdtime", "9")
    profile = db.get("BFD_PROFILE", {}).get(BFD_PROFILE)
    neighbors = []
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        ip = key.split("|", 1)[1] if "|" in key else key
        neighbors.append({
            "ip": ip, "asn": row["asn"], "name": row.get("name", ip),
            "group": row.get("peer_group_name", PEER_GROUP),
            "keepalive": row.get("keepalive", keepalive), "holdtime": row.get("holdtime", holdtime),
            "connect": row.get("conn_retry"),
            "bfd": row.get("bfd") == "true" and profile is not None,
            "shutdown": row.get("admin_status", "up") == "down",
        })
    neighbors.sort(key=lambda nb: ip_address(nb["ip"]))
    networks = [k.split("|")[2] for k in db.get("BGP_GLOBALS_AF_NETWORK", {}) if k.startswith(f"{VRF}|{AF}|")]
    af = db.get("BGP_GLOBALS_AF", {}).get(f"{VRF}|{AF}", {})
    groups = sorted({k.split("|", 1)[-1] for k in db.get("BGP_PEER_GROUP", {})} | {PEER_GROUP})
    return {
        "groups": groups,
        "hostname": meta["hostname"], "asn": asn, "router_id": router_id,
        "keepalive": keepalive, "holdtime": holdtime,
        "log_changes": glob.get("log_nbr_state_changes", "true") == "true",
        "mp_relax": glob.get("load_balance_mp_relax", "true") == "true",
        "bfd": None if profile is None else {
            "name": BFD_PROFILE, "multiplier": profile.get("detect_multiplier", "3"),
            "rx": profile.get("required_minimum_receive", "300"),
            "tx": profile.get("desired_minimum_tx_interval", "300"),
        },
        "neighbors": neighbors, "networks": networks,
        "max_paths": af.get("max_ebgp_paths", "64"),
    }


def render_frr(db: dict[str, dict[str, Any]]) -> str:
    return _env.get_template("frr.conf.j2").render(**frr_context(db))
