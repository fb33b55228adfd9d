"""Render a config with a SONiC release's own FRR templates, exactly as SONiC feeds them.

`templates_root` is laid out as a SONiC switch keeps the files (as sonic-frr-templates in the
reference folder, twin.host.reference):
usr/share/sonic/templates (dockers/docker-fpm-frr/frr), usr/local/sonic/frrcfgd
(src/sonic-frr-mgmt-framework/templates) and etc/sonic/constants.yml.

What SONiC does:
- the bgp container's docker_init.sh runs `sonic-cfggen -d -y /etc/sonic/constants.yml [-T frrcfgd dir]
  -t gen_frr.conf.j2`. sonic-cfggen's Jinja environment: trim_blocks, search path `/`, the templates
  folder, the -T folder; CONFIG_DB as ConfigDBConnector.get_config() returns it (a key holding `|`
  becomes a tuple, a field `x@` the list `x`), constants.yml merged in; its filters (ipv4/ipv6 tell
  the IP version, ip/network/prefixlen/netmask/broadcast read a prefix, pfx_filter, ip_network,
  unique_name, sort_by_port_index, file_exists) and the global `template_exists`.
- frrcfgd configs (frr_mgmt_framework_config "true"): gen_frr.conf.j2 includes frrcfgd's frr.conf.j2,
  which is the whole config.
- otherwise bgpcfgd runs: gen_frr.conf.j2 includes the templates' frr.conf.j2 (zebra interfaces,
  staticd, bgpd.main); then bgpcfgd (its own Jinja environment: no trim_blocks, filters ipv4/ipv6/
  pfx_filter/file_exists/ip/network/prefixlen/netmask) pushes zebra.set_src.conf.j2 for Loopback0 and,
  per neighbor, general/policies.conf.j2, `router bgp ASN` + peer-group.conf.j2 + `exit`, and
  `router bgp ASN` + ` bgp suppress-fib-pending` + instance.conf.j2 + `exit`, with the variables
  twin.stages.render.bgpcfgd.template_vars computes. All modes other than frrcfgd are rendered this way.
"""

from __future__ import annotations

import os
from functools import cache, partial
from ipaddress import IPv4Interface, IPv6Interface, ip_interface
from pathlib import Path
from typing import Any

import jinja2
import yaml

from twin.model.config_db import ConfigDb
from twin.model.errors import TwinError
from twin.stages.render.bgpcfgd import bgp_asn, peers, template_vars

TEMPLATES = "usr/share/sonic/templates"
FRRCFGD = "usr/local/sonic/frrcfgd"
CONSTANTS = "etc/sonic/constants.yml"
GENERAL = f"{TEMPLATES}/bgpd/templates/general"
REQUIRED = (f"{TEMPLATES}/gen_frr.conf.j2", f"{TEMPLATES}/frr.conf.j2", f"{TEMPLATES}/bgpd/bgpd.main.conf.j2",
            f"{GENERAL}/instance.conf.j2", f"{GENERAL}/peer-group.conf.j2", f"{GENERAL}/policies.conf.j2",
            f"{TEMPLATES}/zebra/zebra.set_src.conf.j2", f"{FRRCFGD}/frr.conf.j2", CONSTANTS)
ENV_VAR = "TWIN_SONIC_TEMPLATES"
# sonic-buildimage rules/config: ENABLE_FRR_SNMP_AGENT ?= y, the value constants.yml.j2 is rendered with
BUILD_VARS = {"ENABLE_FRR_SNMP_AGENT": "y"}


