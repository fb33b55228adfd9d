"""Export a twin plan as a containerlab topology, and drive containerlab itself.

The exported lab runs the same fabric as the netns runtime, one container per node:

- switches, kind `linux`: twin's FRR image; inside, the interfaces keep the plan's kernel names
  (Ethernet0, ...). The rendered frr.conf, FRR `daemons` file and config_db.json are bound in,
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
  copied in by `exec:` lines (runtime/sonic_vs.py clab_exec), which containerlab runs after the
  kind's post-deploy step has launched supervisord: wait until configdb-load.sh has set
  CONFIG_DB_INITIALIZED (start.sh is then done with /etc/sonic/config_db.json), `cp` the file
  there (so a later `config reload` or `config save` works on it), `config load -y` it (a merge,
  as SONiC users load a config) and start the linked ports. Copying before start.sh reads the
  file would race with supervisord, which starts start.sh without containerlab waiting for it.
  Images built since March 2026 copy /var/sonic/config_db.json in themselves before the merge, so
  there the config is in CONFIG_DB from the first load and the exec lines repeat it harmlessly.
  The config is the switch's own when it brings one (an imported sonic-vs node's bound file),
  else twin's rendering of the plan (render.config_db.node_config_db);
- routers imported from a .clab.yml: kind `linux`, their own frr.conf and daemons bound in;
- servers: kind `linux`, with `exec:` lines that set their addresses, per-NIC routing tables
  and routes, the `ip` commands the netns runtime runs in a batch.

Bind paths are relative to the topology file, as containerlab resolves them, so the topology
and its `<lab>-files/` folder move together. Before anything is written, the topology is
validated against containerlab's JSON schema when one is found (TWIN_CLAB_SCHEMA, or
containerlab/clab.schema.json in the reference folder, twin.host.reference); without one, validation is
skipped and callers say so. The bound files go only into a new or empty folder or one an earlier
export wrote (twin.host.owned): nothing else in it is overwritten or removed.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import yaml
from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT7

from twin import __version__
from twin.host import userfile
from twin.host.owned import write_owned
from twin.host.reference import reference_path
from twin.kinds.host import HOST_SYSCTLS, SWITCH_SYSCTLS, server_lines
from twin.kinds.sonic_vs import clab_exec, sonic_vs_iface
from twin.model.errors import TwinError
from twin.model.plan import NodePlan, Plan
from twin.stages.load.bound_config import PERSISTENT_CONFIG
from twin.stages.render.config_db import dumps, node_config_db
from twin.stages.render.frr import render_frr
from twin.switch.frr_daemons import KNOWN, switch_daemons
from twin.switch.kernel import kernel_lines

ClabKind = Literal["linux", "sonic-vs"]
CLAB_KINDS: tuple[ClabKind, ...] = ("linux", "sonic-vs")

SWITCH_REPOSITORY = "twin-switch"  # the locally built FRR image (twin.runtime.image)
SONIC_VS_IMAGE = "docker-sonic-vs:latest"
CLAB_IMAGE = "ghcr.io/srl-labs/clab"
FRR_INIT = "/usr/lib/frr/frrinit.sh"
IFNAME_MAX = 15              # Linux IFNAMSIZ (16) minus the terminating NUL
SCHEMA_ENV = "TWIN_CLAB_SCHEMA"
SCHEMA_REL = "containerlab/clab.schema.json"  # inside the reference folder (twin.host.reference)
MESSAGE_MAX = 200            # schema messages quote whole enums; keep each line readable
GENERATED_NOTE = "written by twin export; regenerate rather than edit"

# Where each bound file goes inside a node's container, per kind of node.
_LINUX_SWITCH_BINDS = {"frr.conf": "/etc/frr/frr.conf", "daemons": "/etc/frr/daemons",
                       "config_db.json": "/etc/sonic/config_db.json:ro"}
# Not /etc/sonic/config_db.json: docker-sonic-vs's start.sh `mv`s a merged file over that one (see above).
_SONIC_BINDS = {"config_db.json": f"{PERSISTENT_CONFIG}:ro"}
_ROUTER_BINDS = {"frr.conf": "/etc/frr/frr.conf", "daemons": "/etc/frr/daemons"}

_IFNAME = re.compile(r"^[^\s:/]+$")
# The schema's rule for a short-form endpoint. It sits under `prefixItems`, which draft-07 (the
# schema's dialect) does not know, so validate_clab applies it itself.
_ENDPOINT = re.compile(r"^\S+:\S+$")
# Python's re has no Unicode property classes: \w (letters, digits, underscore) stands in.
_UNICODE_CLASS = re.compile(r"\\p\{[A-Za-z_]+\}")


def default_image(kind: ClabKind) -> str:
    """The image a switch of this kind runs unless told otherwise."""
    return f"{SWITCH_REPOSITORY}:{__version__}" if kind == "linux" else SONIC_VS_IMAGE


def linux_image(kind: ClabKind, image: str, host_image: str | None = None) -> str:
    """The image of servers and imported routers: `host_image`, else the switch image when it is
    twin's (kind linux), else twin's FRR image (docker-sonic-vs cannot serve as a Linux host)."""
    return host_image or (image if kind == "linux" else default_image("linux"))


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
    if kind == "sonic-vs" and node.kind == "switch":
        return sonic_vs_iface(port)
    return node.iface(port).kernel


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
    binds = [f"{files_dir}/{node.name}/{name}:{target}" for name, target in bind_targets(node, kind).items()]
    entry: dict[str, Any] = {"kind": "linux", "image": hosts_image, "labels": {"twin-role": node.role}}
    if node.kind == "switch" and kind == "sonic-vs":
        lines = clab_exec(node, node_config_db(plan, node))
        entry.update(kind="sonic-vs", image=image, exec=lines + [x for x in node.exec if x not in lines])
    elif node.kind == "switch":
        entry.update(image=image, exec=switch_exec(plan, node))
    elif node.kind == "router":
        entry["exec"] = router_exec(node)
    else:
        entry["exec"] = host_exec(node)
    if binds:
        entry["binds"] = binds
    return entry


def bind_targets(node: NodePlan, kind: ClabKind) -> dict[str, str]:
    """File name -> where it is bound inside the node's container (with `:ro` when read-only)."""
    if node.kind == "switch":
        return dict(_SONIC_BINDS if kind == "sonic-vs" else _LINUX_SWITCH_BINDS)
    if node.kind == "router":
        return dict(_ROUTER_BINDS)
    return {}


