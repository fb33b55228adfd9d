"""A switch's own SONiC config_db.json: read, checked, and what twin's plan takes from it.

How SONiC-VS gets its config: docker-sonic-vs's start.sh (sonic-buildimage
platform/vs/docker-sonic-vs/start.sh, run by supervisord) merges the image's init_cfg.json into
/etc/sonic/config_db.json when that file exists, and configdb-load.sh writes the result into
CONFIG_DB; images built since March 2026 first copy /var/sonic/config_db.json (the "persistent
volume") over it. containerlab's sonic-vs kind ignores `startup-config`, so SONiC users give a node
its config with a bind: `binds: [leaf1/config_db.json:/etc/sonic/config_db.json]`. Such a node runs
that file, in either dialect (bgpcfgd's, SONiC's default, or frrcfgd's with
`frr_mgmt_framework_config: "true"`), and so does its twin: the file is the switch's config on every
runtime, and twin's plan takes the switch's ASN, loopback, port addresses, BGP sessions and
advertised prefixes from it (ConfigFacts) instead of allocating its own, so the health checks
expect the sessions, ECMP and reachability the nodes really have.

The file is checked as twin's own switches check a config before they apply it (the built-in
digest of SONiC's YANG models plus the cross-table rules FRR and the kernel need, see
twin.stages.configdb), and against the topology: every port a link uses must be in its PORT table,
since SONiC-VS booted from a config creates only the ports that config lists. Every mistake is a
Problem naming the file, the `TABLE|key field` and the fix; all of them are raised at once.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network, ip_address, ip_interface
from pathlib import Path
from typing import Any

from twin.host import userfile
from twin.model.config_db import ConfigDb
from twin.model.errors import PlanError, Problem
from twin.model.topology import ConfigFacts, Node, PortFacts, SessionFacts, Topology
from twin.stages import configdb

# Where docker-sonic-vs reads a config_db.json at boot (start.sh), and what it copies over it first
# (start.sh since sonic-buildimage 1a90a80e41, 2026-03: "load config_db.json from /var/sonic").
SONIC_CONFIG = "/etc/sonic/config_db.json"
PERSISTENT_DIR = "/var/sonic"
PERSISTENT_CONFIG = f"{PERSISTENT_DIR}/config_db.json"
VRF = "default"
AF = "ipv4_unicast"
ADDRESS_TABLES = ("INTERFACE", "VLAN_INTERFACE", "LOOPBACK_INTERFACE", "PORTCHANNEL_INTERFACE")
SONIC_VS_STEP = 4  # docker-sonic-vs (Force10-S6000): containerlab's ethN is Ethernet(4*(N-1))


def read_config_db(path: Path, within: Path | None = None) -> ConfigDb:
    """The JSON of a config_db.json (twin.host.userfile's limits); a file that is not a JSON object of tables of
    objects raises one PlanError. With `within`, the file must resolve inside that folder."""
    return userfile.read_config_db(path, within=within, missing_fix="create it or fix the path of the bind")


def config_problems(path: Path, db: ConfigDb) -> list[Problem]:
    """What twin's switch (and, as far as its digest of SONiC's YANG models tells, SONiC) refuses in `db`."""
    out = []
    for error in configdb.validate(db):
        where, sep, message = error.partition(": ")
        if not sep:
            where, message = "(config)", error
        out.append(Problem(str(path), where, message,
                           "correct it as SONiC's YANG models require ('twin validate DIR' checks a folder of "
                           "<switch>/config_db.json files the same way)"))
    if not out:
        out += _bgp_problems(path, db)
    return out


def _bgp_problems(path: Path, db: ConfigDb) -> list[Problem]:
    """A BGP session needs `router bgp`: frrcfgd renders it only from BGP_GLOBALS|default local_asn."""
    if not db.get("BGP_NEIGHBOR") or dialect(db) != "frrcfgd":
        return []
    if "local_asn" in db.get("BGP_GLOBALS", {}).get(VRF, {}):
        return []
    return [Problem(str(path), f"BGP_GLOBALS|{VRF} local_asn", "the config has BGP_NEIGHBOR entries and selects "
                    "frrcfgd (frr_mgmt_framework_config), which renders 'router bgp' only from "
                    f"BGP_GLOBALS|{VRF} local_asn: no session would come up",
                    f'add "BGP_GLOBALS": {{"{VRF}": {{"local_asn": "<ASN>", "router_id": "<loopback>"}}}}')]


def dialect(db: ConfigDb) -> str:
    """The daemon SONiC's bgp container runs for this config: frrcfgd or bgpcfgd (the default)."""
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    return "frrcfgd" if str(meta.get("frr_mgmt_framework_config", "")).lower() == "true" else "bgpcfgd"


