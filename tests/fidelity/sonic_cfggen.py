"""Render SONiC's own FRR templates the way sonic-cfggen feeds them (test helper, written from
../shared/reference/sonic-frr-templates/README.md, not from sonic-cfggen's code).

- CONFIG_DB as ConfigDBConnector.get_config() returns it: a key holding `|` becomes a tuple, a field
  `x@` a list named `x` (config_db.json writes lists as JSON lists, which stay lists);
- constants.yml, itself rendered with Jinja first, merged in under `constants`;
- the filters the templates use and the global `template_exists`.
"""

from __future__ import annotations

import ipaddress
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

FRRCFGD = "usr/local/sonic/frrcfgd"
TEMPLATES = "usr/share/sonic/templates"


def _ip(value: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    try:
        return ipaddress.ip_interface(str(value))
    except ValueError:
        return None


def _family(version: int) -> Any:
    def check(value: Any) -> Any:
        ip = _ip(value)
        return value if ip is not None and ip.version == version else False
    return check


def _pfx_filter(value: dict[Any, Any]) -> dict[Any, Any]:
    out = {}
    for key, val in value.items():
        if not isinstance(key, tuple) or len(key) < 2:
            continue
        prefix = key[1] if "/" in key[1] else f"{key[1]}/{128 if ':' in key[1] else 32}"
        out[(key[0], prefix)] = val
    return out


def _unique_name(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for item in items:
        if item.get("name") not in seen:
            seen.add(item.get("name"))
            out.append(item)
    return out


def _typed(db: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for table, rows in db.items():
        typed_rows: dict[Any, Any] = {}
        for key, row in rows.items():
            fields = {}
            for field, value in (row or {}).items():
                if field.endswith("@"):
                    fields[field[:-1]] = str(value).split(",")
                else:
                    fields[field] = value
            typed_rows[tuple(key.split("|")) if "|" in key else key] = fields
        out[table] = typed_rows
    return out


@cache
def environment(reference: Path) -> jinja2.Environment:
    root = reference / "sonic-frr-templates"
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(root / FRRCFGD), str(root / TEMPLATES)]),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             extensions=["jinja2.ext.do"])
    env.filters.update({
        "ipv4": _family(4), "ipv6": _family(6), "ip": lambda v: str(_ip(v).ip) if _ip(v) else False,
        "network": lambda v: str(_ip(v).network.network_address) if _ip(v) else False,
        "prefixlen": lambda v: _ip(v).network.prefixlen if _ip(v) else False,
        "netmask": lambda v: str(_ip(v).network.netmask) if _ip(v) else False,
        "broadcast": lambda v: str(_ip(v).network.broadcast_address) if _ip(v) else False,
        "ip_network": lambda v: str(_ip(v).network) if _ip(v) else False,
        "pfx_filter": _pfx_filter, "unique_name": _unique_name,
        "sort_by_port_index": lambda v: sorted(v, key=lambda p: int(str(p).removeprefix("Ethernet") or 0)),
    })
    env.globals["template_exists"] = lambda name: name in env.loader.list_templates()  # type: ignore[union-attr]
    return env


@cache
def constants(reference: Path) -> dict[str, Any]:
    text = (reference / "sonic-frr-templates/etc/sonic/constants.yml").read_text()
    data: dict[str, Any] = yaml.safe_load(jinja2.Template(text).render())
    return data["constants"]


def render(reference: Path, db: dict[str, dict[str, Any]], template: str = "frr.conf.j2") -> str:
    """SONiC's FRR config for `db`: frrcfgd's unified frr.conf.j2 by default."""
    env = environment(reference)
    return env.get_template(template).render(**_typed(db), constants=constants(reference))