# -- what runs inside the containers ------------------------------------------------------------

def sysctl_commands(values: Mapping[str, str]) -> list[str]:
    """One `sysctl -w` per setting, so containerlab's log names the one that failed."""
    return [f"sysctl -w {key}={value}" for key, value in values.items()]


def ip_commands(batch: list[str]) -> list[str]:
    """`ip -b` batch lines as separate `ip` commands (containerlab runs exec lines without a shell)."""
    return [f"ip {line}" for line in batch]


def switch_exec(plan: Plan, node: NodePlan) -> list[str]:
    """Sysctls, then ports and addresses from config_db.json, then FRR (which needs the loopback)."""
    db = node_config_db(plan, node)
    ifmap = {i.name: i.kernel for i in node.interfaces}
    return [*sysctl_commands(SWITCH_SYSCTLS), *ip_commands(kernel_lines(db, ifmap)), f"{FRR_INIT} start"]


def router_exec(node: NodePlan) -> list[str]:
    """An imported router: its FRR config holds its addresses; the links only need to be up."""
    links = ["link set dev lo up", *(f"link set dev {i.kernel} up" for i in node.interfaces)]
    return [*sysctl_commands(SWITCH_SYSCTLS), *ip_commands(links), f"{FRR_INIT} start"]


def host_exec(node: NodePlan) -> list[str]:
    """A server: twin's per-NIC addressing, or the `exec:` lines a host imported from containerlab had."""
    if node.exec:
        links = ["link set dev lo up", *(f"link set dev {i.kernel} up" for i in node.interfaces)]
        return [*sysctl_commands(HOST_SYSCTLS), *ip_commands(links), *node.exec]
    return [*sysctl_commands(HOST_SYSCTLS), *ip_commands(server_lines(node))]


