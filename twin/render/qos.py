"""RoCEv2 QoS tables in SONiC's schema: DSCP 26 -> TC 3 lossless (PFC 3,4), DSCP 48 -> TC 6 (CNP).

No emulator forwards lossless traffic, but the tables belong in the config so that static checks
(and a real switch fed the same file) see the RoCE design the fabric declares.
"""

from __future__ import annotations

from typing import Any

LOSSLESS_TCS = ("3", "4")
MAP = "ROCE"


def _dscp_to_tc() -> dict[str, str]:
    table = {str(d): "1" for d in range(64)}
    table.update({"24": "4", "26": "3", "46": "5", "48": "6"})
    return table


def qos_tables(ports: list[str]) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {
        "DSCP_TO_TC_MAP": {MAP: _dscp_to_tc()},
        "TC_TO_QUEUE_MAP": {MAP: {str(tc): str(tc) for tc in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: {str(tc): ("3" if tc == 3 else "4" if tc == 4 else "0")
                                           for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: {str(p): str(p) for p in range(8)}},
        "WRED_PROFILE": {"ROCE_LOSSLESS": {
            "ecn": "ecn_all", "wred_green_enable": "true", "wred_yellow_enable": "true",
            "wred_red_enable": "true", "green_min_threshold": "1048576",
            "green_max_threshold": "2097152", "green_drop_probability": "5",
            "yellow_min_threshold": "1048576", "yellow_max_threshold": "2097152",
            "yellow_drop_probability": "5", "red_min_threshold": "1048576",
            "red_max_threshold": "2097152", "red_drop_probability": "5",
        }},
        "PORT_QOS_MAP": {},
        "QUEUE": {},
    }
    for port in ports:
        tables["PORT_QOS_MAP"][port] = {
            "dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP,
            "pfc_to_queue_map": MAP, "pfc_enable": ",".join(LOSSLESS_TCS),
        }
        for tc in LOSSLESS_TCS:
            tables["QUEUE"][f"{port}|{tc}"] = {"wred_profile": "ROCE_LOSSLESS"}
    return tables
