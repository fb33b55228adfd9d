"""A switch's CONFIG_DB: persisted atomically, changed by gNMI Set, validated whole before use.

Validation covers what the agent relies on to program FRR and the kernel: known tables, value
types and ranges, and cross-table rules (an INTERFACE address needs its port and base key, a
BGP_NEIGHBOR needs a local address that is configured on the switch, a peer group that exists).
"""

from __future__ import annotations

import copy
import json
import os
from ipaddress import IPv4Interface, ip_address, ip_interface
from pathlib import Path
from typing import Any

ConfigDb = dict[str, dict[str, Any]]

# Tables the twin switch programs or keeps (the QoS tables are kept, not enforced).
KNOWN_TABLES = frozenset({
    "DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "DEVICE_NEIGHBOR", "BGP_GLOBALS",
    "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_PEER_GROUP", "BGP_NEIGHBOR", "BFD_PROFILE",
    "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
    "WRED_PROFILE", "PORT_QOS_MAP", "QUEUE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG",
})


def load(path: Path) -> ConfigDb:
    db: ConfigDb = json.loads(path.read_text())
    return db


def save(path: Path, db: ConfigDb) -> None:
    """Write-then-rename, so a crash leaves the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w") as f:
        json.dump(db, f, indent=4, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def _int(value: Any, lo: int, hi: int) -> bool:
    try:
        return lo <= int(str(value)) <= hi
    except ValueError:
        return False


def _ip(value: Any) -> bool:
    try:
        ip_address(str(value))
        return True
    except ValueError:
        return False


def _ipv4(value: Any) -> bool:
    try:
        return ip_address(str(value)).version == 4
    except ValueError:
        return False


def local_addresses(db: ConfigDb) -> set[str]:
    out = set()
    for table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        for key in db.get(table, {}):
            if "|" in key:
                try:
                    out.add(str(ip_interface(key.split("|", 1)[1]).ip))
                except ValueError:
                    continue
    return out


def validate(db: Any) -> list[str]:
    """Every reason `db` cannot be applied; empty when it is valid."""
    if not isinstance(db, dict):
        return ["CONFIG_DB must be a JSON object of tables"]
    errors: list[str] = []
    for table, rows in db.items():
        if table not in KNOWN_TABLES:
            errors.append(f"unknown table '{table}'; supported: {', '.join(sorted(KNOWN_TABLES))}")
        elif not isinstance(rows, dict) or not all(isinstance(v, dict) for v in rows.values()):
            errors.append(f"{table}: every key must map to an object of fields")
        else:
            for key, row in rows.items():
                bad = sorted(f for f, v in row.items() if isinstance(v, dict | list))
                if bad:
                    errors.append(f"{table}|{key} {', '.join(bad)}: CONFIG_DB values are strings, not objects")
    if errors:
        return errors
    meta = db.get("DEVICE_METADATA", {}).get("localhost")
    if not meta:
        errors.append("DEVICE_METADATA|localhost is required (hostname, bgp_asn)")
    else:
        if not meta.get("hostname"):
            errors.append("DEVICE_METADATA|localhost hostname: required")
        if not _int(meta.get("bgp_asn", ""), 1, 4294967294):
            errors.append(f"DEVICE_METADATA|localhost bgp_asn: '{meta.get('bgp_asn')}' is not an ASN (1-4294967294)")
    for vrf, row in db.get("BGP_GLOBALS", {}).items():
        if "local_asn" in row and not _int(row["local_asn"], 1, 4294967294):
            errors.append(f"BGP_GLOBALS|{vrf} local_asn: '{row['local_asn']}' is not an ASN (1-4294967294)")
        if "router_id" in row and not _ipv4(row["router_id"]):
            errors.append(f"BGP_GLOBALS|{vrf} router_id: '{row['router_id']}' is not an IPv4 address")
    ports = db.get("PORT", {})
    for port, row in ports.items():
        if not port.startswith("Ethernet") or not port.removeprefix("Ethernet").isdigit():
            errors.append(f"PORT|{port}: port names are Ethernet<N>")
        if "mtu" in row and not _int(row["mtu"], 68, 9216):
            errors.append(f"PORT|{port} mtu: '{row['mtu']}' is not in 68-9216")
        if "speed" in row and not _int(row["speed"], 1000, 800000):
            errors.append(f"PORT|{port} speed: '{row['speed']}' is not in 1000-800000")
        if row.get("admin_status", "up") not in ("up", "down"):
            errors.append(f"PORT|{port} admin_status: '{row['admin_status']}' must be up or down")
    for table, need_port in (("INTERFACE", True), ("LOOPBACK_INTERFACE", False)):
        rows = db.get(table, {})
        for key in rows:
            if "|" not in key:
                if need_port and key not in ports:
                    errors.append(f"{table}|{key}: port {key} is not in PORT")
                continue
            base, prefix = key.split("|", 1)
            if "/" not in prefix:
                errors.append(f"{table}|{key}: '{prefix}' has no prefix length; keys are <port>|<address>/<length> "
                              f"(in a gNMI path write {table}[key={base}|{prefix}/<length>])")
                continue
            try:
                iface = ip_interface(prefix)
            except ValueError:
                errors.append(f"{table}|{key}: '{prefix}' is not an address with a prefix length")
                continue
            if not isinstance(iface, IPv4Interface):
                continue
            if base not in rows:
                errors.append(f"{table}|{key}: the base key '{base}' is missing; add \"{base}\": {{}}")
            if need_port and base not in ports:
                errors.append(f"{table}|{key}: port {base} is not in PORT")
    locals_ = local_addresses(db)
    groups = {k.split("|", 1)[-1] for k in db.get("BGP_PEER_GROUP", {})}
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        peer = key.split("|", 1)[1] if "|" in key else key
        if not _ip(peer):
            errors.append(f"BGP_NEIGHBOR|{key}: '{peer}' is not an IP address")
        if not _int(row.get("asn", ""), 1, 4294967294):
            errors.append(f"BGP_NEIGHBOR|{key} asn: '{row.get('asn')}' is not an ASN (1-4294967294)")
        local = row.get("local_addr")
        if local is not None and str(local) not in locals_:
            errors.append(f"BGP_NEIGHBOR|{key} local_addr: {local} is not an address of this switch "
                          "(INTERFACE or LOOPBACK_INTERFACE)")
        group = row.get("peer_group_name")
        if group is not None and group not in groups:
            errors.append(f"BGP_NEIGHBOR|{key} peer_group_name: no BGP_PEER_GROUP '{group}'")
        if row.get("admin_status", "up") not in ("up", "down"):
            errors.append(f"BGP_NEIGHBOR|{key} admin_status: '{row['admin_status']}' must be up or down")
        if row.get("bfd", "false") not in ("true", "false"):
            errors.append(f"BGP_NEIGHBOR|{key} bfd: '{row['bfd']}' must be true or false")
        for field, lo, hi in (("holdtime", 0, 65535), ("keepalive", 0, 65535), ("conn_retry", 1, 65535)):
            if field in row and not _int(row[field], lo, hi):
                errors.append(f"BGP_NEIGHBOR|{key} {field}: '{row[field]}' is not in {lo}-{hi}")
    for key, row in db.get("BGP_GLOBALS_AF", {}).items():
        if "max_ebgp_paths" in row and not _int(row["max_ebgp_paths"], 1, 256):
            errors.append(f"BGP_GLOBALS_AF|{key} max_ebgp_paths: '{row['max_ebgp_paths']}' is not in 1-256")
    for key in db.get("BGP_GLOBALS_AF_NETWORK", {}):
        prefix = key.split("|")[-1]
        try:
            ip_interface(prefix)
        except ValueError:
            errors.append(f"BGP_GLOBALS_AF_NETWORK|{key}: '{prefix}' is not a prefix")
    for name, row in db.get("BFD_PROFILE", {}).items():
        for field, lo, hi in (("detect_multiplier", 2, 255), ("desired_minimum_tx_interval", 10, 60000),
                              ("required_minimum_receive", 10, 60000)):
            if field in row and not _int(row[field], lo, hi):
                errors.append(f"BFD_PROFILE|{name} {field}: '{row[field]}' is not in {lo}-{hi}")
    return errors


def copy_db(db: ConfigDb) -> ConfigDb:
    return copy.deepcopy(db)
