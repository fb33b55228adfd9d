"""Build a switch's SONiC config_db.json from its plan (frrcfgd "unified" tables for BGP).

Twin-specific, documented: `BFD_PROFILE|twin` holds the BFD timers that neighbors with
`bfd: "true"` use (SONiC's YANG has no BFD timer table for BGP peers).
"""

from __future__ import annotations

import json
from typing import Any

from twin.plan.models import NodePlan, Plan
from twin.render.qos import qos_tables

VRF = "default"
AF = "ipv4_unicast"
PEER_GROUP = "PEER_V4"
BFD_PROFILE = "twin"
_DEVICE_TYPE = {"spine": "SpineRouter", "leaf": "LeafRouter", "router": "LeafRouter"}


def _mac(node: NodePlan) -> str:
    role = {"spine": 1, "leaf": 2, "router": 3}.get(node.role, 0)
    return f"52:54:00:{role:02x}:{(node.index >> 8) & 0xFF:02x}:{node.index & 0xFF:02x}"


def build_config_db(plan: Plan, node: NodePlan) -> dict[str, dict[str, Any]]:
    f = plan.fabric
    assert node.asn is not None and node.loopback is not None
    db: dict[str, dict[str, Any]] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": node.name, "bgp_asn": str(node.asn), "type": _DEVICE_TYPE[node.role],
            "hwsku": f.hwsku, "platform": "x86_64-kvm_x86_64-r0", "mac": _mac(node),
            "docker_routing_config_mode": "unified", "frr_mgmt_framework_config": "true",
        }},
        "PORT": {}, "INTERFACE": {}, "DEVICE_NEIGHBOR": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{node.loopback}/32": {}},
        "BGP_GLOBALS": {VRF: {
            "local_asn": str(node.asn), "router_id": str(node.loopback),
            "load_balance_mp_relax": "true", "keepalive": str(f.bgp.keepalive),
            "holdtime": str(f.bgp.holdtime), "log_nbr_state_changes": "true",
        }},
        "BGP_GLOBALS_AF": {f"{VRF}|{AF}": {"max_ebgp_paths": str(plan.max_paths)}},
        "BGP_GLOBALS_AF_NETWORK": {f"{VRF}|{AF}|{net}": {} for net in node.networks},
        "BGP_PEER_GROUP": {f"{VRF}|{PEER_GROUP}": {"name": PEER_GROUP}},
        "BGP_NEIGHBOR": {},
    }
    for iface in node.interfaces:
        number = int(iface.name.removeprefix("Ethernet")) // 4
        db["PORT"][iface.name] = {
            "lanes": ",".join(str(4 * number + k) for k in range(4)), "alias": f"etp{number + 1}",
            "index": str(number + 1), "speed": str(iface.speed or f.port_speed), "mtu": str(iface.mtu),
            "admin_status": "up", "description": f"{iface.peer_node}:{iface.peer_iface}",
        }
        db["DEVICE_NEIGHBOR"][iface.name] = {"name": iface.peer_node, "port": iface.peer_iface}
        if iface.address is not None:
            db["INTERFACE"][iface.name] = {}
            db["INTERFACE"][f"{iface.name}|{iface.address}"] = {}
    for nb in node.neighbors:
        entry = {
            "asn": str(nb.asn), "name": nb.name, "local_addr": str(nb.local_addr),
            "holdtime": str(f.bgp.holdtime), "keepalive": str(f.bgp.keepalive),
            "admin_status": "up", "peer_group_name": PEER_GROUP, "conn_retry": str(f.bgp.connect_retry),
        }
        if f.bfd.enabled:
            entry["bfd"] = "true"
        db["BGP_NEIGHBOR"][f"{VRF}|{nb.ip}"] = entry
    if f.bfd.enabled:
        db["BFD_PROFILE"] = {BFD_PROFILE: {
            "detect_multiplier": str(f.bfd.multiplier),
            "desired_minimum_tx_interval": str(f.bfd.interval_ms),
            "required_minimum_receive": str(f.bfd.interval_ms),
        }}
    db.update(qos_tables([i.name for i in node.interfaces if i.role == "fabric"]))
    return {table: dict(sorted(rows.items())) for table, rows in sorted(db.items())}


def dumps(db: dict[str, dict[str, Any]]) -> str:
    return json.dumps(db, indent=4, sort_keys=True) + "\n"
