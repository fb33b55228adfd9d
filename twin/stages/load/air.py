"""NVIDIA Air topologies in and out: its JSON (`{"nodes": {...}, "links": [[{node, interface}, {node, interface}]]}`,
bare or inside Air's export envelope `{"format": "JSON", "title": ..., "content": {...}}`) and its DOT
(`"leaf01" [function="leaf" os="..."]`, `"leaf01":"swp1" -- "spine01":"swp1"`).

Reading makes an explicit twin Topology (kind "air"), which the loader validates like any other:

- a node's role comes from its `function` (spine, superspine -> spine; leaf, tor, exit, border -> leaf;
  server, host -> server; router -> router), else from its name (spine*, leaf*/tor*/*rail*, server*/host*/
  gpu*/compute*, router*), else from its `os`: a server OS (ubuntu, debian, ..., generic/...) makes a
  server; a switch OS (sonic, cumulus, nvos, ...) makes a leaf when the switch faces a server and a spine
  when it faces only leaves. Where none of these tells, the file, the node and the fix are named.
- Air's own management network and NetQ (oob-mgmt-server, oob-mgmt-switch, netq-ts, and functions
  oob-*/netq) are left out: twin gives every lab its own management network.
- A switch port swpN or ethN (N >= 1) is front-panel port N of twin's switch model (its SONiC name,
  Ethernet0, Ethernet4, ...); a SONiC name EthernetX is kept. eth0 is a management port and carries no
  link; breakout ports (swp1s0) and outbound links ("outbound", "exit") have no twin counterpart and are
  refused with the reason. A server's interfaces keep their names.
- pod and rail numbers are read from twin's own names (pod2-rail3, pod2-server1).

Writing takes a Plan: every node with its `os` (and its role as DOT's `function`), switch ports as
eth1, eth2, ... (front-panel port order: what a sonic-vs VM in Air calls them), servers' NICs by name.
Reading what twin wrote gives back every node, role and link, with the same port names.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twin.host import userfile
from twin.model.errors import PlanError, Problem
from twin.model.plan import Plan
from twin.model.topology import NAME_PATTERN, Endpoint, FabricSettings, Link, Node, Role, Topology

FUNCTION_ROLES: dict[str, Role] = {"spine": "spine", "superspine": "spine", "super-spine": "spine", "leaf": "leaf",
                                   "tor": "leaf", "exit": "leaf", "border": "leaf", "border-leaf": "leaf",
                                   "server": "server", "host": "server", "router": "router"}
SKIPPED_NAMES = frozenset({"oob-mgmt-server", "oob-mgmt-switch", "netq-ts"})
SKIPPED_FUNCTIONS = re.compile(r"^(oob|netq)", re.IGNORECASE)
NAME_ROLES: tuple[tuple[re.Pattern[str], Role], ...] = (
    (re.compile(r"spine|super", re.I), "spine"),
    (re.compile(r"leaf|^tor|rail", re.I), "leaf"),
    (re.compile(r"router|^rtr", re.I), "router"),
    (re.compile(r"server|host|gpu|compute|^pc\d*$|^h\d+$", re.I), "server"),
)
SERVER_OS = re.compile(r"ubuntu|debian|centos|rhel|rocky|alma|fedora|generic/|linux|windows", re.I)
SWITCH_OS = re.compile(r"sonic|cumulus|nvos|onie|eos|junos|nxos|sros|vx", re.I)
OUTBOUND = frozenset({"outbound", "exit"})
SWITCH_PORT = re.compile(r"^(?:swp|eth)(\d+)$")
SONIC_PORT = re.compile(r"^Ethernet\d+$")
POD_RAIL = re.compile(r"^pod(\d+)-rail(\d+)$")
POD_SERVER = re.compile(r"^pod(\d+)-server\d+$")
DEFAULT_SWITCH_OS = "sonic-vs-202305"
DEFAULT_SERVER_OS = "generic/ubuntu2404"


@dataclass
class AirNode:
    name: str
    attrs: dict[str, str]
    line: int | None = None


@dataclass
class AirLink:
    a: tuple[str, str]
    b: tuple[str, str]
    where: str              # "links.3" (JSON) or "line 12" (DOT), for messages
    line: int | None = None


@dataclass
class AirDoc:
    path: Path
    title: str
    nodes: dict[str, AirNode]
    links: list[AirLink]
    problems: list[Problem] = field(default_factory=list)


# -- detecting ------------------------------------------------------------------------------------------------------


def air_json_shape(data: Any) -> bool:
    """Whether parsed JSON is an Air topology: nodes and links at the top, or under Air's `content`."""
    if isinstance(data, dict) and isinstance(data.get("content"), dict):
        data = data["content"]
    return isinstance(data, dict) and isinstance(data.get("nodes"), dict) and isinstance(data.get("links"), list)


