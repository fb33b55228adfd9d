"""A switch's CONFIG_DB: persisted atomically, changed by gNMI Set, validated whole before use.

Validation covers what the agent relies on to program FRR and the kernel: known tables, value
types and ranges, and cross-table rules (an INTERFACE address needs its port and base key, a
BGP_NEIGHBOR needs a local address that is configured on the switch, a peer group that exists).
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
from importlib import resources
from ipaddress import IPv4Interface, ip_address, ip_interface
from pathlib import Path
from typing import Any

from twin.model.config_db import ConfigDb as ConfigDb  # imported from here by the switch

# The built-in schema: a digest of SONiC's YANG models (twin.stages.validate.yang.builtin_schema, written
# by `make schema`), used where the models themselves are not at hand.
SCHEMA: dict[str, Any] = json.loads((resources.files("twin.stages") / "schema.json").read_text())
KNOWN_TABLES = frozenset(SCHEMA["tables"])
# The tables twin's generated configs hold (twin.stages.render.config_db); on docker-sonic-vs, the others in
# its CONFIG_DB (FEATURE, ...) are SONiC's own and a Set keeps them as they are.
GENERATED_TABLES = frozenset({
    "DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "DEVICE_NEIGHBOR", "MGMT_PORT", "MGMT_INTERFACE",
    "BGP_GLOBALS", "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_PEER_GROUP", "BGP_PEER_GROUP_AF",
    "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF", "ROUTE_MAP_SET", "ROUTE_MAP", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP",
    "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "WRED_PROFILE",
    "SCHEDULER", "PORT_QOS_MAP", "QUEUE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE",
    "CABLE_LENGTH",
})
# sonic-device_metadata.yang's pattern for DEVICE_METADATA type
DEVICE_TYPES = frozenset({
    "ToRRouter", "LeafRouter", "SpineChassisFrontendRouter", "ChassisBackendRouter", "ASIC", "MgmtToRRouter",
    "MgmtLeafRouter", "MgmtSpineRouter", "MgmtAccessRouter", "LowerMgmtAggregator", "UpperMgmtAggregator",
    "SpineRouter", "BackEndSpineRouter", "UpperSpineRouter", "FabricSpineRouter", "LowerSpineRouter",
    "BackEndToRRouter", "BackEndLeafRouter", "EPMS", "MgmtTsToR", "BmcMgmtToRRouter", "MiniTs", "LeafTs",
    "SpineTs", "CoreTs", "ConsoleServer", "TerminalServer", "SonicHost", "SmartSwitchDPU", "FilterLeaf",
    "NetworkBmc", "MseeRouter", "not-provisioned", "LowerRegionalHub", "FabricRegionalHub", "UpperRegionalHub",
})
_INT_RANGES = {"uint8": (0, 255), "uint16": (0, 65535), "uint32": (0, 4294967295), "uint64": (0, 2**64 - 1),
               "int8": (-128, 127), "int16": (-32768, 32767), "int32": (-2**31, 2**31 - 1)}


def load(path: Path) -> ConfigDb:
    db: ConfigDb = json.loads(path.read_text())
    return db


def save(path: Path, db: ConfigDb) -> None:
    """Write-then-rename, so a crash leaves the old file or the new one, never half of one. The
    temporary file has a name of its own (never `config_db.json.tmp`, which is sonic-gnmi's staged
    full config), so writers of other files in the folder cannot remove it."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(db, f, indent=4, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _int(value: Any, lo: int, hi: int) -> bool:
    """ASCII digits only (Python's int() also takes '_' and other scripts' digits; FRR and YANG do not)."""
    text = str(value)
    return re.fullmatch(r"-?[0-9]+", text) is not None and lo <= int(text) <= hi


def _typed(kind: str, value: str) -> bool:
    """Whether `value` fits the YANG type the built-in schema records (types it cannot judge pass)."""
    if kind in _INT_RANGES:
        return _int(value, *_INT_RANGES[kind])
    if kind == "boolean":
        return value in ("true", "false")
    if kind == "stypes:admin_status":
        return value in ("up", "down")
    if kind in ("inet:ip-address", "inet:ip-address-no-zone"):
        return _ip(value)
    if kind in ("inet:ipv4-address", "inet:ipv4-address-no-zone"):
        return _ipv4(value)
    if kind in ("inet:ip-prefix", "inet:ipv4-prefix", "inet:ipv6-prefix", "stypes:sonic-ip-prefix",
                "stypes:sonic-ip4-prefix"):
        try:
            ip_interface(value)
            return "/" in value
        except ValueError:
            return False
    return True


def _pick(spec: dict[str, Any], key: str) -> dict[str, Any] | None:
    parts = key.split("|")
    lists: list[dict[str, Any]] = spec["lists"]
    for lst in lists:
        if lst["container"] and len(parts) == 1 and lst["name"] == key:
            return lst
    for lst in lists:
        if not lst["container"] and len(lst["keys"]) == len(parts):
            return lst
    return None


# Fields whose values validate() judges itself, with messages naming the accepted range.
JUDGED = frozenset({
    ("PORT", "mtu"), ("PORT", "speed"), ("PORT", "admin_status"), ("DEVICE_METADATA", "bgp_asn"),
    ("DEVICE_METADATA", "type"), ("BGP_GLOBALS", "local_asn"), ("BGP_GLOBALS", "router_id"),
    ("BGP_GLOBALS_AF", "max_ebgp_paths"), ("BGP_NEIGHBOR", "asn"), ("BGP_NEIGHBOR", "bfd"),
    ("BGP_NEIGHBOR", "admin_status"), ("BGP_NEIGHBOR", "holdtime"), ("BGP_NEIGHBOR", "keepalive"),
    ("BGP_NEIGHBOR", "conn_retry"),
})