def _int(value: Any) -> int | None:
    text = str(value)
    return int(text) if text.isascii() and text.isdigit() else None


def _ipv4(value: Any) -> IPv4Address | None:
    try:
        addr = ip_address(str(value))
    except ValueError:
        return None
    return addr if isinstance(addr, IPv4Address) else None


def _ipv4_keys(rows: dict[str, Any]) -> list[tuple[str, IPv4Interface]]:
    """(interface name, IPv4 address) of every `name|prefix` key of an address table."""
    out = []
    for key in rows:
        name, sep, prefix = key.partition("|")
        if not sep:
            continue
        try:
            iface = ip_interface(prefix)
        except ValueError:
            continue
        if isinstance(iface, IPv4Interface):
            out.append((name, iface))
    return out


def _addresses(db: ConfigDb) -> dict[str, list[IPv4Interface]]:
    out: dict[str, list[IPv4Interface]] = {}
    for table in ADDRESS_TABLES:
        for name, iface in _ipv4_keys(db.get(table, {})):
            out.setdefault(name, []).append(iface)
    return out


def _networks(db: ConfigDb, kind: str, loopback: IPv4Address | None) -> list[IPv4Network]:
    """What BGP advertises. bgpcfgd (bgpd.main.conf.j2): Loopback0 as a /32 and every IPv4
    VLAN_INTERFACE prefix outside a VNET; frrcfgd: the BGP_GLOBALS_AF_NETWORK rows of default/IPv4."""
    nets: list[IPv4Network] = []
    if kind == "frrcfgd":
        for key in db.get("BGP_GLOBALS_AF_NETWORK", {}):
            parts = key.split("|")
            if len(parts) == 3 and parts[:2] == [VRF, AF]:
                try:
                    net = ip_interface(parts[2]).network
                except ValueError:
                    continue
                if isinstance(net, IPv4Network):
                    nets.append(net)
    else:
        if loopback is not None:
            nets.append(IPv4Network(f"{loopback}/32"))
        vlans = db.get("VLAN_INTERFACE", {})
        vnet = {name for name, row in vlans.items() if "|" not in name and isinstance(row, dict)
                and row.get("vnet_name")}
        nets += [iface.network for name, iface in _ipv4_keys(vlans) if name not in vnet]
    return sorted(set(nets))


def _sessions(db: ConfigDb, kind: str) -> list[SessionFacts]:
    """IPv4 BGP_NEIGHBOR entries of the default VRF that are not shut down (bgpcfgd's instance.conf.j2
    shuts a neighbor with admin_status down, or without one when DEVICE_METADATA default_bgp_status is down)."""
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    default_down = kind == "bgpcfgd" and meta.get("default_bgp_status") == "down"
    out = []
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        vrf, sep, peer = key.partition("|")
        if not sep:
            vrf, peer = VRF, key
        ip, asn = _ipv4(peer), _int(row.get("asn", ""))
        if vrf != VRF or ip is None or asn is None:
            continue
        status = row.get("admin_status")
        if status in ("down", "false") or (status is None and default_down):
            continue
        name = row.get("name")
        out.append(SessionFacts(ip=ip, asn=asn, name=str(name) if name else None,
                                local_addr=_ipv4(row.get("local_addr")), bfd=row.get("bfd") == "true"))
    return sorted(out, key=lambda s: s.ip)