def find_templates(flag: Path | None) -> Path | None:
    """The SONiC template folder to render with: `flag`, else $TWIN_SONIC_TEMPLATES, else None
    (twin's own renderer). A folder without SONiC's templates is an error naming what is missing."""
    chosen = flag if flag is not None else (Path(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else None)
    if chosen is None:
        return None
    check_templates(chosen, "the --sonic-templates folder" if flag is not None else f"${ENV_VAR}")
    return chosen


def check_templates(root: Path, named: str = "the SONiC template folder") -> None:
    """Raise TwinError unless `root` holds the templates and constants this module renders."""
    missing = [rel for rel in REQUIRED if not (root / rel).is_file()]
    if missing:
        raise TwinError(f"{root}: {named} lacks {', '.join(missing)}; point it at a folder laid out as a SONiC "
                        f"switch keeps them: {TEMPLATES} (sonic-buildimage dockers/docker-fpm-frr/frr), {FRRCFGD} "
                        f"(src/sonic-frr-mgmt-framework/templates) and {CONSTANTS} "
                        "(files/build_templates/constants.yml.j2), or leave it unset for twin's own renderer")


# -- sonic-cfggen's and bgpcfgd's Jinja filters -------------------------------------------------


def _prefix(value: Any) -> IPv4Interface | IPv6Interface | None:
    try:
        return ip_interface(str(value).strip()) if value else None
    except ValueError:
        return None


def _is_version(version: int, value: Any) -> bool:
    prefix = _prefix(value)
    return prefix is not None and prefix.version == version


def _prefix_attr(attr: str, value: Any) -> str | None:
    """sonic-cfggen's prefix_attr over netaddr.IPNetwork: ip, network, prefixlen, netmask, broadcast."""
    prefix = _prefix(value)
    if prefix is None:
        return None
    net = prefix.network
    found = {"ip": prefix.ip, "network": net.network_address, "prefixlen": net.prefixlen, "netmask": net.netmask,
             "broadcast": net.broadcast_address if net.prefixlen < net.max_prefixlen - 1 else None}[attr]
    return None if found is None else str(found)


def _ip_network(value: Any) -> str:
    prefix = _prefix(value)
    return f"Invalid ip address {value}" if prefix is None else str(prefix.network.network_address)


def _pfx_filter(value: Any) -> dict[Any, Any]:
    """(interface, prefix) keys only, a bare address as /32 or /128."""
    out: dict[Any, Any] = {}
    for key, val in (value or {}).items():
        if not isinstance(key, tuple):
            continue
        intf, addr = key
        if "/" not in addr:
            prefix = _prefix(addr)
            if prefix is None:
                continue
            addr = f"{addr}/{prefix.network.prefixlen}"
        out[(intf, addr)] = val
    return out


def _unique_name(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for item in items:
        if item["name"] not in seen:
            seen.add(item["name"])
            out.append(item)
    return out


def _sort_by_port_index(value: Any) -> None:
    if isinstance(value, list):
        value.sort(key=lambda k: int(k[8:]) if "BP" not in k else int(k[11:]) + 1024)


def _filters(cfggen: bool) -> dict[str, Any]:
    filters: dict[str, Any] = {"ipv4": partial(_is_version, 4), "ipv6": partial(_is_version, 6),
                               "pfx_filter": _pfx_filter, "file_exists": lambda path: os.path.isfile(path)}
    for attr in ("ip", "network", "prefixlen", "netmask") + (("broadcast",) if cfggen else ()):
        filters[attr] = partial(_prefix_attr, attr)
    if cfggen:
        filters.update({"ip_network": _ip_network, "unique_name": _unique_name,
                        "sort_by_port_index": _sort_by_port_index})
    return filters


@cache
def cfggen_environment(root: Path, template_dir: str = TEMPLATES) -> jinja2.Environment:
    """sonic-cfggen's environment: search path `/` (here `root`), the templates, the -T folder (frrcfgd's),
    then the folder of the template rendered (`template_dir`, relative to `root`)."""
    loader = jinja2.FileSystemLoader([str(root), str(root / TEMPLATES), str(root / FRRCFGD), str(root / template_dir)])
    env = jinja2.Environment(loader=loader, trim_blocks=True, keep_trailing_newline=True)
    env.filters.update(_filters(cfggen=True))

    def template_exists(name: str) -> bool:
        try:
            loader.get_source(env, name)
        except jinja2.TemplateNotFound:
            return False
        return True
    env.globals["template_exists"] = template_exists
    return env


@cache
def bgpcfgd_environment(root: Path) -> jinja2.Environment:
    """bgpcfgd's TemplateFabric: the templates folder, trim_blocks off."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(root / TEMPLATES)), trim_blocks=False,
                             keep_trailing_newline=True)
    env.filters.update(_filters(cfggen=False))
    return env


@cache
def constants(root: Path) -> dict[str, Any]:
    """constants.yml as the image holds it: rendered with the build's variables, then read."""
    text = jinja2.Template((root / CONSTANTS).read_text()).render(**BUILD_VARS)
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("constants"), dict):
        raise TwinError(f"{root / CONSTANTS}: no `constants` mapping; use a SONiC release's constants.yml")
    found: dict[str, Any] = data["constants"]
    return found


def cfggen_data(db: ConfigDb) -> dict[str, Any]:
    """CONFIG_DB as ConfigDBConnector.get_config() gives it: `a|b` keys as tuples, `x@` fields as lists."""
    out: dict[str, Any] = {}
    for table, rows in db.items():
        typed: dict[Any, Any] = {}
        for key, row in rows.items():
            fields = {}
            for name, value in (row or {}).items():
                if name.endswith("@"):
                    fields[name[:-1]] = value if isinstance(value, list) else str(value).split(",")
                else:
                    fields[name] = value
            typed[tuple(key.split("|")) if "|" in key else key] = fields
        out[table] = typed
    return out


# -- rendering ------------------------------------------------------------------------------------


def _bgpcfgd_pushes(root: Path, db: ConfigDb) -> list[str]:
    """What bgpcfgd pushes once it runs: set src for Loopback0, then every neighbor it adds."""
    env, consts = bgpcfgd_environment(root), constants(root)
    pushes = []
    set_src = env.get_template("zebra/zebra.set_src.conf.j2")
    for rm_name, version, proto in (("RM_SET_SRC", 4, ""), ("RM_SET_SRC6", 6, "v6")):
        address = next((k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {})
                        if k.startswith("Loopback0|") and _is_version(version, k.split("|", 1)[1])), None)
        if address is not None:
            pushes.append(set_src.render(rm_name=rm_name, lo_ip=address.split("/")[0], ip_proto=proto))
    asn = bgp_asn(db)
    general = "bgpd/templates/general"
    for peer in peers(db):
        kwargs = template_vars(db, peer, consts)
        pushes.append(env.get_template(f"{general}/policies.conf.j2").render(**kwargs))
        pushes.append(f"router bgp {asn}\n" + env.get_template(f"{general}/peer-group.conf.j2").render(**kwargs)
                      + "\nexit")
        pushes.append(f"router bgp {asn}\n bgp suppress-fib-pending\n"
                      + env.get_template(f"{general}/instance.conf.j2").render(**kwargs) + "\nexit")
    return pushes


def render_with_templates(templates_root: Path, db: ConfigDb) -> str:
    """SONiC's FRR config for `db`, rendered with the templates under `templates_root` as SONiC feeds them."""
    check_templates(templates_root)
    text = cfggen_environment(templates_root).get_template("gen_frr.conf.j2").render(
        **cfggen_data(db), constants=constants(templates_root))
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    if str(meta.get("frr_mgmt_framework_config", "")).lower() == "true":
        return text
    return "\n".join([text.rstrip("\n"), *_bgpcfgd_pushes(templates_root, db)]) + "\n"
