"""Import a containerlab topology file (.clab.yml) into twin's normalized Topology.

What is imported, node by node (settings merge as containerlab merges them: the node overrides
its group, which overrides its kind's entry under `topology.kinds`, which overrides
`topology.defaults`; `exec` lines and `binds` accumulate, a bind on the same container path
replaced by the more specific level):

- kind `linux` with a file bound on /etc/frr/frr.conf (or a folder bound on /etc/frr): a router
  that runs the user's own FRR (`frr_conf`, plus `daemons` when one is bound);
- kind `sonic-vs`: a SONiC switch. Its role comes from the links, not from its name: a switch that
  a host reaches (a link to a plain `linux` node) is a leaf; one whose neighbours are all switches,
  that no host reaches and that links to at least one leaf is a spine; any other is a leaf (so a lab
  with no hosts at all imports every switch as a leaf). A label `twin-role: spine|leaf|router` (or
  `role: spine|leaf|router`) on the node, its group, kind or the defaults overrides the inference.
  Its containerlab data ports ethN become SONiC's
  Ethernet{4*(N-1)}; eth0 is its management port. A config_db.json bound at
  /etc/sonic/config_db.json (how SONiC users give the kind its config: containerlab ignores
  `startup-config` for it) or at /var/sonic/config_db.json (which docker-sonic-vs's start.sh copies
  over it since 2026-03, and where `twin export clab` binds it), or a folder bound at /var/sonic
  holding one, is that switch's config (`config_db`): twin runs it as it is, on every runtime, and
  plans nothing of its own for that switch (see bound_config.py). Without one, twin renders the
  switch's config from its plan. When twin itself hands such a lab to containerlab, the file is
  bound at /var/sonic and copied in (twin/runtime/clab/topology.py says why a bind at /etc/sonic fails);
- any other `linux` node: a host, with its `exec:` lines.

Links are veth links between nodes, in the short form (`endpoints: ["a:eth1", "b:eth1"]`) or
the extended one (`type: veth` with `{node:, interface:}` endpoints). Every mistake becomes a
Problem that names the file and line; all of them are raised together in one PlanError. Bound
files that do not exist are recorded as they are; validate.py reports them, and bound_config.py
refuses those that lie outside the topology's folder (twin.host.userfile).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twin.model.errors import PlanError, Problem
from twin.model.topology import NAME_PATTERN, Endpoint, FabricSettings, Link, Node, Role, Topology
from twin.stages.load.bound_config import PERSISTENT_CONFIG, PERSISTENT_DIR, SONIC_CONFIG
from twin.stages.load.source import Loc, YamlDoc

SUPPORTED_KINDS: tuple[str, ...] = ("linux", "sonic-vs")
FRR_DIR = "/etc/frr"
FRR_CONF = f"{FRR_DIR}/frr.conf"
FRR_DAEMONS = f"{FRR_DIR}/daemons"
SONIC_ROLES: tuple[Role, ...] = ("spine", "leaf", "router")
NAME_MAX = 40  # as TopologyFile.name
# Endpoint "nodes" that containerlab reserves for links to the container host.
SPECIAL_ENDPOINTS = frozenset({"host", "mgmt-net", "macvlan"})

_TOPO: Loc = ("topology",)
_CLAB_PORT = re.compile(r"^eth(\d+)$")
_SONIC_PORT = re.compile(r"^Ethernet\d+$")


@dataclass(frozen=True)
class _Layer:
    """One level of a node's settings (defaults, kind, group or the node itself) and where it is."""

    loc: Loc
    data: dict[str, Any]


@dataclass(frozen=True)
class _Bind:
    host: str
    container: str
    loc: Loc


def import_clab(doc: YamlDoc) -> Topology:
    """Turn a parsed .clab.yml into a Topology; raise one PlanError listing every problem."""
    return _Importer(doc).run()


def sonic_iface(clab_iface: str) -> str | None:
    """SONiC's name of containerlab's sonic-vs port `ethN` (eth1 -> Ethernet0); None for eth0."""
    m = _CLAB_PORT.match(clab_iface)
    if not m or int(m.group(1)) == 0:
        return None
    return f"Ethernet{4 * (int(m.group(1)) - 1)}"