def config_facts(db: ConfigDb) -> ConfigFacts:
    """The plan's view of a config that passed config_problems."""
    kind = dialect(db)
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    glob = db.get("BGP_GLOBALS", {}).get(VRF, {})
    # bgpcfgd renders `router bgp` from DEVICE_METADATA bgp_asn; frrcfgd from BGP_GLOBALS|default local_asn
    asn = _int(glob.get("local_asn", "")) if kind == "frrcfgd" else _int(meta.get("bgp_asn", ""))
    addresses = _addresses(db)
    loopback = next((a.ip for a in addresses.get("Loopback0", [])), None)
    ports = {name: PortFacts(mtu=_int(row.get("mtu", "")), speed=_int(row.get("speed", "")))
             for name, row in db.get("PORT", {}).items()}
    members = {key.split("|", 1)[1]: key.split("|", 1)[0] for key in db.get("VLAN_MEMBER", {}) if "|" in key}
    max_paths = None
    if kind == "frrcfgd":
        max_paths = _int(db.get("BGP_GLOBALS_AF", {}).get(f"{VRF}|{AF}", {}).get("max_ebgp_paths", ""))
    return ConfigFacts(dialect="frrcfgd" if kind == "frrcfgd" else "bgpcfgd", asn=asn, loopback=loopback,
                       ports=ports, addresses=addresses, vlan_members=members, sessions=_sessions(db, kind),
                       networks=_networks(db, kind, loopback), max_paths=max_paths)


def _clab_port(port: str) -> str:
    """containerlab's sonic-vs interface of a SONiC port, for messages (Ethernet8 -> eth3)."""
    n = port.removeprefix("Ethernet")
    return f" (containerlab's sonic-vs eth{int(n) // SONIC_VS_STEP + 1})" \
        if n.isdigit() and int(n) % SONIC_VS_STEP == 0 else ""


def _link_problems(topo: Topology, node: Node, db: ConfigDb) -> list[Problem]:
    assert node.config_db is not None
    ports = db.get("PORT", {})
    out = []
    for link in topo.links:
        for end, peer in ((link.a, link.b), (link.b, link.a)):
            if end.node != node.name or end.iface is None or end.iface in ports:
                continue
            out.append(Problem(str(node.config_db), "PORT", f"{node.name} links {end.iface}{_clab_port(end.iface)} "
                               f"to {peer.node}, but this config has no PORT|{end.iface}: SONiC booted from it "
                               "creates only the ports its PORT table lists",
                               f'add "{end.iface}" to PORT (lanes, alias, speed, mtu, admin_status "up"), '
                               "or link a port the config has"))
    return out


def _named_field(topo: Topology, node: Node, attr: str) -> str:
    """Where a topology names a node's file: containerlab's binds, or twin's own key."""
    return f"nodes.{node.name}.binds" if topo.kind == "clab" else f"nodes.{node.name}.{attr}"


def _named_files(topo: Topology) -> tuple[list[Problem], set[Path]]:
    """Problems of the files the topology names (frr.conf, daemons, config_db.json) that lie outside its
    folder, and the files refused so; the text of every frr.conf and daemons file is read and checked."""
    folder = Path(topo.source).parent
    problems: list[Problem] = []
    refused: set[Path] = set()
    for node in topo.nodes:
        for attr in ("frr_conf", "daemons", "config_db"):
            path: Path | None = getattr(node, attr)
            if path is None:
                continue
            escape = userfile.named_outside(path, folder)
            if escape is not None:
                problems.append(Problem(topo.source, _named_field(topo, node, attr), *escape))
                refused.add(path)
            elif attr != "config_db":
                try:
                    userfile.read_text(path, missing_fix="create it or fix the path in the topology")
                except PlanError as exc:
                    problems += exc.problems
    return topo.locate(problems), refused


def with_configs(topo: Topology) -> Topology:
    """Read and check every file a node brings: frr.conf and daemons files as text, config_db.json files
    as configs; the topology with their facts on the switches. Raises one PlanError listing every problem
    of every file."""
    problems, refused = _named_files(topo)
    nodes = []
    for node in topo.nodes:
        if node.config_db is None or node.config_db in refused:
            nodes.append(node)
            continue
        try:
            db = read_config_db(node.config_db)
        except PlanError as exc:
            problems += exc.problems
            continue
        found = config_problems(node.config_db, db)
        found += _link_problems(topo, node, db)
        problems += found
        if not found:
            nodes.append(node.model_copy(update={"config": config_facts(db)}))
    if problems:
        raise PlanError(problems)
    return topo.model_copy(update={"nodes": nodes})
