"""Build a switch's SONiC config_db.json from its plan: what a real SONiC switch needs to run it.

BGP is written for frrcfgd ("unified" mode with `frr_mgmt_framework_config`), whose templates
(sonic-buildimage src/sonic-frr-mgmt-framework/templates/bgpd/*.j2) render only what the tables
say, over FRR's traditional defaults:
- `no bgp default ipv4-unicast` always, so every neighbor is activated for IPv4 through its peer
  group (BGP_PEER_GROUP_AF `default|PEER_V4|ipv4_unicast` admin_status up);
- eBGP needs a policy both ways (`bgp ebgp-requires-policy`): the peer group's route_map_in/out
  name ROUTE_MAP_SET entries whose ROUTE_MAP statements permit;
- the loopback and server subnets are BGP_GLOBALS_AF_NETWORK entries, maximum-paths is
  BGP_GLOBALS_AF max_ebgp_paths;
- BFD is `bfd: "true"` on each neighbor (`neighbor X bfd`): SONiC's timers, 300 ms x 3, since no
  SONiC table with a YANG model carries others for BGP peers.
Every table here has a model in sonic-yang-models, and PORT rows are the declared hwsku's own
port_config.ini rows (twin/model/hwsku).
"""

from __future__ import annotations

import json
from ipaddress import IPv4Interface
from typing import Any

from twin.model.hwsku import load as load_sku
from twin.model.plan import NodePlan, Plan
from twin.stages.load.bound_config import read_config_db
from twin.stages.render.qos import qos_tables

VRF = "default"
AF = "ipv4_unicast"
PEER_GROUP = "PEER_V4"
ROUTE_MAP_IN = "FROM_BGP_PEER_V4"
ROUTE_MAP_OUT = "TO_BGP_PEER_V4"
MGMT_PORT = "eth0"
# SONiC's tiers (sonic-device_metadata.yang `type`): the switch that faces servers is a ToR (T0),
# the tier above it LeafRouter (T1), above that SpineRouter (T2). In twin's two-tier fabrics the
# leaves face the servers and the spines are the tier above them.
DEVICE_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "router": "LeafRouter"}


def _mac(node: NodePlan) -> str:
    role = {"spine": 1, "leaf": 2, "router": 3}.get(node.role, 0)
    return f"52:54:00:{role:02x}:{(node.index >> 8) & 0xFF:02x}:{node.index & 0xFF:02x}"


def mgmt_tables(address: IPv4Interface, gateway: str) -> dict[str, dict[str, Any]]:
    """MGMT_PORT and MGMT_INTERFACE for eth0, so a `config reload` keeps the management address."""
    return {
        "MGMT_PORT": {MGMT_PORT: {"alias": MGMT_PORT, "admin_status": "up"}},
        "MGMT_INTERFACE": {f"{MGMT_PORT}|{address}": {"gwaddr": gateway}},
    }


def _bgp_tables(plan: Plan, node: NodePlan) -> dict[str, dict[str, Any]]:
    f = plan.fabric
    assert node.asn is not None and node.loopback is not None
    neighbors: dict[str, Any] = {}
    for nb in node.neighbors:
        entry = {
            "asn": str(nb.asn), "name": nb.name, "local_addr": str(nb.local_addr),
            "holdtime": str(f.bgp.holdtime), "keepalive": str(f.bgp.keepalive),
            "admin_status": "up", "peer_group_name": PEER_GROUP, "conn_retry": str(f.bgp.connect_retry),
        }
        if f.bfd.enabled:
            entry["bfd"] = "true"
        neighbors[f"{VRF}|{nb.ip}"] = entry
    return {
        "BGP_GLOBALS": {VRF: {
            "local_asn": str(node.asn), "router_id": str(node.loopback),
            "load_balance_mp_relax": "true", "keepalive": str(f.bgp.keepalive),
            "holdtime": str(f.bgp.holdtime), "log_nbr_state_changes": "true",
        }},
        "BGP_GLOBALS_AF": {f"{VRF}|{AF}": {"max_ebgp_paths": str(plan.max_paths)}},
        "BGP_GLOBALS_AF_NETWORK": {f"{VRF}|{AF}|{net}": {} for net in node.networks},
        "BGP_PEER_GROUP": {f"{VRF}|{PEER_GROUP}": {"name": PEER_GROUP}},
        "BGP_PEER_GROUP_AF": {f"{VRF}|{PEER_GROUP}|{AF}": {
            "admin_status": "up", "route_map_in": [ROUTE_MAP_IN], "route_map_out": [ROUTE_MAP_OUT],
        }},
        "ROUTE_MAP_SET": {ROUTE_MAP_IN: {}, ROUTE_MAP_OUT: {}},
        "ROUTE_MAP": {f"{ROUTE_MAP_IN}|100": {"route_operation": "permit"},
                      f"{ROUTE_MAP_OUT}|100": {"route_operation": "permit"}},
        "BGP_NEIGHBOR": neighbors,
    }