def daemons_file(daemons: list[str]) -> str:
    """An FRR 8.4 `daemons` file (Debian's layout) enabling `daemons`; zebra and staticd always run."""
    enabled = set(daemons)
    listed = [d for d in KNOWN if d not in ("zebra", "staticd")]
    lines = [f"# FRR daemons, {GENERATED_NOTE}. zebra and staticd always run.", ""]
    lines += [f"{d}={'yes' if d in enabled else 'no'}" for d in listed]
    lines += ["", "vtysh_enable=yes", 'zebra_options="  -A 127.0.0.1 -s 16777216"',
              'staticd_options="-A 127.0.0.1"']
    lines += [f'{d}_options="-A 127.0.0.1"' for d in listed if d in enabled]
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
        if kind == "linux":
            files["frr.conf"] = render_frr(db)
            files["daemons"] = daemons_file(switch_daemons(plan.fabric.bfd.enabled))
        return files
    if node.kind == "router":
        if node.frr_conf is None:
            raise TwinError(f"{node.name}: an imported router without an frr.conf cannot be exported")
        daemons = userfile.read_text(node.daemons) if node.daemons else daemons_file(["zebra", "bgpd"])
        return {"frr.conf": userfile.read_text(node.frr_conf), "daemons": daemons}
    return {}


def files_dir_name(lab: str) -> str:
    """The folder beside the topology file that holds the bound files."""
    return f"{lab}-files"


def write_clab(plan: Plan, out: Path, *, kind: ClabKind, image: str, host_image: str | None = None,
               mgmt_subnet: str | None = None, lab_name: str | None = None) -> list[Path]:
    """Write the topology to `out` and the files it binds to `<out dir>/<lab>-files/`.

    The topology is validated first (when a schema is found): nothing is written when it is
    invalid, nor when `<lab>-files/` holds files twin did not write (twin.host.owned). `out` itself,
    the file the user named, is replaced. Returns the files written, the topology first.
    """
    lab = lab_name or plan.name
    rel = files_dir_name(lab)
    doc = clab_topology(plan, kind=kind, image=image, files_dir=rel, mgmt_subnet=mgmt_subnet, lab_name=lab,
                        host_image=host_image)
    errors = validate_clab(doc)
    if errors:
        raise TwinError(f"the generated containerlab topology does not validate against {find_clab_schema()}:\n"
                        + "\n".join(errors))
    files = node_files(plan, kind)
    if out.is_dir():
        raise TwinError(f"{out} is a folder: name the .clab.yml file to write (the bound files go beside it)")
    written = write_owned(out.parent / rel, files, "twin export clab", prune=True)
    out.write_text(f"# containerlab topology of {plan.name}, {GENERATED_NOTE}.\n"
                   f"# Deploy: containerlab deploy -t {out.name}\n" + dump_yaml(doc))
    return [out, *written]


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


# -- schema validation --------------------------------------------------------------------------

def find_clab_schema() -> Path | None:
    """containerlab's JSON schema: TWIN_CLAB_SCHEMA, else containerlab/clab.schema.json in the
    reference folder ($TWIN_SONIC_REFERENCE, else $XDG_DATA_HOME/twin/reference)."""
    explicit = os.environ.get(SCHEMA_ENV)
    candidate = Path(explicit) if explicit else reference_path(SCHEMA_REL)
    return candidate if candidate is not None and candidate.is_file() else None


def schema_found() -> bool:
    """Whether validate_clab has a schema to validate against (otherwise it returns [])."""
    return find_clab_schema() is not None


def validate_clab(doc: dict[str, Any]) -> list[str]:
    """Every way `doc` breaks containerlab's schema, one line each; [] when valid or no schema is found."""
    path = find_clab_schema()
    if path is None:
        return []
    validator = _validator(str(path))
    try:
        errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    except Unresolvable as exc:
        raise TwinError(f"{path}: {exc}; only references inside the schema are followed (nothing is fetched)") from None
    return [line for e in errors for line in _describe(e)] + _endpoint_problems(doc)


