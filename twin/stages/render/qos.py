"""RoCEv2 QoS in SONiC's tables: DSCP 26 -> TC 3 lossless (PFC 3,4), DSCP 48 -> TC 6 (CNP).

Complete enough that a real switch builds lossless priority groups, as SONiC's traditional buffer
model does (`buffer_model: traditional`, sonic-swss cfgmgr/buffermgr.cpp): BUFFER_POOL and
BUFFER_PROFILE are the SKU's buffers_defaults_*.j2 rows; CABLE_LENGTH gives each port its cable,
and the lossless PG profile is pg_profile_lookup.ini's row for the port's speed and cable, named
as buffermgrd names it (`pg_lossless_<speed>_<cable>_profile`) and bound to PGs 3-4 by BUFFER_PG;
BUFFER_QUEUE binds the egress profiles; SCHEDULER/QUEUE give the lossless queues a DWRR share and
their ECN-marking WRED profile. No emulator forwards lossless traffic: the tables are there so a
real switch fed the same file, and twin's static checks, see the RoCE design the fabric declares.
"""

from __future__ import annotations

from typing import Any

from twin.model.hwsku import Sku

LOSSLESS_TCS = ("3", "4")
ROCE_DSCP = 26         # RoCE's DSCP in twin's maps (traffic class 3, lossless)
MAP = "ROCE"
CABLE_TABLE = "AZURE"  # the name SONiC's buffer templates give the CABLE_LENGTH entry


def _dscp_to_tc() -> dict[str, str]:
    table = {str(d): "1" for d in range(64)}
    table.update({"24": "4", str(ROCE_DSCP): "3", "46": "5", "48": "6"})
    return table


def _maps() -> dict[str, dict[str, Any]]:
    return {
        "DSCP_TO_TC_MAP": {MAP: _dscp_to_tc()},
        "TC_TO_QUEUE_MAP": {MAP: {str(tc): str(tc) for tc in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: {str(tc): (str(tc) if str(tc) in LOSSLESS_TCS else "0")
                                           for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: {str(p): str(p) for p in range(8)}},
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {MAP: {tc: tc for tc in LOSSLESS_TCS}},
        "WRED_PROFILE": {"ROCE_LOSSLESS": {
            "ecn": "ecn_all", "wred_green_enable": "true", "wred_yellow_enable": "true",
            "wred_red_enable": "true", "green_min_threshold": "1048576",
            "green_max_threshold": "2097152", "green_drop_probability": "5",
            "yellow_min_threshold": "1048576", "yellow_max_threshold": "2097152",
            "yellow_drop_probability": "5", "red_min_threshold": "1048576",
            "red_max_threshold": "2097152", "red_drop_probability": "5",
        }},
        "SCHEDULER": {"scheduler.0": {"type": "DWRR", "weight": "14"},
                      "scheduler.1": {"type": "DWRR", "weight": "15"}},
    }


def lossless_profile_name(speed: str, cable: str) -> str:
    return f"pg_lossless_{speed}_{cable}_profile"


def qos_tables(port_speeds: dict[str, str], sku: Sku) -> dict[str, dict[str, Any]]:
    """The QoS and buffer tables for ports {name: speed} of a switch of `sku`."""
    tables = _maps()
    tables.update({"PORT_QOS_MAP": {}, "QUEUE": {}})
    lossless_pgs = f"{LOSSLESS_TCS[0]}-{LOSSLESS_TCS[-1]}"
    for port in port_speeds:
        tables["PORT_QOS_MAP"][port] = {
            "dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP,
            "pfc_to_queue_map": MAP, "pfc_to_pg_map": MAP, "pfc_enable": ",".join(LOSSLESS_TCS),
            "pfcwd_sw_enable": ",".join(LOSSLESS_TCS),
        }
        for q in range(7):
            row = {"scheduler": "scheduler.1" if str(q) in LOSSLESS_TCS else "scheduler.0"}
            if str(q) in LOSSLESS_TCS:
                row["wred_profile"] = "ROCE_LOSSLESS"
            tables["QUEUE"][f"{port}|{q}"] = row
    buffers = sku.buffers
    if buffers is None or not port_speeds:
        return tables
    cable = buffers.cable_length
    profiles: dict[str, Any] = {name: dict(row) for name, row in buffers.profiles.items()}
    for speed in sorted(set(port_speeds.values())):
        profiles[lossless_profile_name(speed, cable)] = {"pool": "ingress_lossless_pool", **buffers.pg_lossless}
    tables.update({
        "BUFFER_POOL": {name: dict(row) for name, row in buffers.pools.items()},
        "BUFFER_PROFILE": profiles,
        "CABLE_LENGTH": {CABLE_TABLE: {port: cable for port in port_speeds}},
        "BUFFER_PG": {}, "BUFFER_QUEUE": {},
    })
    for port, speed in port_speeds.items():
        tables["BUFFER_PG"][f"{port}|0"] = {"profile": "ingress_lossy_profile"}
        tables["BUFFER_PG"][f"{port}|{lossless_pgs}"] = {"profile": lossless_profile_name(speed, cable)}
        tables["BUFFER_QUEUE"][f"{port}|0-2"] = {"profile": "egress_lossy_profile"}
        tables["BUFFER_QUEUE"][f"{port}|{lossless_pgs}"] = {"profile": "egress_lossless_profile"}
        tables["BUFFER_QUEUE"][f"{port}|5-6"] = {"profile": "egress_lossy_profile"}
    return tables