def read_air(path: Path) -> AirDoc | None:
    """The file parsed as an Air topology when it is one (a .dot file, or a .json file of Air's
    shape), reading it once; None when it is not one (then it is read as twin YAML)."""
    suffix = path.suffix.lower()
    if suffix == ".dot":
        return parse_dot(path, userfile.read_text(path))
    if suffix != ".json":
        return None
    try:
        data = userfile.read_json(path)
    except PlanError:
        return None   # unreadable or not JSON: the YAML loader says what is wrong with it
    return parse_json(path, data) if air_json_shape(data) else None


# -- reading JSON ---------------------------------------------------------------------------------------------------


def parse_json(path: Path, data: Any) -> AirDoc:
    title = data.get("title") if isinstance(data, dict) else None
    content = data["content"] if isinstance(data, dict) and isinstance(data.get("content"), dict) else data
    doc = AirDoc(path=path, title=str(title or path.stem), nodes={}, links=[])
    file = str(path)
    if not air_json_shape(content):
        doc.problems.append(Problem(file, "(document)", "not an NVIDIA Air topology: no 'nodes' object and 'links' "
                                    "list", 'write it as {"nodes": {"leaf01": {"os": "..."}}, "links": [[{"node": '
                                    '"leaf01", "interface": "swp1"}, {"node": "spine01", "interface": "swp1"}]]}'))
        return doc
    for name, raw in content["nodes"].items():
        if not isinstance(raw, dict):
            doc.problems.append(Problem(file, f"nodes.{name}", "a node is an object of settings",
                                        'write it as "leaf01": {"os": "sonic-vs-202305"}'))
            continue
        doc.nodes[str(name)] = AirNode(str(name), {str(k): str(v) for k, v in raw.items()
                                                   if isinstance(v, str | int | float | bool)})
    for i, raw in enumerate(content["links"]):
        where = f"links.{i}"
        if not isinstance(raw, list) or len(raw) != 2:
            doc.problems.append(Problem(file, where, "a link is a list of its two ends",
                                        'write it as [{"node": "leaf01", "interface": "swp1"}, {"node": "spine01", '
                                        '"interface": "swp1"}]'))
            continue
        ends = []
        for j, end in enumerate(raw):
            if isinstance(end, str) and end.lower() in OUTBOUND:
                doc.problems.append(Problem(file, f"{where}.{j}", f"an '{end}' link leaves the simulation for an "
                                            "outside network, which a twin lab has none of", "remove this link"))
            elif not isinstance(end, dict) or not isinstance(end.get("node"), str) \
                    or not isinstance(end.get("interface"), str):
                doc.problems.append(Problem(file, f"{where}.{j}", "a link end needs 'node' and 'interface'",
                                            'write it as {"node": "leaf01", "interface": "swp1"}'))
            else:
                ends.append((end["node"], end["interface"]))
        if len(ends) == 2:
            doc.links.append(AirLink(ends[0], ends[1], where))
    return doc


# -- reading DOT ----------------------------------------------------------------------------------------------------

_DOT_TOKEN = re.compile(r'''
    (?P<space>[ \t\r]+) | (?P<newline>\n) | (?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/) |
    (?P<string>"(?:[^"\\]|\\.)*") | (?P<edge>--|->) | (?P<id>[A-Za-z0-9_.\-/+]+) | (?P<symbol>[{}\[\]=:;,]) |
    (?P<bad>.)''', re.VERBOSE | re.DOTALL)


@dataclass
class _Tok:
    kind: str
    text: str
    line: int


def _dot_tokens(text: str) -> list[_Tok]:
    out, line = [], 1
    for m in _DOT_TOKEN.finditer(text):
        kind, value = m.lastgroup or "bad", m.group()
        if kind == "string":
            out.append(_Tok("id", value[1:-1].replace('\\"', '"'), line))
        elif kind in ("id", "edge", "symbol", "bad"):
            out.append(_Tok(kind, value, line))
        line += value.count("\n")
    return out