class _Importer:
    def __init__(self, doc: YamlDoc) -> None:
        self.doc = doc
        self.base = doc.path.parent
        self.problems: list[Problem] = []
        self.topo = self._mapping(doc.data.get("topology"), _TOPO)
        topo = self.topo
        self.defaults = self._mapping(topo.get("defaults"), (*_TOPO, "defaults"))
        self.kinds = self._mapping(topo.get("kinds"), (*_TOPO, "kinds"))
        self.groups = self._mapping(topo.get("groups"), (*_TOPO, "groups"))
        self.kind_of_node: dict[str, str] = {}
        self.unlabelled: set[str] = set()  # sonic-vs nodes no label gives a role: the links decide

    # -- helpers ---------------------------------------------------------------------------

    def add(self, loc: Loc, message: str, fix: str = "") -> None:
        self.problems.append(self.doc.problem(loc, message, fix))

    def _mapping(self, value: Any, loc: Loc) -> dict[str, Any]:
        if value is None:
            return {}
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}
        self.add(loc, f"expected a mapping, got {type(value).__name__}", "write it as 'key: value' lines")
        return {}

    def _string(self, layer: _Layer, key: str) -> str | None:
        value = layer.data.get(key)
        if value is None or value == "":
            return None
        if isinstance(value, str):
            return value
        self.add((*layer.loc, key), f"expected a string, got {type(value).__name__}", "correct the value")
        return None

    def _strings(self, layer: _Layer, key: str) -> list[tuple[str, Loc]]:
        value = layer.data.get(key)
        loc = (*layer.loc, key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(loc, "expected a list of strings", "write one '- item' line per entry")
            return []
        return [(v, (*loc, i)) for i, v in enumerate(value)]

    def _sub_layer(self, section: str, table: dict[str, Any], key: str | None) -> _Layer | None:
        if not key or key not in table:
            return None
        loc = (*_TOPO, section, key)
        return _Layer(loc, self._mapping(table[key], loc))

    # -- nodes -----------------------------------------------------------------------------

    def _kind_of(self, node: _Layer) -> tuple[str | None, Loc]:
        """containerlab's order: node, the node's group, the defaults' group, the defaults."""
        defaults = _Layer((*_TOPO, "defaults"), self.defaults)
        candidates = [node]
        group = self._sub_layer("groups", self.groups, self._string(node, "group"))
        if group:
            candidates.append(group)
        default_group = self._sub_layer("groups", self.groups, self._string(defaults, "group"))
        if default_group:
            candidates.append(default_group)
        candidates.append(defaults)
        for layer in candidates:
            kind = self._string(layer, "kind")
            if kind:
                return kind, (*layer.loc, "kind")
        return None, node.loc

    def _layers(self, node: _Layer, kind: str) -> list[_Layer]:
        """The node's settings from the least to the most specific level."""
        defaults = _Layer((*_TOPO, "defaults"), self.defaults)
        kind_layer = self._sub_layer("kinds", self.kinds, kind)
        group_name = self._string(node, "group")
        if group_name is None and kind_layer is not None:
            group_name = self._string(kind_layer, "group")
        if group_name is None:
            group_name = self._string(defaults, "group")
        group_layer = self._sub_layer("groups", self.groups, group_name)
        return [layer for layer in (defaults, kind_layer, group_layer, node) if layer is not None]

    def _binds(self, layers: list[_Layer]) -> dict[str, _Bind]:
        binds: dict[str, _Bind] = {}
        for layer in layers:
            for text, loc in self._strings(layer, "binds"):
                parts = text.split(":")
                if len(parts) not in (2, 3) or not all(parts) or not parts[1].startswith("/"):
                    self.add(loc, f"bind '{text}' is not of the form host:container[:mode]",
                             "write it as host-path:container-path, e.g. router1/frr.conf:/etc/frr/frr.conf")
                    continue
                container = parts[1].rstrip("/") or "/"
                binds[container] = _Bind(host=parts[0], container=container, loc=loc)
        return binds

    def _host_path(self, host: str) -> Path:
        path = Path(host).expanduser()
        return path if path.is_absolute() else self.base / path

    def _frr_files(self, binds: dict[str, _Bind]) -> tuple[Path | None, Path | None]:
        frr_conf = daemons = None
        folder = binds.get(FRR_DIR)
        if folder is not None:
            frr_dir = self._host_path(folder.host)
            frr_conf = frr_dir / "frr.conf"
            if (frr_dir / "daemons").exists():
                daemons = frr_dir / "daemons"
        if FRR_CONF in binds:
            frr_conf = self._host_path(binds[FRR_CONF].host)
        if FRR_DAEMONS in binds:
            daemons = self._host_path(binds[FRR_DAEMONS].host)
        return frr_conf, daemons

    def _sonic_config(self, binds: dict[str, _Bind]) -> Path | None:
        """The config_db.json a sonic-vs node boots: /var/sonic's copy wins, as start.sh copies it last.
        Absolute, since a running lab reads it again (`twin push` compares with it)."""
        for target in (PERSISTENT_CONFIG, SONIC_CONFIG):
            if target in binds:
                return self._host_path(binds[target].host).absolute()
        if PERSISTENT_DIR in binds:
            return (self._host_path(binds[PERSISTENT_DIR].host) / "config_db.json").absolute()
        return None

    def _sonic_role(self, name: str, labels: dict[str, tuple[str, Loc]]) -> Role | None:
        """The role a label gives a sonic-vs node; None when no label does (the links decide)."""
        if "twin-role" in labels:
            value, loc = labels["twin-role"]
            for role in SONIC_ROLES:
                if value == role:
                    return role
            self.add(loc, f"label twin-role '{value}' on {name} is not one of {', '.join(SONIC_ROLES)}",
                     "set twin-role to spine, leaf or router")
            return "leaf"
        if "role" in labels:
            value = labels["role"][0]
            for role in SONIC_ROLES:
                if value == role:
                    return role
        return None

    def _labels(self, layers: list[_Layer]) -> dict[str, tuple[str, Loc]]:
        labels: dict[str, tuple[str, Loc]] = {}
        for layer in layers:
            loc = (*layer.loc, "labels")
            for key, value in self._mapping(layer.data.get("labels"), loc).items():
                labels[key] = (str(value), (*loc, key))
        return labels

    def _node(self, name: str, raw: Any) -> tuple[Node, str] | None:
        """The node (with index 0, numbered later) and its containerlab kind."""
        loc = (*_TOPO, "nodes", name)
        if raw is not None and not isinstance(raw, dict):
            self._mapping(raw, loc)  # one problem: the node's settings are not a mapping
            return None
        node = _Layer(loc, self._mapping(raw, loc))
        kind, kind_loc = self._kind_of(node)
        if kind is None:
            self.add(loc, "node has no kind", "set 'kind:' on the node, its group or topology.defaults")
            return None
        if kind not in SUPPORTED_KINDS:
            self.add(kind_loc, f"kind '{kind}' of node {name} is not supported",
                     f"twin imports kinds {' and '.join(SUPPORTED_KINDS)}")
            return None
        layers = self._layers(node, kind)
        image = next((i for i in (self._string(layer, "image") for layer in reversed(layers)) if i), None)
        exec_lines: list[str] = []
        for layer in layers:
            exec_lines += [line for line, _ in self._strings(layer, "exec") if line not in exec_lines]
        binds = self._binds(layers)
        labels = self._labels(layers)
        if kind == "sonic-vs":
            role = self._sonic_role(name, labels)
            if role is None:
                self.unlabelled.add(name)
            return Node(name=name, role=role or "leaf", index=0, image=image, exec=exec_lines,
                        config_db=self._sonic_config(binds)), kind
        frr_conf, daemons = self._frr_files(binds)
        if frr_conf is not None:
            return Node(name=name, role="router", index=0, image=image, frr_conf=frr_conf,
                        daemons=daemons, exec=exec_lines), kind
        return Node(name=name, role="host", index=0, image=image, exec=exec_lines), kind

    # -- links -----------------------------------------------------------------------------

    def _endpoint(self, item: Any, loc: Loc, extended: bool) -> Endpoint | None:
        if extended:
            if (not isinstance(item, dict) or not isinstance(item.get("node"), str)
                    or not isinstance(item.get("interface"), str)):
                self.add(loc, "a veth endpoint needs 'node:' and 'interface:'",
                         "write it as {node: router1, interface: eth1}")
                return None
            node, iface = item["node"].strip(), item["interface"].strip()
            text = f"{node}:{iface}"
        else:
            text = item if isinstance(item, str) else repr(item)
            node, _, iface = text.partition(":") if isinstance(item, str) else ("", "", "")
        if not node or not iface or re.search(r"\s", text):
            self.add(loc, f"endpoint '{text}' is not of the form node:interface",
                     "write it as node:interface, e.g. router1:eth1")
            return None
        if node in SPECIAL_ENDPOINTS and node not in self.kind_of_node:
            self.add(loc, f"endpoint '{text}' attaches to the container host, not to a node",
                     "twin imports links between nodes only; remove this link")
            return None
        if self.kind_of_node.get(node) == "sonic-vs" and not _SONIC_PORT.match(iface):
            sonic = sonic_iface(iface)
            if sonic is None:
                if iface == "eth0":
                    self.add(loc, f"eth0 is the management port of sonic-vs node {node} and cannot carry a "
                             "link", "use eth1 and up (eth1 is Ethernet0)")
                else:
                    self.add(loc, f"interface '{iface}' of sonic-vs node {node} is not a containerlab "
                             "port name", "use eth1, eth2, ... (eth1 is Ethernet0, eth2 is Ethernet4)")
                return None
            iface = sonic
        return Endpoint(node=node, iface=iface)

    def _link(self, i: int, raw: Any) -> Link | None:
        loc = (*_TOPO, "links", i)
        if not isinstance(raw, dict):
            self.add(loc, "expected a mapping with 'endpoints:'",
                     "write the link as endpoints: [a:eth1, b:eth1]")
            return None
        link_type = raw.get("type")
        if link_type is not None and link_type != "veth":
            self.add((*loc, "type"), f"link type '{link_type}' is not supported",
                     "twin imports veth links between nodes (type: veth, or the short 'endpoints:' form)")
            return None
        endpoints = raw.get("endpoints")
        if not isinstance(endpoints, list) or len(endpoints) != 2:
            got = len(endpoints) if isinstance(endpoints, list) else "none"
            self.add((*loc, "endpoints"), f"a link needs 2 endpoints, got {got}",
                     "list both ends: endpoints: [a:eth1, b:eth1]")
            return None
        ends = [self._endpoint(item, (*loc, "endpoints", j), link_type == "veth")
                for j, item in enumerate(endpoints)]
        a, b = ends
        if a is None or b is None:
            return None
        return Link(a=a, b=b, line=self.doc.line_of(loc))

    # -- the whole file --------------------------------------------------------------------

    def _lab_name(self) -> str:
        name = self.doc.data.get("name")
        if name is None:
            self.add(("name",), "required field is missing", "add 'name:' with the lab's name")
            return ""
        name = str(name)
        if not re.match(NAME_PATTERN, name) or len(name) > NAME_MAX:
            self.add(("name",), f"lab name '{name}' must start with a letter, use only letters, digits, "
                     f"'-' and '_', and be at most {NAME_MAX} characters", "rename the lab")
        return name

    def run(self) -> Topology:
        name = self._lab_name()
        raw_nodes = self._mapping(self.topo.get("nodes"), (*_TOPO, "nodes"))
        if not raw_nodes and isinstance(self.topo.get("nodes"), dict | None):  # else: not a mapping, said above
            self.add((*_TOPO, "nodes"), "a containerlab topology needs nodes",
                     "add nodes under 'topology.nodes:'")
        nodes: list[Node] = []
        for node_name, raw in raw_nodes.items():
            imported = self._node(node_name, raw)
            if imported is None:
                continue
            node, kind = imported
            nodes.append(node)
            self.kind_of_node[node_name] = kind
        raw_links = self.topo.get("links") or []
        links: list[Link] = []
        if not isinstance(raw_links, list):
            self.add((*_TOPO, "links"), "expected a list of links", "write one '- endpoints: [...]' per link")
            raw_links = []
        for i, raw in enumerate(raw_links):
            link = self._link(i, raw)
            if link is not None:
                links.append(link)
        if self.problems:
            # Settings shared by several nodes (defaults, kinds, groups) are read once per node.
            raise PlanError(list(dict.fromkeys(self.problems)))
        roles = infer_roles({n.name: n.role for n in nodes},
                            {n for n, k in self.kind_of_node.items() if k == "sonic-vs"}, self.unlabelled, links)
        counters: dict[str, int] = {}
        numbered = []
        for node in nodes:  # numbered per role in file order, once every role is known
            role = roles[node.name]
            counters[role] = counters.get(role, 0) + 1
            numbered.append(node.model_copy(update={"role": role, "index": counters[role]}))
        return Topology(name=name, kind="clab", source=self.doc.name, fabric=FabricSettings(),
                        nodes=numbered, links=links)


def infer_roles(roles: dict[str, Role], sonic: set[str], unlabelled: set[str],
                links: list[Link]) -> dict[str, Role]:
    """Every node's role, the `unlabelled` sonic-vs switches' from their links: a switch a host
    reaches is a leaf; one whose neighbours are all sonic-vs switches, that no host reaches and that
    links to a leaf (reached by a host or labelled so) is a spine; any other stays a leaf. `roles`
    holds every node's imported role ('leaf' for the unlabelled)."""
    neighbours: dict[str, set[str]] = {name: set() for name in roles}
    for link in links:
        if link.a.node in roles and link.b.node in roles:
            neighbours[link.a.node].add(link.b.node)
            neighbours[link.b.node].add(link.a.node)
    reached = {name for name in sonic if any(roles[p] == "host" for p in neighbours[name])}
    leaves = reached | {name for name in sonic - unlabelled if roles[name] == "leaf"}
    out = dict(roles)
    for name in unlabelled:
        peers = neighbours[name]
        if name not in reached and peers and peers <= sonic and peers & leaves:
            out[name] = "spine"
    return out
