"""Regenerate twin/model/data/routing_surface.json: every CONFIG_DB table (and, where SONiC's code names
them, every field) that SONiC's routing stack reads, from a sonic-buildimage checkout.

    python scripts/routing_surface.py /path/to/sonic-buildimage [--write]
    python scripts/routing_surface.py --docs      # docs/reference/routing-surface.md from the data

Read, never imported (it needs swsscommon): src/sonic-frr-mgmt-framework/frrcfgd/frrcfgd.py, whose
`table_handler_list` names the tables frrcfgd subscribes to and whose `tbl_to_key_map` names each field
it translates into FRR lines; src/sonic-bgpcfgd/bgpcfgd/main.py, whose managers name the tables
bgpcfgd subscribes to (read whole by its templates: the table is the entry). The emulation status of
each entry (emulated with the test that proves it, or not emulated with the reason) is kept from the
existing file; a new entry is "not emulated: not reviewed", which `twin validate` reports as such.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "twin" / "model" / "data" / "routing_surface.json"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "reference" / "routing-surface.md"
FRRCFGD = "src/sonic-frr-mgmt-framework/frrcfgd/frrcfgd.py"
BGPCFGD = "src/sonic-bgpcfgd/bgpcfgd/main.py"
# swsscommon's table-name constants bgpcfgd's main.py uses (swss-common common/schema.h)
SWSS_NAMES = {
    "CFG_DEVICE_METADATA_TABLE_NAME": "DEVICE_METADATA", "CFG_DEVICE_NEIGHBOR_METADATA_TABLE_NAME":
    "DEVICE_NEIGHBOR_METADATA", "CFG_INTF_TABLE_NAME": "INTERFACE", "CFG_LOOPBACK_INTERFACE_TABLE_NAME":
    "LOOPBACK_INTERFACE", "CFG_VLAN_INTF_TABLE_NAME": "VLAN_INTERFACE", "CFG_LAG_INTF_TABLE_NAME":
    "PORTCHANNEL_INTERFACE", "CFG_VOQ_INBAND_INTERFACE_TABLE_NAME": "VOQ_INBAND_INTERFACE",
    "CFG_VLAN_SUB_INTF_TABLE_NAME": "VLAN_SUB_INTERFACE", "CFG_BGP_NEIGHBOR_TABLE_NAME": "BGP_NEIGHBOR",
    "CFG_BGP_INTERNAL_NEIGHBOR_TABLE_NAME": "BGP_INTERNAL_NEIGHBOR", "CFG_BGP_DEVICE_GLOBAL_TABLE_NAME":
    "BGP_DEVICE_GLOBAL", "BGP_BBR_TABLE_NAME": "BGP_BBR", "BGP_AGGREGATE_ADDRESS_TABLE_NAME": "BGP_AGGREGATE_ADDRESS",
}
UNREVIEWED = {"status": "not emulated", "reason": "not reviewed"}
# Fields of a bgpcfgd table its manager hands to another daemon, listed apart from the table (bgpcfgd's
# managers read rows whole, so the generator finds no fields of theirs): STATIC_ROUTE `bfd` true is
# staticroutebfd's (managers_static_rt.py skips such a route).
BGPCFGD_FIELDS = {"STATIC_ROUTE": ["bfd"]}
# What SONiC's swss config managers (sonic-swss cfgmgr: portmgrd, intfmgrd, vlanmgrd, teammgrd,
# vrfmgrd) read of the routing-relevant tables and program into the kernel: named here, as that code
# is in sonic-swss, not sonic-buildimage.
SWSS_TABLES = ["PORT", "INTERFACE", "LOOPBACK_INTERFACE", "VLAN", "VLAN_MEMBER", "VLAN_INTERFACE", "PORTCHANNEL",
               "PORTCHANNEL_MEMBER", "PORTCHANNEL_INTERFACE", "VLAN_SUB_INTERFACE", "VRF", "MGMT_PORT",
               "MGMT_INTERFACE"]


def _source(repo: Path, path: str) -> str:
    if (repo / path).exists():
        return (repo / path).read_text()
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout


def _commit(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _fields(entry: ast.expr) -> list[str]:
    """A key map entry's first element: a field, a list of them (`+` marks optional ones), `a&b` for
    fields that travel together, `field|qualifier` for one of several forms."""
    names: list[str] = []
    if isinstance(entry, ast.Constant) and isinstance(entry.value, str):
        names = [entry.value]
    elif isinstance(entry, (ast.List, ast.Tuple)):
        names = [e.value for e in entry.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    out = []
    for name in names:
        for part in name.lstrip("+").split("&"):
            field = part.split("|", 1)[0]
            if field and field not in out:
                out.append(field)
    return out


def frrcfgd_tables(source: str) -> dict[str, list[str]]:
    """table -> the fields frrcfgd translates (an empty list: a table its own handler reads whole)."""
    tree = ast.parse(source)
    maps: dict[str, list[str]] = {}
    handled: list[str] = []
    table_maps: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            name = target.id if isinstance(target, ast.Name) else \
                target.attr if isinstance(target, ast.Attribute) else None
            if name is None:
                continue
            if name.endswith("_map") and isinstance(node.value, ast.List) and name != "tbl_to_key_map":
                found = [f for e in node.value.elts if isinstance(e, ast.Tuple) and e.elts for f in _fields(e.elts[0])]
                maps[name] = list(dict.fromkeys(found))
            elif name == "tbl_to_key_map" and isinstance(node.value, ast.Dict):
                table_maps = {k.value: v for k, v in zip(node.value.keys, node.value.values, strict=True)
                              if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            elif name == "table_handler_list" and isinstance(node.value, ast.List):
                handled = [e.elts[0].value for e in node.value.elts if isinstance(e, ast.Tuple)
                           and isinstance(e.elts[0], ast.Constant) and isinstance(e.elts[0].value, str)]
    out: dict[str, list[str]] = {}
    for table in handled:
        fields: list[str] = []
        for ref in ast.walk(table_maps[table]) if table in table_maps else []:
            if isinstance(ref, ast.Name) and ref.id in maps:
                fields += [f for f in maps[ref.id] if f not in fields]
        out[table] = fields
    return out


def bgpcfgd_tables(source: str) -> list[str]:
    """The CONFIG_DB tables bgpcfgd's managers subscribe to."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and len(node.args) >= 3):
            continue
        db, table = node.args[1], node.args[2]
        if not (isinstance(db, ast.Constant) and db.value == "CONFIG_DB"):
            continue
        name = table.value if isinstance(table, ast.Constant) else \
            SWSS_NAMES.get(table.attr if isinstance(table, ast.Attribute) else table.id if isinstance(table, ast.Name)
                           else "")
        if isinstance(name, str) and name and name not in out:
            out.append(name)
    return out


