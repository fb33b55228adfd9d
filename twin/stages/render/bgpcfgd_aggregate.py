"""bgpcfgd's AggregateAddressMgr (managers_aggregate_address.py, sonic-buildimage 086b03bd): BGP_AGGREGATE_ADDRESS.

A key's last `|` part is the prefix; one that is not a network in strict form (`10.0.0.1/8`, no
length) is refused (inactive). An address is active unless it is `bbr-required` "true" while BGP_BBR
status is not enabled. For an active address bgpcfgd pushes, in `router bgp ASN`, the family's
`aggregate-address P [summary-only] [as-set]`, then `ip[v6] prefix-list <aggregate-address-prefix-list>
permit P` and `ip[v6] prefix-list <contributing-address-prefix-list> permit P le 32|128`. A DEL of an
active address sends the same with `no` (the aggregate without options); a BBR status change sets
(enabled) or removes (disabled) every bbr-required address. A SET of an address already there pushes
its lines again: FRR replaces the aggregate, prefix-list entries already present stay as they are and
those of a prefix list no longer named stay too, as on SONiC. The manager waits for bgp_asn.
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import ip_network
from typing import Any

TABLE = "BGP_AGGREGATE_ADDRESS"
TRUE = "true"


def _prefix(key: str) -> str:
    return key.split("|")[-1]


def _valid(prefix: str) -> int:
    """The IP version of a valid prefix, 0 otherwise (validate_prefix)."""
    if "/" not in prefix:
        return 0
    try:
        return ip_network(prefix, strict=True).version
    except ValueError:
        return 0


def _bbr(db: Mapping[str, Any], default: str) -> str:
    """BGP_BBR|all status as the directory holds it: the row's, else `default` (BBRMgr's at start)."""
    row = (db.get("BGP_BBR") or {}).get("all")
    return str(row.get("status", default)) if row is not None else default


def _active(row: Mapping[str, Any], bbr: str) -> bool:
    return row.get("bbr-required", "false") != TRUE or bbr == "enabled"


def _lines(asn: str, key: str, row: Mapping[str, Any], remove: bool, nested: bool = False) -> list[str]:
    """address_set_handler / address_del_handler (`nested`: indented for the boot config)."""
    prefix = _prefix(key)
    version = _valid(prefix)
    if not version:  # refused on a SET; on a DEL bgpcfgd sends lines FRR refuses
        return []
    v4 = version == 4
    cmd = f"{'no ' if remove else ''}aggregate-address {prefix}"
    if not remove:
        cmd += " summary-only" if row.get("summary-only") == TRUE else ""
        cmd += " as-set" if row.get("as-set") == TRUE else ""
    out = [f"router bgp {asn}", "address-family ipv4" if v4 else "address-family ipv6", cmd, "exit-address-family",
           "exit"]
    if nested:  # the same block indented, as a config file holds it
        out[1:4] = [f" {out[1]}", f"  {out[2]}", f" {out[3]}"]
    no, ip, host = ("no " if remove else ""), ("ip" if v4 else "ipv6"), ("32" if v4 else "128")
    if row.get("aggregate-address-prefix-list"):
        out.append(f"{no}{ip} prefix-list {row['aggregate-address-prefix-list']} permit {prefix}")
    if row.get("contributing-address-prefix-list"):
        out.append(f"{no}{ip} prefix-list {row['contributing-address-prefix-list']} permit {prefix} le {host}")
    return out


def boot_lines(db: Mapping[str, Any], asn: str | None, bbr: str) -> list[str]:
    """The active addresses' lines, in key order (`bbr`: BBRMgr's status at start)."""
    if asn is None:
        return []
    out: list[str] = []
    for key, row in sorted((db.get(TABLE) or {}).items()):
        if _valid(_prefix(key)) and _active(row or {}, bbr):
            out += _lines(asn, key, row or {}, remove=False, nested=True)
    return out


def change_lines(old: Mapping[str, Any], new: Mapping[str, Any], asn: str | None, old_bbr: str) -> list[str]:
    """What the manager pushes when CONFIG_DB goes from `old` to `new` (`old_bbr`: BGP_BBR status before):
    a BBR status change first (over the addresses it had), then DELs and SETs in key order."""
    if asn is None:
        return []
    before, after = old.get(TABLE) or {}, new.get(TABLE) or {}
    had_bbr_row = "all" in (old.get("BGP_BBR") or {})
    bbr = _bbr(new, old_bbr if not had_bbr_row else "")  # a DEL of BGP_BBR|all leaves the status unknown
    state = {k: bool(_valid(_prefix(k))) and _active(r or {}, old_bbr) for k, r in before.items()}
    out: list[str] = []
    if bbr != old_bbr and bbr in ("enabled", "disabled"):
        for key, row in sorted(before.items()):
            if (row or {}).get("bbr-required") == TRUE:
                out += _lines(asn, key, row or {}, remove=bbr == "disabled")
                state[key] = bbr == "enabled" and bool(_valid(_prefix(key)))
    for key in sorted(set(before) - set(after)):
        if state[key]:
            out += _lines(asn, key, before[key] or {}, remove=True)
    for key, row in sorted(after.items()):
        if before.get(key) != row and _valid(_prefix(key)) and _active(row or {}, bbr):
            out += _lines(asn, key, row or {}, remove=False)
    return out