def shape_errors(db: dict[str, Any]) -> list[str]:
    """Tables without a model, and tables that are not objects of objects: nothing else can be judged."""
    errors = []
    for table, rows in db.items():
        if table not in SCHEMA["tables"]:
            errors.append(f"{table}: no SONiC YANG model defines this table (SONiC's config reload, GCU and "
                          "gNMI Set refuse it)")
        elif not isinstance(rows, dict) or not all(isinstance(v, dict) for v in rows.values()):
            errors.append(f"{table}: every key must map to an object of fields")
    return errors


def schema_errors(db: dict[str, Any]) -> list[str]:
    """What SONiC's YANG models refuse in `db` as far as the built-in schema can tell: tables without
    a model, keys of the wrong shape, unknown fields, missing mandatory fields, values not of their type."""
    errors = shape_errors(db)
    for table, rows in db.items():
        spec = SCHEMA["tables"].get(table)
        if spec is None or not isinstance(rows, dict) or not all(isinstance(v, dict) for v in rows.values()):
            continue
        for key, row in rows.items():
            lst = _pick(spec, key)
            if lst is None:
                shapes = sorted({len(x["keys"]) for x in spec["lists"] if not x["container"]})
                names = [x["name"] for x in spec["lists"] if x["container"]]
                want = (f"one of {', '.join(names)}" if names else
                        f"{' or '.join(map(str, shapes))} part(s) separated by '|'")
                errors.append(f"{table}|{key}: a {table} key is {want}")
                continue
            for field, value in row.items():
                if lst["map"] is not None and field not in lst["leaves"] and field not in lst["leaflists"]:
                    if not isinstance(value, str):
                        errors.append(f"{table}|{key} {field}: CONFIG_DB values are strings")
                    continue
                if field in lst["leaflists"]:
                    values = value if isinstance(value, list) else str(value).split(",")
                    if not all(isinstance(v, str) for v in values):
                        errors.append(f"{table}|{key} {field}: a list of strings is expected")
                    elif not all(_typed(lst["leaflists"][field], v) for v in values):
                        errors.append(f"{table}|{key} {field}: {value!r} is not of type {lst['leaflists'][field]}")
                    continue
                if field not in lst["leaves"]:
                    errors.append(f"{table}|{key} {field}: SONiC's model of {table} has no field '{field}'")
                elif isinstance(value, dict | list) or value is None:
                    errors.append(f"{table}|{key} {field}: CONFIG_DB values are strings, not "
                                  f"{type(value).__name__}s")
                elif (table, field) not in JUDGED and not _typed(lst["leaves"][field], str(value)):
                    errors.append(f"{table}|{key} {field}: '{value}' is not of type {lst['leaves'][field]}")
            for field in lst["mandatory"]:
                if field not in row:
                    errors.append(f"{table}|{key} {field}: required by SONiC's model of {table}")
    return errors


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


def validate(db: Any) -> list[str]:
    """Every reason `db` cannot be applied; empty when it is valid."""
    if not isinstance(db, dict):
        return ["CONFIG_DB must be a JSON object of tables"]
    errors = schema_errors(db)
    if shape_errors(db):
        return errors
    meta = db.get("DEVICE_METADATA", {}).get("localhost")
    if not meta:
        errors.append("DEVICE_METADATA|localhost is required (hostname, bgp_asn)")
    else:
        if not meta.get("hostname"):
            errors.append("DEVICE_METADATA|localhost hostname: required")
        if "type" in meta and str(meta["type"]) not in DEVICE_TYPES:
            errors.append(f"DEVICE_METADATA|localhost type: '{meta['type']}' is not a SONiC device type "
                          "(ToRRouter faces servers, LeafRouter is the tier above, SpineRouter above that)")
        if not _int(meta.get("bgp_asn", ""), 1, 4294967294):
            errors.append(f"DEVICE_METADATA|localhost bgp_asn: '{meta.get('bgp_asn')}' is not an ASN (1-4294967294)")
    for vrf, row in db.get("BGP_GLOBALS", {}).items():
        if "local_asn" in row and not _int(row["local_asn"], 1, 4294967294):
            errors.append(f"BGP_GLOBALS|{vrf} local_asn: '{row['local_asn']}' is not an ASN (1-4294967294)")
        if "router_id" in row and not _ipv4(row["router_id"]):
            errors.append(f"BGP_GLOBALS|{vrf} router_id: '{row['router_id']}' is not an IPv4 address")
    ports = db.get("PORT", {})
    for port, row in ports.items():
        if re.fullmatch(r"Ethernet[0-9]+", port) is None:
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
    groups = {k.split("|", 1)[-1] for k in db.get("BGP_PEER_GROUP", {})}
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        vrf, peer = key.split("|", 1) if "|" in key else ("default", key)
        if vrf != "default" and vrf not in db.get("VRF", {}):
            errors.append(f"BGP_NEIGHBOR|{key}: VRF '{vrf}' is not in VRF (sonic-bgp-neighbor.yang: vrf_name is "
                          "'default' or a VRF table key)")
        if not _ip(peer):
            errors.append(f"BGP_NEIGHBOR|{key}: '{peer}' is not an IP address")
        if not _int(row.get("asn", ""), 1, 4294967294):
            errors.append(f"BGP_NEIGHBOR|{key} asn: '{row.get('asn')}' is not an ASN (1-4294967294)")
        group = row.get("peer_group_name")
        if group is not None and str(group) not in groups:
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
    return errors


def copy_db(db: ConfigDb) -> ConfigDb:
    return copy.deepcopy(db)