class _DotParser:
    def __init__(self, path: Path, text: str) -> None:
        self.path, self.toks, self.i = path, _dot_tokens(text), 0
        self.doc = AirDoc(path=path, title=path.stem, nodes={}, links=[])
        self.node_defaults: dict[str, str] = {}

    def problem(self, line: int | None, field_: str, message: str, fix: str) -> None:
        self.doc.problems.append(Problem(str(self.path), field_, message, fix, line))

    def peek(self, offset: int = 0) -> _Tok | None:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def at(self, text: str, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok is not None and tok.kind in ("symbol", "edge", "id") and tok.text == text

    def run(self) -> AirDoc:
        if self.at("strict"):
            self.take()
        head = self.peek()
        if head is None or head.kind != "id" or head.text not in ("graph", "digraph"):
            self.problem(head.line if head else 1, "(document)", "a DOT topology starts with 'graph NAME {'",
                         'write it as graph "lab" { "leaf01":"swp1" -- "spine01":"swp1" }')
            return self.doc
        self.take()
        if self.peek() is not None and self.peek().kind == "id":  # type: ignore[union-attr]
            self.doc.title = self.take().text
        if not self.at("{"):
            self.problem(head.line, "(document)", "expected '{' after the graph's name", "add '{' and a closing '}'")
            return self.doc
        self.take()
        while self.peek() is not None and not self.at("}"):
            self.statement()
        if self.peek() is None:
            self.problem(self.toks[-1].line if self.toks else 1, "(document)", "the graph has no closing '}'",
                         "add '}' at the end")
        return self.doc

    def skip_statement(self) -> None:
        while self.peek() is not None and not self.at(";") and not self.at("}"):
            line = self.take().line
            nxt = self.peek()
            if nxt is not None and nxt.line != line and not self.at("["):
                return

    def attrs(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if not self.at("["):
            return out
        start = self.take().line
        while self.peek() is not None and not self.at("]"):
            key = self.take()
            if key.kind == "symbol" and key.text in ",;":
                continue
            if key.kind != "id" or not self.at("="):
                self.problem(key.line, f"line {key.line}", f"'{key.text}' in an attribute list is not key=value",
                             'write attributes as [ function="leaf" os="sonic-vs-202305" ]')
                continue
            self.take()
            value = self.peek()
            if value is None or value.kind != "id":
                self.problem(key.line, f"line {key.line}", f"attribute {key.text} has no value", 'add ="value"')
                continue
            out[key.text] = self.take().text
        if self.peek() is None:
            self.problem(start, f"line {start}", "an attribute list has no closing ']'", "add ']'")
        else:
            self.take()
        return out

    def endpoint(self) -> tuple[str, str | None, int]:
        tok = self.take()
        port = None
        if self.at(":"):
            self.take()
            nxt = self.peek()
            if nxt is not None and nxt.kind == "id":
                port = self.take().text
        return tok.text, port, tok.line

    def statement(self) -> None:
        tok = self.peek()
        assert tok is not None
        if tok.kind in ("symbol",) and tok.text in ";,":
            self.take()
            return
        if tok.kind != "id":
            self.problem(tok.line, f"line {tok.line}", f"unexpected '{tok.text}'",
                         'write a node as "leaf01" [os="..."] and a link as "leaf01":"swp1" -- "spine01":"swp1"')
            self.take()
            return
        if tok.text in ("subgraph",):
            self.problem(tok.line, f"line {tok.line}", "subgraphs are not part of Air's topologies",
                         "list nodes and links at the top level")
            self.skip_statement()
            return
        if tok.text in ("node", "edge", "graph") and self.at("[", 1):
            self.take()
            attrs = self.attrs()
            if tok.text == "node":
                self.node_defaults.update(attrs)
            return
        if self.at("=", 1):          # a graph attribute: name = value
            self.take()
            self.take()
            if self.peek() is not None:
                self.take()
            return
        ends = [self.endpoint()]
        while self.peek() is not None and self.peek().kind == "edge":  # type: ignore[union-attr]
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind != "id":
                self.problem(tok.line, f"line {tok.line}", "a link has no second end", 'write "a":"swp1" -- "b":"swp1"')
                return
            ends.append(self.endpoint())
        attrs = self.attrs()
        if len(ends) == 1:
            name, _, line = ends[0]
            node = self.doc.nodes.setdefault(name, AirNode(name, dict(self.node_defaults), line))
            node.attrs.update(attrs)
            node.line = line
            return
        for (a, a_port, line), (b, b_port, _) in itertools.pairwise(ends):
            for name in (a, b):
                self.doc.nodes.setdefault(name, AirNode(name, dict(self.node_defaults), line))
            if a_port is None or b_port is None:
                self.problem(line, f"line {line}", f"the link {a} -- {b} does not name the interface on both ends",
                             f'write it as "{a}":"swp1" -- "{b}":"swp1"')
                continue
            self.doc.links.append(AirLink((a, a_port), (b, b_port), f"line {line}", line))


def parse_dot(path: Path, text: str) -> AirDoc:
    return _DotParser(path, text).run()


# -- to a twin Topology ---------------------------------------------------------------------------------------------


def _skipped(node: AirNode) -> bool:
    return node.name in SKIPPED_NAMES or bool(SKIPPED_FUNCTIONS.match(node.attrs.get("function", "")))


def _declared_role(node: AirNode, file: str) -> tuple[Role | None, Problem | None]:
    """The role the node's function or name gives; (None, None) when they say nothing."""
    function = node.attrs.get("function")
    if function:
        role = FUNCTION_ROLES.get(function.lower())
        if role is None:
            return None, Problem(file, f"nodes.{node.name}.function", f"function '{function}' is not one twin "
                                 f"knows", f"use one of {', '.join(sorted(FUNCTION_ROLES))}", node.line)
        return role, None
    for pattern, name_role in NAME_ROLES:
        if pattern.search(node.name):
            return name_role, None
    return None, None


def roles(doc: AirDoc) -> dict[str, Role]:
    """Every kept node's role (see the module); problems go to doc.problems."""
    file = str(doc.path)
    out: dict[str, Role] = {}
    undecided = []
    for node in doc.nodes.values():
        if _skipped(node):
            continue
        role, problem = _declared_role(node, file)
        if problem is not None:
            doc.problems.append(problem)
        elif role is not None:
            out[node.name] = role
        elif SERVER_OS.search(node.attrs.get("os", "")):
            out[node.name] = "server"
        else:
            undecided.append(node)
    neighbours: dict[str, set[str]] = {}
    for link in doc.links:
        neighbours.setdefault(link.a[0], set()).add(link.b[0])
        neighbours.setdefault(link.b[0], set()).add(link.a[0])
    for node in undecided:
        os_name = node.attrs.get("os", "")
        peers = neighbours.get(node.name, set())
        if SWITCH_OS.search(os_name) and peers:
            if any(out.get(p) == "server" for p in peers):
                out[node.name] = "leaf"
                continue
            if all(out.get(p) == "leaf" for p in peers):
                out[node.name] = "spine"
                continue
        said = f"os '{os_name}'" if os_name else "no os"
        doc.problems.append(Problem(file, f"nodes.{node.name}", f"cannot tell whether {node.name} is a spine, a leaf "
                                    f"or a server (no function, a name that says none of them, {said})",
                                    'give it function="spine" (or leaf, server, router) in DOT or "function" in JSON, '
                                    "or a name such as spine01, leaf01, server01", node.line))
    return out


def _switch_port(iface: str, node: str, fabric: FabricSettings) -> tuple[str | None, str]:
    """(twin's port name, problem text) for a switch interface of the Air file."""
    if SONIC_PORT.match(iface):
        if fabric.sku.number(iface) is None:
            return None, f"{iface} is not a port of twin's switch model {fabric.hwsku}"
        return iface, ""
    m = SWITCH_PORT.match(iface)
    if m is None:
        return None, (f"interface '{iface}' of switch {node} is not a front-panel port twin can map (swpN, ethN "
                      "or EthernetN; breakout ports such as swp1s0 have no counterpart)")
    number = int(m.group(1))
    if number == 0:
        return None, f"{iface} is the management port of switch {node} and carries no fabric link"
    if number > fabric.sku.fabric_ports:
        return None, f"{iface} is port {number}, but twin's switch model {fabric.hwsku} has {fabric.sku.fabric_ports}"
    return fabric.sku.port(number - 1).name, ""


def to_topology(doc: AirDoc) -> Topology:
    file = str(doc.path)
    role_of = roles(doc)
    fabric = FabricSettings()
    problems = doc.problems
    for name in role_of:
        if not re.match(NAME_PATTERN, name):
            problems.append(Problem(file, f"nodes.{name}", f"node name '{name}' does not suit twin: names start with "
                                    "a letter and use only letters, digits, '-' and '_'", "rename the node",
                                    doc.nodes[name].line))
    links, highest = [], 0
    for link in doc.links:
        if any(node in doc.nodes and _skipped(doc.nodes[node]) for node in (link.a[0], link.b[0])):
            continue   # a link to Air's management network or NetQ: twin brings its own
        ends = []
        for node, iface in (link.a, link.b):
            if node not in doc.nodes:
                problems.append(Problem(file, link.where, f"link to unknown node '{node}'",
                                        f"define '{node}' under nodes or fix the name", link.line))
                continue
            if node not in role_of:
                continue
            if role_of[node] in ("server", "host"):
                ends.append(Endpoint(node=node, iface=iface))
                continue
            port, why = _switch_port(iface, node, fabric)
            if port is None:
                problems.append(Problem(file, link.where, why, "use swp1, swp2, ... (or eth1, ...) for switch ports",
                                        link.line))
                continue
            highest = max(highest, (fabric.sku.number(port) or 0) + 1)
            ends.append(Endpoint(node=node, iface=port))
        if len(ends) == 2:
            links.append(Link(a=ends[0], b=ends[1], line=link.line))
    if problems:
        raise PlanError(list(dict.fromkeys(problems)))
    if highest > fabric.radix:
        fabric = FabricSettings(radix=highest + highest % 2)
    counters: dict[str, int] = {}
    nodes = []
    for name, role in role_of.items():
        counters[role] = counters.get(role, 0) + 1
        pod = rail = None
        if m := POD_RAIL.match(name):
            pod, rail = int(m.group(1)), int(m.group(2))
        elif m := POD_SERVER.match(name):
            pod = int(m.group(1))
        nodes.append(Node(name=name, role=role, index=counters[role], pod=pod, rail=rail))
    return Topology(name=topology_name(doc.title), kind="air", source=file, fabric=fabric, nodes=nodes, links=links)


def topology_name(title: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", title).strip("-_") or "air"
    return (name if name[0].isalpha() else f"air-{name}")[:40]


# -- writing --------------------------------------------------------------------------------------------------------


def _air_ports(plan: Plan) -> dict[tuple[str, str], str]:
    """(node, twin port) -> the interface name in Air: eth<front-panel number> on switches, as is elsewhere."""
    sku = plan.fabric.sku
    out = {}
    for node in plan.nodes:
        for iface in node.interfaces:
            number = sku.number(iface.name) if node.kind == "switch" else None
            out[(node.name, iface.name)] = f"eth{number + 1}" if number is not None else iface.name
    return out


def _os(role: str, switch_os: str, server_os: str) -> str:
    return server_os if role in ("server", "host") else switch_os


def to_air_json(plan: Plan, switch_os: str = DEFAULT_SWITCH_OS, server_os: str = DEFAULT_SERVER_OS) -> str:
    """Air's JSON (its export envelope, which its import takes), one node per twin node, one link per twin link."""
    ports = _air_ports(plan)
    content = {
        "nodes": {n.name: {"os": _os(n.role, switch_os, server_os)} for n in plan.nodes},
        "links": [[{"node": lk.a_node, "interface": ports.get((lk.a_node, lk.a_iface), lk.a_iface)},
                   {"node": lk.b_node, "interface": ports.get((lk.b_node, lk.b_iface), lk.b_iface)}]
                  for lk in plan.links],
    }
    return json.dumps({"format": "JSON", "title": plan.name, "ztp": None, "content": content}, indent=2) + "\n"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_air_dot(plan: Plan, switch_os: str = DEFAULT_SWITCH_OS, server_os: str = DEFAULT_SERVER_OS) -> str:
    """Air's DOT: nodes with function and os, then one `a:port -- b:port` line per link."""
    ports = _air_ports(plan)
    lines = [f"graph {_q(plan.name)} {{"]
    for n in plan.nodes:
        lines.append(f'  {_q(n.name)} [ function={_q(n.role)} os={_q(_os(n.role, switch_os, server_os))} ]')
    for lk in plan.links:
        a = ports.get((lk.a_node, lk.a_iface), lk.a_iface)
        b = ports.get((lk.b_node, lk.b_iface), lk.b_iface)
        lines.append(f"  {_q(lk.a_node)}:{_q(a)} -- {_q(lk.b_node)}:{_q(b)}")
    lines.append("}")
    return "\n".join(lines) + "\n"
