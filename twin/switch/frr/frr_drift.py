"""FRR's running config against what CONFIG_DB renders: the lines that differ, the vtysh lines that
converge them, and what each difference means in CONFIG_DB's words. Pure.

Both configs are read as sets of lines in their context (`router bgp 65101` > `address-family ipv4
unicast` > `network 10.1.4.1/32`), so the order FRR shows its lines in does not matter, and the
running configs of several daemons (each daemon's vty answers with its own part) read as one.
What the config daemon does not program is left out on both sides: the version, hostname, logging
(twin adds its own log lines, twin.switch.frr.frr_daemons.runtime_lines) and the vty.

Converging sends `no <line>` for each line FRR has and CONFIG_DB does not render (children before
their block), then each missing line in the rendered order. Some removals take more with them
(`no neighbor X remote-as` deletes the neighbor): the caller reads the running config again and
repeats until nothing differs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any, Literal

Path = tuple[str, ...]   # a line with the block lines it sits in, outermost first
ConfigTables = Mapping[str, Mapping[str, Any]]

# Top-level lines (and their blocks) no CONFIG_DB field renders.
IGNORED = ("frr version", "frr defaults", "hostname", "log ", "service ", "line vty", "password",
           "enable password", "agentx", "debug ", "Building configuration", "Current configuration")
CLOSERS = {"exit", "exit-address-family", "exit-vrf", "end", "quit"}
REMOVABLE_BLOCKS = ("router ", "route-map ")   # top-level blocks a `no <header>` removes whole


@dataclass(frozen=True)
class Drift:
    """One line that differs: `missing` from FRR (CONFIG_DB renders it) or `extra` in FRR. `path`
    is the line as compared (FRR's canonical form), `command` the line as FRR has it (the one to
    remove) for an extra line, the line to add for a missing one."""

    kind: Literal["missing", "extra"]
    path: Path
    command: Path

    @property
    def line(self) -> str:
        return self.path[-1]


MULTIPATH_NUM = 256   # FRR's build-time maximum-paths, the default it does not show
_SEQ = re.compile(r" seq \d+")
_LISTS = ("ip prefix-list ", "ipv6 prefix-list ", "bgp community-list ", "bgp large-community-list ",
          "bgp extcommunity-list ", "bgp as-path access-list ")
_AF_SHORT = {"address-family ipv4": "address-family ipv4 unicast", "address-family ipv6": "address-family ipv6 unicast"}
_PEER_GROUP_MEMBER = re.compile(r"neighbor \S+ (?:interface )?peer-group \S+")
_UNCHANGED = re.compile(r"((?:no )?neighbor \S+ attribute-unchanged) (.+)")
_UNCHANGED_ORDER = ("as-path", "next-hop", "med")   # the order FRR shows them in
# Instance lines FRR 8.4 takes and does not show: its defaults (traditional profile, version 8.4)
_HIDDEN_DEFAULTS = frozenset({
    "bgp graceful-restart restart-time 120", "bgp graceful-restart stalepath-time 360",
    "bgp default local-preference 100", "bgp listen limit 100", "bgp default subgroup-pkt-queue-max 40",
    "read-quanta 10", "write-quanta 64", "bgp network import-check", "distance bgp 20 200 200"})
# Lines FRR shows in other words: (pattern, FRR's words)
_SHOWN_AS = ((re.compile(r"(neighbor \S+) enforce-multihop"), r"\1 disable-connected-check"),
             (re.compile(r"(bgp bestpath as-path multipath-relax) no-as-set"), r"\1"),
             (re.compile(r"bgp dampening 15 750 2000 60"), "bgp dampening"),
             (re.compile(r"(network \S+) backdoor (route-map \S+)"), r"\1 \2 backdoor"),
             (re.compile(r"(bgp max-med (?:on-startup \d+|administrative)) 4294967294"), r"\1"),
             (re.compile(r"update-delay (\d+) \1"), r"update-delay \1"))
# Address-family commands FRR takes on a neighbor outside any address family (hidden in FRR 8.4, as bgpcfgd's
# monitors and dynamic templates write them) and keeps, and shows, in IPv4 unicast
_IPV4_BY_DEFAULT = re.compile(r"neighbor \S+ (?:activate|soft-reconfiguration inbound|route-map \S+ (?:in|out)|"
                              r"send-community(?: \S+)?|maximum-prefix .+|allowas-in(?: .+)?|next-hop-self(?: .+)?|"
                              r"route-reflector-client)")
_SEND_COMMUNITY = re.compile(r"neighbor \S+ send-community")   # FRR's default: on, never shown
_ACTIVATE = re.compile(r"neighbor (\S+) activate")
_STATIC = ("ip route ", "ipv6 route ")
_CLUSTER_ID = re.compile(r"bgp cluster-id (\d+)")
_HIDDEN_PORT = re.compile(r"neighbor \S+ port 179")
_DELAY_TIMER = re.compile(r"bgp route-map delay-timer (\d+)")


def canonical(path: Path) -> Path | None:
    """A line as FRR shows it in its running config (None: FRR does not show it): prefix and
    community lists without the sequence numbers FRR adds, `attribute-unchanged` words in FRR's order,
    `address-family ipv4` as `... unicast`,
    a `network` outside an address family in the IPv4 (or IPv6) one and a peer-group membership
    outside it (bgpcfgd's templates write both forms), `maximum-paths` at FRR's default hidden, an
    address family's own line left out (FRR shows none without lines in it)."""
    path = tuple(_AF_SHORT.get(p, p) for p in path)
    line = path[-1]
    if line.startswith(_LISTS):
        path = (*path[:-1], _SEQ.sub("", line, count=1))
    unchanged = _UNCHANGED.fullmatch(line)
    if unchanged:
        words = unchanged.group(2).split()
        path = (*path[:-1], " ".join([unchanged.group(1), *(w for w in _UNCHANGED_ORDER if w in words)]))
    if line.startswith("address-family "):
        return None   # FRR shows an address family only with lines in it, which name it themselves
    if len(path) == 1 and line.startswith(_STATIC):
        return (_static_route(line),)
    if not path[0].startswith("router bgp"):
        return path
    if len(path) == 2 and _IPV4_BY_DEFAULT.fullmatch(line):
        path = (path[0], "address-family ipv4 unicast", line)
    for pattern, words in _SHOWN_AS:
        if pattern.fullmatch(line):
            line = pattern.sub(words, line)
            path = (*path[:-1], line)
    cluster = _CLUSTER_ID.fullmatch(line)
    if cluster:   # a number FRR shows as an address
        line = f"bgp cluster-id {ip_address(int(cluster.group(1)) % 2**32)}"
        path = (*path[:-1], line)
    if line in _HIDDEN_DEFAULTS or _HIDDEN_PORT.fullmatch(line):
        return None
    delay = _DELAY_TIMER.fullmatch(line)
    if delay:   # bgpd's own setting: FRR shows it outside the instance, and not at its default (5)
        return None if delay.group(1) == "5" else (line,)
    if len(path) == 2 and line.startswith("network "):
        family = "ipv6" if ":" in line else "ipv4"
        return (path[0], f"address-family {family} unicast", line)
    if len(path) == 3 and _PEER_GROUP_MEMBER.fullmatch(line):
        return (path[0], line)
    if line in (f"maximum-paths {MULTIPATH_NUM}", f"maximum-paths ibgp {MULTIPATH_NUM}"):
        return None
    return path


def _static_route(line: str) -> str:
    """A static route in one order of its words (FRR shows `tag` before the distance; bgpcfgd writes
    the distance first), `nexthop-vrf default` (the route's own VRF, which FRR does not show) left out."""
    words = line.split()
    named: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(words):
        if words[i] in ("tag", "nexthop-vrf", "vrf", "label", "table", "color") and i + 1 < len(words):
            named[words[i]] = words[i + 1]
            i += 2
            continue
        rest.append(words[i])
        i += 1
    distance = [rest.pop()] if len(rest) > 3 and rest[-1].isdigit() else []
    if named.get("nexthop-vrf") == "default":
        del named["nexthop-vrf"]
    return " ".join([*rest, *(f"{k} {v}" for k, v in sorted(named.items())), *distance])


def parse(text: str) -> list[tuple[Path, Path]]:
    """Every line of an FRR config in its context, in order, each once, as (canonical form, line as
    written); closers, comments, ignored lines and lines FRR does not show left out."""
    entries: list[tuple[Path, Path]] = []
    seen: set[Path] = set()
    stack: list[tuple[int, str]] = []
    skipping = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!"):
            continue
        indent = len(raw) - len(raw.lstrip())
        line = " ".join(stripped.split())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if line in CLOSERS:
            continue
        if indent == 0:
            skipping = line.startswith(IGNORED)
        if skipping:
            continue
        path = (*(entry for _, entry in stack), line)
        stack.append((indent, line))
        key = canonical(path)
        if key is not None and key not in seen:
            seen.add(key)
            entries.append((key, path))
    return entries


def drift(rendered: str, running: str) -> list[Drift]:
    """What FRR's running config lacks of the rendered config, then what it has beyond it."""
    want, have = parse(rendered), parse(running)
    want_keys, have_keys = {k for k, _ in want}, {k for k, _ in have}
    # a list entry is added as rendered: its sequence number keeps it in its place
    return ([Drift("missing", k, p if k[-1].startswith(_LISTS) else k) for k, p in want
             if k not in have_keys and not _not_shown(k, have_keys)]
            + [Drift("extra", k, p) for k, p in have if k not in want_keys and not _implied(k, want_keys)])


_REMOTE_AS = re.compile(r"neighbor (\S+) (?:interface )?remote-as (\S+)")
_SOLO = re.compile(r"neighbor (\S+) solo")


def _groups_of(name: str, bgp: str, have: set[Path]) -> list[str]:
    member = re.compile(rf"neighbor {re.escape(name)} (?:interface )?peer-group (\S+)")
    return [m.group(1) for k in have if len(k) == 2 and k[0] == bgp and (m := member.fullmatch(k[1]))]


def _not_shown(key: Path, have: set[Path]) -> bool:
    """A line FRR 8.4 takes and does not show where it is: a peer-group member's remote-as once its group
    has one (FRR shows the group's), `solo` on a peer group or one of its members (FRR drops it),
    `send-community` (FRR's default), a member's `activate` in a family its group is activated in."""
    if len(key) == 3 and key[0].startswith("router bgp"):
        if _SEND_COMMUNITY.fullmatch(key[2]):
            return True
        activate = _ACTIVATE.fullmatch(key[2])
        return activate is not None and any((key[0], key[1], f"neighbor {g} activate") in have
                                            for g in _groups_of(activate.group(1), key[0], have))
    if len(key) != 2 or not key[0].startswith("router bgp"):
        return False
    remote = _REMOTE_AS.fullmatch(key[1])
    if remote:   # FRR shows a member's remote-as only while its group has none
        group_as = re.compile(r"neighbor (\S+) remote-as \S+")
        with_as = {m.group(1) for k in have if len(k) == 2 and k[0] == key[0] and (m := group_as.fullmatch(k[1]))}
        return any(g in with_as for g in _groups_of(remote.group(1), key[0], have))
    solo = _SOLO.fullmatch(key[1])
    if solo:
        name = solo.group(1)
        return (key[0], f"neighbor {name} peer-group") in have or bool(_groups_of(name, key[0], have))
    return False


_SHUTDOWN = re.compile(r"neighbor \S+ shutdown")


def _implied(key: Path, want: set[Path]) -> bool:
    """A line FRR shows that the rendered config implies: a neighbor's `shutdown` under `bgp default
    shutdown` (FRR shuts every neighbor configured after it)."""
    return (len(key) == 2 and bool(_SHUTDOWN.fullmatch(key[1]))
            and (key[0], "bgp default shutdown") in want)


def negate(line: str) -> str:
    return line[3:] if line.startswith("no ") else f"no {line}"


def _removal(path: Path, extra: set[Path]) -> Path | None:
    """The command (in its context) that removes an extra line; None when a block removed whole
    takes it with it, or for an interface or vrf block itself (its lines go, the block stays)."""
    if any(path[:k] in extra and path[0].startswith(REMOVABLE_BLOCKS) for k in range(1, len(path))):
        return None
    if len(path) == 1 and not path[0].startswith(REMOVABLE_BLOCKS) and _is_block(path, extra):
        return None   # an interface or vrf block: its lines go, the block stays
    return (*path[:-1], negate(path[-1]))


def _is_block(path: Path, paths: Iterable[Path]) -> bool:
    return any(len(p) > len(path) and p[:len(path)] == path for p in paths)


def converge_lines(drifts: list[Drift]) -> list[str]:
    """vtysh config lines that remove what FRR has beyond the rendered config (innermost first),
    then add what it lacks (in the rendered order), each inside its blocks."""
    extra = [d.command for d in drifts if d.kind == "extra"]
    extra_set = set(extra)
    commands = [c for p in reversed(extra) if (c := _removal(p, extra_set)) is not None]
    commands += [d.command for d in drifts if d.kind == "missing"]
    return _with_context(commands)


def _with_context(commands: list[Path]) -> list[str]:
    """Each command entered through its blocks, consecutive commands in one block sharing them."""
    lines: list[str] = []
    open_: list[str] = []
    for path in commands:
        ctx = list(path[:-1])
        common = 0
        while common < min(len(ctx), len(open_)) and ctx[common] == open_[common]:
            common += 1
        for _ in range(len(open_) - common):
            lines.append(" " * (len(open_) - 1) + "exit")
            open_.pop()
        for entry in ctx[common:]:
            lines.append(" " * len(open_) + entry)
            open_.append(entry)
        lines.append(" " * len(open_) + path[-1])
    while open_:
        lines.append(" " * (len(open_) - 1) + "exit")
        open_.pop()
    return lines


# -- naming a difference in CONFIG_DB's words ---------------------------------------------------

# `neighbor X <words>` -> the CONFIG_DB field it renders, on the neighbor's (or peer group's) row.
_NEIGHBOR_FIELDS = (("timers connect", "conn_retry"), ("timers", "keepalive,holdtime"), ("shutdown", "admin_status"),
                    ("description", "name"), ("remote-as", "asn"), ("interface remote-as", "asn"),
                    ("peer-group", "peer_group_name"), ("interface peer-group", "peer_group_name"),
                    ("bfd", "bfd"), ("update-source", "local_addr"))
_AF_FIELDS = (("activate", "admin_status"), ("route-map", "route_map_in,route_map_out"))
_NEIGHBOR = re.compile(r"(?:no )?neighbor (\S+) (.+)")


def _row_key(table: Mapping[str, Any], name: str) -> str | None:
    """The key of a row named `name` (its last `|` part, or the part before an address family)."""
    for key in sorted(table):
        parts = key.split("|")
        if parts[-1] == name or (len(parts) > 1 and parts[-2] == name):
            return key
    return None


def _fields(row: Mapping[str, Any], fields: str) -> str:
    shown = []
    for field in fields.split(","):
        value = row.get(field)
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        shown.append(f"{field}={value if value not in (None, '') else '(unset)'}")
    return " ".join(shown)


def _neighbor_source(config: ConfigTables, name: str, words: str, in_af: bool) -> str | None:
    tables = ("BGP_NEIGHBOR_AF", "BGP_PEER_GROUP_AF") if in_af else ("BGP_NEIGHBOR", "BGP_PEER_GROUP")
    pairs = _AF_FIELDS if in_af else _NEIGHBOR_FIELDS
    field = next((f for w, f in pairs if words == w or words.startswith(w + " ")), None)
    for table in tables:
        key = _row_key(config.get(table, {}), name)
        if key is not None:
            row = config[table][key]
            return f"{table}|{key}" + (f" {_fields(row, field)}" if field else "")
    return f"no BGP_NEIGHBOR or BGP_PEER_GROUP row names {name}"


def source(config: ConfigTables, path: Path) -> str | None:
    """The CONFIG_DB row and field a line of FRR's config renders from (None when not known)."""
    line = path[-1]
    in_af = any(p.startswith("address-family ") for p in path[:-1])
    m = _NEIGHBOR.fullmatch(line)
    if m and not line.endswith(" peer-group") and path[0].startswith("router bgp"):
        return _neighbor_source(config, m.group(1), m.group(2), in_af)
    words = line.removeprefix("no ").split()
    globals_ = config.get("BGP_GLOBALS", {})
    row_key = "default" if "default" in globals_ else next(iter(sorted(globals_)), None)
    if words[:1] == ["network"] and len(words) > 1:
        key = next((k for k in sorted(config.get("BGP_GLOBALS_AF_NETWORK", {})) if k.endswith("|" + words[1])), None)
        return f"BGP_GLOBALS_AF_NETWORK|{key}" if key else None
    if row_key is not None:
        row = globals_[row_key]
        if words[:1] == ["maximum-paths"]:
            af = config.get("BGP_GLOBALS_AF", {})
            key = next((k for k in sorted(af) if k.startswith(row_key + "|")), None)
            return f"BGP_GLOBALS_AF|{key} {_fields(af[key], 'max_ebgp_paths')}" if key else None
        for prefix, fields in (("bgp router-id", "router_id"), ("timers bgp", "keepalive,holdtime"),
                               ("router bgp", "local_asn")):
            if " ".join(words).startswith(prefix):
                return f"BGP_GLOBALS|{row_key} {_fields(row, fields)}"
    return None


def describe(item: Drift, config: ConfigTables) -> str:
    """One difference, naming the CONFIG_DB field behind it where one is known, e.g.
    "BGP_NEIGHBOR|default|10.0.0.64 admin_status=down but FRR has no 'neighbor 10.0.0.64 shutdown'"."""
    where = f" (in '{' > '.join(item.path[:-1])}')" if len(item.path) > 1 else ""
    src = source(config, item.path)
    if item.kind == "missing":
        return (f"{src} but FRR has no '{item.line}'{where}" if src
                else f"CONFIG_DB renders '{item.line}'{where} but FRR has no such line")
    return (f"{src} but FRR has '{item.line}'{where}" if src
            else f"FRR has '{item.line}'{where}, which CONFIG_DB does not render")