def build_config_db(plan: Plan, node: NodePlan, mgmt: tuple[IPv4Interface, str] | None = None,
                    ) -> dict[str, dict[str, Any]]:
    """The switch's config_db.json; `mgmt` (eth0's address, gateway) overrides the plan's management
    address where a runtime gave the lab a subnet of its own, so CONFIG_DB says what eth0 has."""
    f = plan.fabric
    assert node.asn is not None and node.loopback is not None
    sku = load_sku(f.hwsku)
    db: dict[str, dict[str, Any]] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": node.name, "bgp_asn": str(node.asn), "type": DEVICE_TYPE[node.role],
            "hwsku": sku.hwsku, "platform": sku.platform, "mac": _mac(node),
            "docker_routing_config_mode": "unified", "frr_mgmt_framework_config": "true",
            "buffer_model": "traditional",
        }},
        "PORT": {}, "INTERFACE": {}, "DEVICE_NEIGHBOR": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{node.loopback}/32": {}},
        **_bgp_tables(plan, node),
    }
    if mgmt is not None:
        db.update(mgmt_tables(*mgmt))
    elif node.mgmt is not None:
        db.update(mgmt_tables(node.mgmt, str(f.mgmt_pool.network_address + 1)))
    for iface in node.interfaces:
        port = sku.by_name(iface.name)
        assert port is not None, f"{iface.name} is not a port of {sku.hwsku}"  # the plan checked it
        row = {"lanes": port.lanes, "alias": port.alias, "index": port.index,
               "speed": str(iface.speed or port.speed), "mtu": str(iface.mtu), "admin_status": "up",
               "description": f"{iface.peer_node}:{iface.peer_iface}"}
        if port.fec:
            row["fec"] = port.fec
        db["PORT"][iface.name] = row
        db["DEVICE_NEIGHBOR"][iface.name] = {"name": iface.peer_node, "port": iface.peer_iface}
        if iface.address is not None:
            db["INTERFACE"][iface.name] = {}
            db["INTERFACE"][f"{iface.name}|{iface.address}"] = {}
    db.update(qos_tables({i.name: db["PORT"][i.name]["speed"] for i in node.interfaces}, sku))
    return {table: dict(sorted(rows.items())) for table, rows in sorted(db.items())}


def node_config_db(plan: Plan, node: NodePlan, mgmt: tuple[IPv4Interface, str] | None = None,
                   ) -> dict[str, dict[str, Any]]:
    """The config_db.json `node` runs: the switch's own (NodePlan.config_db, e.g. the file a containerlab
    sonic-vs node binds, read as it is) or, without one, twin's rendering of the plan (build_config_db).
    `mgmt` (eth0's address, gateway) overrides the management address in both the same way: MGMT_PORT
    and MGMT_INTERFACE become what the runtime gave eth0; without it a user's file is left untouched."""
    if node.config_db is None:
        return build_config_db(plan, node, mgmt)
    db = read_config_db(node.config_db)
    if mgmt is not None:
        db.update(mgmt_tables(*mgmt))
    return db


def dumps(db: dict[str, dict[str, Any]]) -> str:
    return json.dumps(db, indent=4, sort_keys=True) + "\n"
