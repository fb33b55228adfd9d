"""bgpcfgd's PrefixListMgr (managers_prefix_list.py, sonic-buildimage 086b03bd): PREFIX_LIST as FRR gets it.

A key is `TYPE|prefix`, the prefix read as an IP network (a host address keeps its length: the
entry is its network, `prefix.cidr`); a key whose prefix is no network is skipped. Per type:

- SUPPRESS_PREFIX: `ip[v6] prefix-list SUPPRESS_IPV4_PREFIX|SUPPRESS_IPV6_PREFIX permit <prefix>`
  (suppress_prefix/add_suppress_prefix.conf.j2; the names from constants.yml prefix_list), removed
  with `no ...` (del_suppress_prefix.conf.j2);
- ANCHOR_PREFIX: for a SpineRouter of subtype UpstreamLC or an UpperSpineRouter only, types twin's
  emulation refuses (bgpcfgd.check_scope), so it never reaches FRR here, as on SONiC's other types;
- any other TYPE is a prefix list of that name: `ip[v6] prefix-list TYPE [seq N] <action> <prefix>
  [ge G] [le L]`, nothing without `action`; a DEL removes that line, or the whole list when the entry
  held no action.

The manager waits for DEVICE_METADATA type and bgp_asn. A SET of an entry already there pushes the
new line without removing the old one (a new `seq` line replaces that sequence number in FRR, other
lines are added), as bgpcfgd does.
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import ip_network
from typing import Any

SUPPRESS = "SUPPRESS_PREFIX"
ANCHOR = "ANCHOR_PREFIX"
SUPPRESS_NAMES = {"ip": "SUPPRESS_IPV4_PREFIX", "ipv6": "SUPPRESS_IPV6_PREFIX"}


def _key(key: str) -> tuple[str, str, str] | None:
    """(type, the entry's network, ip/ipv6), or None for a key bgpcfgd skips."""
    kind, sep, text = key.partition("|")
    if not sep:
        return None
    try:
        net = ip_network(text.strip(), strict=False)
    except ValueError:
        return None
    return kind, str(net), "ip" if net.version == 4 else "ipv6"


def _suppress_name(ipv: str, constants: Mapping[str, Any]) -> str:
    names = ((constants.get("bgp") or {}).get("prefix_list") or {}).get(SUPPRESS) or {}
    return str(names.get("ipv4_name" if ipv == "ip" else "ipv6_name", SUPPRESS_NAMES[ipv]))


def _line(kind: str, prefix: str, ipv: str, row: Mapping[str, Any], constants: Mapping[str, Any]) -> str | None:
    """The line an entry adds (without `no`), None where bgpcfgd pushes nothing."""
    if kind == ANCHOR:
        return None
    if kind == SUPPRESS:
        return f"{ipv} prefix-list {_suppress_name(ipv, constants)} permit {prefix}"
    if not row.get("action"):
        return None
    parts = [ipv, "prefix-list", kind, *(["seq", str(row["seq"])] if "seq" in row else []), str(row["action"]),
             prefix, *(["ge", str(row["ge"])] if "ge" in row else []), *(["le", str(row["le"])] if "le" in row else [])]
    return " ".join(parts)


def ready(db: Mapping[str, Any]) -> bool:
    """The manager's dependencies: DEVICE_METADATA type and bgp_asn."""
    meta = (db.get("DEVICE_METADATA") or {}).get("localhost") or {}
    return "type" in meta and "bgp_asn" in meta


def boot_lines(db: Mapping[str, Any], constants: Mapping[str, Any]) -> list[str]:
    """Every entry's line, in key order, once the dependencies are there."""
    if not ready(db):
        return []
    out = []
    for key, row in sorted((db.get("PREFIX_LIST") or {}).items()):
        parsed = _key(key)
        line = _line(*parsed, row or {}, constants) if parsed else None
        if line:
            out.append(line)
    return out


def _delete(kind: str, prefix: str, ipv: str, row: Mapping[str, Any], constants: Mapping[str, Any]) -> str | None:
    if kind == ANCHOR:
        return None
    if kind != SUPPRESS and not row.get("action"):
        return f"no {ipv} prefix-list {kind}"
    line = _line(kind, prefix, ipv, row, constants)
    return f"no {line}" if line else None


def change_lines(old: Mapping[str, Any], new: Mapping[str, Any], constants: Mapping[str, Any]) -> list[str]:
    """What the manager pushes when CONFIG_DB goes from `old` to `new` (DELs, then SETs, in key order):
    every entry once the dependencies come, held back while they are missing. Only entries the manager
    took (one without `action` is not kept) are removed with their data."""
    if not ready(new):
        return []
    if not ready(old):
        return boot_lines(new, constants)
    before, after = old.get("PREFIX_LIST") or {}, new.get("PREFIX_LIST") or {}
    out = []
    for key in sorted(set(before) - set(after)):
        parsed = _key(key)
        if parsed is None:
            continue
        kept = parsed[0] in (SUPPRESS, ANCHOR) or bool((before[key] or {}).get("action"))
        line = _delete(*parsed, before[key] or {} if kept else {}, constants)
        if line:
            out.append(line)
    for key in sorted(after):
        if key in before and before[key] == after[key]:
            continue
        parsed = _key(key)
        line = _line(*parsed, after[key] or {}, constants) if parsed else None
        if line:
            out.append(line)
    return out