def surface(repo: Path, old: dict[str, Any]) -> dict[str, Any]:
    kept = {(e["reader"], e["table"], e["field"]): e for e in old.get("entries", [])}
    entries = []

    def add(reader: str, table: str, field: str) -> None:
        entry = kept.get((reader, table, field)) or {"reader": reader, "table": table, "field": field, **UNREVIEWED}
        entries.append(entry)

    for table, fields in frrcfgd_tables(_source(repo, FRRCFGD)).items():
        for field in ["*", *fields]:   # "*": the entry itself (a key frrcfgd turns into a line or a block)
            add("frrcfgd", table, field)
    for table in bgpcfgd_tables(_source(repo, BGPCFGD)):
        for field in ["*", *BGPCFGD_FIELDS.get(table, [])]:
            add("bgpcfgd", table, field)
    for table in SWSS_TABLES:
        add("swss", table, "*")
    return {"source": "sonic-net/sonic-buildimage", "commit": _commit(repo),
            "read": [FRRCFGD, BGPCFGD], "entries": entries}


def markdown(data: dict[str, Any]) -> str:
    """The surface as a page: counts, then every table with its emulated and not emulated fields."""
    entries = data["entries"]
    emulated = [e for e in entries if e["status"] == "emulated"]
    tables: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in entries:
        tables.setdefault((e["reader"], e["table"]), []).append(e)
    lines = [
        "# Routing surface", "",
        "Every CONFIG_DB table SONiC's routing stack reads, and every field where SONiC's code names them, "
        "with whether twin emulates it. Generated from "
        f"[{data['source']}](https://github.com/{data['source']}) at `{data['commit'][:12]}` "
        f"({', '.join(f'`{r}`' for r in data['read'])}, and the routing tables of swss's config managers) by "
        "`scripts/routing_surface.py`; the data is `twin/model/data/routing_surface.json`.", "",
        "What a switch's CONFIG_DB holds that is not emulated is stored as SONiC stores it, logged by the agent, "
        "reported by `twin validate` and fails `twin verify`, `twin ci` and `twin rehearse` (check "
        "`not-emulated`), unless the lab file names the table under `accept_not_emulated:`. Which reader applies "
        "is the config's: frrcfgd when DEVICE_METADATA says `frr_mgmt_framework_config: \"true\"`, bgpcfgd "
        "otherwise; swss always.", "",
        f"**{len(entries)} entries, {len(emulated)} emulated, {len(entries) - len(emulated)} not emulated**; "
        f"{len(tables)} tables, {sum(all(e['status'] == 'emulated' for e in es) for es in tables.values())} "
        f"emulated whole, {sum(all(e['status'] != 'emulated' for e in es) for es in tables.values())} not at all.",
        "", "| reader | table | emulated | not emulated (why) |", "|---|---|---|---|"]
    for (reader, table), es in tables.items():
        yes = ", ".join(f"`{e['field']}`" for e in es if e["status"] == "emulated")
        reasons: dict[str, list[str]] = {}
        for e in es:
            if e["status"] != "emulated":
                reasons.setdefault(e["reason"], []).append(f"`{e['field']}`")
        no = "; ".join(f"{', '.join(fields)} ({why})" for why, fields in reasons.items())
        lines.append(f"| {reader} | `{table}` | {yes} | {no} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    if sys.argv[1:] == ["--docs"]:
        DOCS.write_text(markdown(json.loads(DATA.read_text())))
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    old = json.loads(DATA.read_text()) if DATA.exists() else {}
    new = surface(Path(sys.argv[1]), old)
    text = json.dumps(new, indent=1) + "\n"
    if "--write" in sys.argv:
        DATA.parent.mkdir(parents=True, exist_ok=True)
        DATA.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