@functools.cache
def _validator(path: str) -> Validator:
    """A validator for the schema at `path`, offline: a `$ref` to anything but the schema is not fetched."""
    try:
        schema = _python_patterns(json.loads(Path(path).read_text()))
    except (OSError, json.JSONDecodeError) as exc:
        raise TwinError(f"containerlab schema {path} cannot be read: {exc}") from None
    cls = validator_for(schema, default=Draft7Validator)
    resource: Resource[Any] = Resource.from_contents(schema, default_specification=DRAFT7)
    registry: Registry[Any] = Registry().with_resource(schema.get("$id", Path(path).as_uri()), resource)
    return cls(schema, registry=registry)


def _python_patterns(node: Any) -> Any:
    """The schema with its regexes rewritten for Python's re (no \\p{...} classes there)."""
    if isinstance(node, list):
        return [_python_patterns(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and isinstance(value, str):
            out[key] = _UNICODE_CLASS.sub(r"\\w", value)
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {_UNICODE_CLASS.sub(r"\\w", k): _python_patterns(v) for k, v in value.items()}
        else:
            out[key] = _python_patterns(value)
    return out


def _describe(error: ValidationError) -> list[str]:
    """`path: message` lines; for anyOf/oneOf failures, those of the branch the value came closest to."""
    if error.context:
        return [line for sub in _closest_branch(error) for line in _describe(sub)]
    where = "/".join(str(p) for p in error.absolute_path) or "(document)"
    message = error.message if len(error.message) <= MESSAGE_MAX else error.message[:MESSAGE_MAX - 3] + "..."
    return [f"{where}: {message}"]


def _closest_branch(error: ValidationError) -> list[ValidationError]:
    """The failed alternative that was meant: not one of another type; the fewest, then deepest, errors."""
    branches: dict[str | int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    depth = len(error.absolute_path)

    def other_type(errs: list[ValidationError]) -> bool:
        return all(e.validator == "type" and len(e.absolute_path) == depth for e in errs)

    candidates = [errs for errs in branches.values() if not other_type(errs)] or list(branches.values())
    return min(candidates, key=lambda errs: (len(errs), -max(len(e.absolute_path) for e in errs)))


def _endpoint_problems(doc: dict[str, Any]) -> list[str]:
    topology = doc.get("topology")
    links = topology.get("links") if isinstance(topology, dict) else None
    problems = []
    for i, link in enumerate(links if isinstance(links, list) else []):
        ends = link.get("endpoints") if isinstance(link, dict) else None
        for j, end in enumerate(ends if isinstance(ends, list) else []):
            if isinstance(end, str) and not _ENDPOINT.match(end):
                problems.append(f"topology/links/{i}/endpoints/{j}: '{end}' does not match '{_ENDPOINT.pattern}' "
                                "(node:interface)")
    return problems


# -- `containerlab inspect --format json` -------------------------------------------------------

class InspectedNode(TypedDict):
    container: str
    image: str
    kind: str
    state: str
    mgmt_ipv4: str | None
    pid: NotRequired[int]


def clab_inspect_nodes(json_text: str) -> dict[str, InspectedNode]:
    """Node name -> container facts, from `containerlab inspect --format json`.

    Reads the list form of older releases (`{"containers": [...]}`, or a bare list) and the form
    keyed by lab name of newer ones (`{"<lab>": [...]}`). The node name is the `clab-node-name`
    label when present, else the container name without containerlab's `clab-<lab>-` prefix.
    """
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise TwinError(f"containerlab inspect did not print JSON: {exc}") from None
    nodes: dict[str, InspectedNode] = {}
    for lab, entry in _inspect_entries(data):
        name, node = _inspected(lab, entry)
        nodes[name] = node
    return nodes


def _inspect_entries(data: Any) -> Iterator[tuple[str | None, dict[str, Any]]]:
    if isinstance(data, dict) and isinstance(data.get("containers"), list):
        groups: list[tuple[str | None, Any]] = [(None, data["containers"])]
    elif isinstance(data, list):
        groups = [(None, data)]
    elif isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        groups = [(str(lab), entries) for lab, entries in data.items()]
    else:
        raise TwinError("unrecognised containerlab inspect JSON: expected {\"containers\": [...]} "
                        "or {\"<lab>\": [...]}")
    for lab, entries in groups:
        for entry in entries:
            if not isinstance(entry, dict):
                raise TwinError(f"unrecognised containerlab inspect entry: {entry!r}")
            yield lab, entry


def _inspected(lab: str | None, entry: dict[str, Any]) -> tuple[str, InspectedNode]:
    container = str(entry.get("name") or entry.get("container_name") or "")
    lab = str(entry.get("lab_name") or lab or "")
    labels = entry.get("labels") or entry.get("Labels") or {}
    name = labels.get("clab-node-name") if isinstance(labels, dict) else None
    if not name:
        prefix = f"clab-{lab}-"
        name = container.removeprefix(prefix) if lab and container.startswith(prefix) else container
    node: InspectedNode = {"container": container, "image": str(entry.get("image") or ""),
                           "kind": str(entry.get("kind") or ""), "state": str(entry.get("state") or ""),
                           "mgmt_ipv4": _address(entry.get("ipv4_address"))}
    pid = entry.get("pid", entry.get("Pid"))
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
        node["pid"] = pid
    return str(name), node


def _address(value: Any) -> str | None:
    """`172.20.20.2/24` -> `172.20.20.2`; None for `N/A`, empty or anything that is not an address."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return str(ipaddress.ip_interface(value).ip)
    except ValueError:
        return None


# -- running containerlab -----------------------------------------------------------------------

def missing_message() -> str:
    """What to tell a user who has no containerlab."""
    return ("containerlab is not installed. Install it natively (bash -c \"$(curl -sL https://get.containerlab.dev)\", "
            "see https://containerlab.dev/install/) or pull its container image (docker pull "
            f"{CLAB_IMAGE}), which twin runs when the binary is absent. Meanwhile run the lab with "
            "'--runtime docker'.")


@dataclass(frozen=True)
class ClabCommand:
    """containerlab's command lines here: the native binary when installed, else its container image.

    The container form is containerlab's documented one, without `-it` (nothing is interactive):
    host network and PID namespace, the Docker socket, and the topology's folder mounted at the
    same path, so relative binds resolve to the same host paths for the Docker daemon.
    """

    image: str = CLAB_IMAGE

    def native(self) -> str | None:
        return shutil.which("containerlab")

    def image_present(self) -> bool:
        docker = shutil.which("docker")
        if docker is None:
            return False
        proc = subprocess.run([docker, "image", "inspect", self.image], capture_output=True, check=False)
        return proc.returncode == 0

    def available(self) -> bool:
        return self.native() is not None or self.image_present()

    def prefix(self, workdir: Path) -> list[str]:
        """The command that runs containerlab, ready for its arguments; TwinError when there is none."""
        native = self.native()
        if native is not None:
            return [native]
        if self.image_present():
            return self.container_prefix(workdir)
        raise TwinError(missing_message())

    def container_prefix(self, workdir: Path) -> list[str]:
        wd = str(workdir)
        return ["docker", "run", "--rm", "--privileged", "--network", "host",
                "-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", "/var/run/netns:/var/run/netns",
                "-v", "/etc/hosts:/etc/hosts", "-v", "/var/lib/docker/containers:/var/lib/docker/containers",
                "--pid=host", "-v", f"{wd}:{wd}", "-w", wd, self.image, "containerlab"]

    def deploy_argv(self, topo: Path) -> list[str]:
        """Deploy (`--reconfigure`: a lab left by an earlier run is replaced)."""
        path = topo.resolve()
        return [*self.prefix(path.parent), "deploy", "-t", str(path), "--reconfigure"]

    def destroy_argv(self, topo: Path) -> list[str]:
        """Destroy and remove containerlab's lab directory (`clab-<lab>/`); the bound files stay."""
        path = topo.resolve()
        return [*self.prefix(path.parent), "destroy", "-t", str(path), "--cleanup"]

    def inspect_argv(self, topo: Path) -> list[str]:
        path = topo.resolve()
        return [*self.prefix(path.parent), "inspect", "-t", str(path), "--format", "json"]
