"""The containerlab topology of a plan: what containerlab deploys for the clab runtime
(twin.runtime.clab.deploy) and what `twin export clab` writes (twin.export.containerlab).

One container per node; what each node runs comes from its node kind (twin.kinds), found through
the registry: its `exec:` lines are the kind's `clab_exec`, its binds the kind's `clab_binds`:

- switches, kind `linux` (frr-switch): twin's FRR image; inside, the interfaces keep the plan's kernel
  names (Ethernet0, ...). The rendered frr.conf, FRR `daemons` file and config_db.json are bound in,
  and `exec:` lines set the switch sysctls, configure ports and addresses from config_db.json
  (as the netns runtime does) and start FRR with Debian's init script, which runs watchfrr and
  applies /etc/frr/frr.conf with `vtysh -b`;
- switches, kind `sonic-vs`: docker-sonic-vs (SONiC's port `Ethernet(4·(N−1))` is containerlab's
  `ethN`, HWSKU Force10-S6000, step 4; eth0 is management). The kind ignores `startup-config`, and
  its config_db.json cannot be bound at /etc/sonic/config_db.json: the image's start.sh (`bash -e`,
  sonic-buildimage platform/vs/docker-sonic-vs/start.sh) merges init_cfg.json into that file with
  `sonic-cfggen ... > /tmp/config_db.json` and `mv /tmp/config_db.json /etc/sonic/config_db.json`,
  and mv cannot replace a bind-mounted file ("unable to remove target: Device or resource busy"),
  so start.sh would exit before it starts redis, loads CONFIG_DB (configdb-load.sh) or starts
  syncd and orchagent. The file is therefore bound read-only at /var/sonic/config_db.json and
  copied in by `exec:` lines (twin.kinds.sonic_vs.clab_exec), which containerlab runs after the
  kind's post-deploy step has launched supervisord: wait until configdb-load.sh has set
  CONFIG_DB_INITIALIZED (start.sh is then done with /etc/sonic/config_db.json), `cp` the file
  there (so a later `config reload` or `config save` works on it), `config load -y` it (a merge,
  as SONiC users load a config) and start the linked ports. Copying before start.sh reads the
  file would race with supervisord, which starts start.sh without containerlab waiting for it.
  Images built since March 2026 copy /var/sonic/config_db.json in themselves before the merge, so
  there the config is in CONFIG_DB from the first load and the exec lines repeat it harmlessly.
  The config is the switch's own when it brings one (an imported sonic-vs node's bound file),
  else twin's rendering of the plan (render.config_db.node_config_db);
- routers imported from a .clab.yml (frr-router): kind `linux`, their own frr.conf and daemons bound in;
- servers (host): kind `linux`, with `exec:` lines that set their addresses, per-NIC routing tables
  and routes, the `ip` commands the netns runtime runs in a batch.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import yaml

from twin.host import userfile
from twin.kinds.facts import ClabKind
from twin.kinds.linux_start import FRR_INIT as FRR_INIT  # re-exported: FRR's nodes' exec lines end with it
from twin.kinds.registry import clab_switch_kind, kind_of
from twin.model.errors import TwinError
from twin.model.plan import NodePlan, Plan
from twin.stages.render.config_db import dumps, node_config_db
from twin.stages.render.frr import render_frr
from twin.switch.frr.frr_daemons import KNOWN, VTY_ADDRESS, switch_daemons

CLAB_KINDS: tuple[ClabKind, ...] = ("linux", "sonic-vs")
IFNAME_MAX = 15              # Linux IFNAMSIZ (16) minus the terminating NUL
GENERATED_NOTE = "written by twin export; regenerate rather than edit"

_IFNAME = re.compile(r"^[^\s:/]+$")


def default_image(kind: ClabKind) -> str:
    """The image a switch of this kind runs unless told otherwise (its node kind's data file)."""
    image = clab_switch_kind(kind).facts.default_image()
    assert image is not None, f"the switch kind exported as {kind} names no image"
    return image


def linux_image(kind: ClabKind, image: str, host_image: str | None = None) -> str:
    """The image of servers and imported routers: `host_image`, else the switch image when it is
    twin's (kind linux), else twin's FRR image (docker-sonic-vs cannot serve as a Linux host)."""
    return host_image or (image if clab_switch_kind(kind).facts.runs_linux_nodes else default_image("linux"))


# -- the topology -------------------------------------------------------------------------------

def clab_topology(plan: Plan, *, kind: ClabKind, image: str, files_dir: str, mgmt_subnet: str | None = None,
                  lab_name: str | None = None, host_image: str | None = None) -> dict[str, Any]:
    """The containerlab topology of `plan` as a dict, ready to dump as YAML.

    `files_dir` prefixes every bind (`<files_dir>/<node>/<file>`); `host_image` runs servers and
    imported routers (default: `image` for kind linux, twin's FRR image for sonic-vs).
    """
    problems = interface_problems(plan, kind)
    if problems:
        raise TwinError("cannot export to containerlab:\n" + "\n".join(problems))
    lab = lab_name or plan.name
    hosts_image = linux_image(kind, image, host_image)
    addresses = _mgmt_addresses(plan, mgmt_subnet)
    nodes: dict[str, Any] = {}
    for node in plan.nodes:
        entry = _node_entry(plan, node, kind=kind, image=image, hosts_image=hosts_image, files_dir=files_dir)
        if node.name in addresses:
            entry["mgmt-ipv4"] = addresses[node.name]
        nodes[node.name] = entry
    links = [{"endpoints": [endpoint(plan, kind, ln.a_node, ln.a_iface), endpoint(plan, kind, ln.b_node, ln.b_iface)]}
             for ln in plan.links]
    return {"name": lab, "mgmt": {"network": f"twin-{lab}", "ipv4-subnet": mgmt_subnet or "auto"},
            "topology": {"nodes": nodes, "links": links}}


def container_iface(plan: Plan, kind: ClabKind, node_name: str, port: str) -> str:
    """The interface name inside the node's container for the plan's interface `port`."""
    node = plan.node(node_name)
    return kind_of(node, clab_switch_kind(kind)).container_iface(node.iface(port))


def endpoint(plan: Plan, kind: ClabKind, node_name: str, port: str) -> str:
    """A short-form link endpoint, `node:interface`."""
    return f"{node_name}:{container_iface(plan, kind, node_name, port)}"


def interface_problems(plan: Plan, kind: ClabKind) -> list[str]:
    """Interfaces containerlab cannot create: bad or too long Linux names, eth0 (management)."""
    problems = []
    for node in plan.nodes:
        for iface in node.interfaces:
            try:
                name = container_iface(plan, kind, node.name, iface.name)
            except ValueError as exc:
                problems.append(f"{node.name}:{iface.name}: {exc}")
                continue
            if not _IFNAME.match(name) or len(name) > IFNAME_MAX:
                problems.append(f"{node.name}:{iface.name}: '{name}' is not a Linux interface name containerlab "
                                f"can create (at most {IFNAME_MAX} characters, no spaces, ':' or '/')")
            elif name == "eth0":
                problems.append(f"{node.name}:{iface.name}: eth0 is the node's management interface")
    return problems


def _node_entry(plan: Plan, node: NodePlan, *, kind: ClabKind, image: str, hosts_image: str,
                files_dir: str) -> dict[str, Any]:
    """One node's entry; the `twin-role` label lets twin's .clab.yml importer read the roles back."""
    node_kind = kind_of(node, clab_switch_kind(kind))
    binds = [f"{files_dir}/{node.name}/{name}:{target}" for name, target in node_kind.facts.clab_binds.items()]
    entry: dict[str, Any] = {"kind": node_kind.facts.clab_kind,
                             "image": image if node.kind == "switch" else hosts_image,
                             "labels": {"twin-role": node.role}}
    entry["exec"] = node_kind.clab_exec(plan, node)
    if binds:
        entry["binds"] = binds
    return entry


def bind_targets(node: NodePlan, kind: ClabKind) -> dict[str, str]:
    """File name -> where it is bound inside the node's container (with `:ro` when read-only)."""
    return dict(kind_of(node, clab_switch_kind(kind)).facts.clab_binds)


# -- FRR's daemons file ------------------------------------------------------------------------

def daemons_file(daemons: list[str]) -> str:
    """An FRR 8.4 `daemons` file (Debian's layout) enabling `daemons`; zebra and staticd always run."""
    enabled = set(daemons)
    listed = [d for d in KNOWN if d not in ("zebra", "staticd")]
    lines = [f"# FRR daemons, {GENERATED_NOTE}. zebra and staticd always run.", ""]
    lines += [f"{d}={'yes' if d in enabled else 'no'}" for d in listed]
    lines += ["", "vtysh_enable=yes", f'zebra_options="  -A {VTY_ADDRESS} -s 16777216"',
              f'staticd_options="-A {VTY_ADDRESS}"']
    lines += [f'{d}_options="-A {VTY_ADDRESS}"' for d in listed if d in enabled]
    return "\n".join(lines) + "\n"


# -- the files the topology binds ---------------------------------------------------------------

def node_files(plan: Plan, kind: ClabKind) -> dict[str, str]:
    """`<node>/<file>` -> content, for every file the topology binds."""
    files: dict[str, str] = {}
    for node in plan.nodes:
        for name, text in _files_of(plan, node, kind).items():
            files[f"{node.name}/{name}"] = text
    return files


def _files_of(plan: Plan, node: NodePlan, kind: ClabKind) -> dict[str, str]:
    if node.kind == "switch":
        db = node_config_db(plan, node)  # its own config_db.json, or twin's rendering
        files = {"config_db.json": dumps(db)}
        if "frr.conf" in clab_switch_kind(kind).facts.clab_binds:  # twin's FRR, not the image's own
            files["frr.conf"] = render_frr(db)
            files["daemons"] = daemons_file(switch_daemons(plan.fabric.bfd.enabled))
        return files
    if node.kind == "router":
        if node.frr_conf is None:
            raise TwinError(f"{node.name}: an imported router without an frr.conf cannot be exported")
        daemons = userfile.read_text(node.daemons) if node.daemons else daemons_file(["zebra", "bgpd"])
        return {"frr.conf": userfile.read_text(node.frr_conf), "daemons": daemons}
    return {}


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (embedded files, topologies) as literal blocks, everything else as usual."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_representer)


def dump_yaml(doc: Any) -> str:
    """YAML in the order the dict was built, multi-line strings as `|` blocks."""
    return yaml.dump(doc, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False, width=120,
                     allow_unicode=True)


def _mgmt_addresses(plan: Plan, subnet: str | None) -> dict[str, str]:
    """A static management address per node, from .2 on (containerlab gives .1 to the bridge)."""
    if subnet is None:
        return {}
    try:
        net = ipaddress.IPv4Network(subnet)
    except ValueError as exc:
        raise TwinError(f"management subnet '{subnet}': {exc}; give an IPv4 prefix such as 172.30.1.0/24") from None
    if net.num_addresses - 3 < len(plan.nodes):
        raise TwinError(f"management subnet {net} holds {max(net.num_addresses - 3, 0)} node addresses, "
                        f"the lab has {len(plan.nodes)} nodes; give a larger prefix")
    return {node.name: str(net.network_address + 2 + i) for i, node in enumerate(plan.nodes)}
