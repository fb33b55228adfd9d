"""bgpcfgd's BGPAllowListMgr (managers_allow_list.py, sonic-buildimage 086b03bd): BGP_ALLOWED_PREFIXES.

A key is `DEPLOYMENT_ID|<id>[|<community>]` or `DEPLOYMENT_ID|<id>|NEIGHBOR_TYPE|<type>[|<community>]`
with `prefixes_v4` / `prefixes_v6` (comma-separated, `ge`/`le` allowed) and `default_action`. For each
SET the manager compares what FRR holds with what the entry asks and pushes the difference:

- prefix lists PL_ALLOW_LIST_DEPLOYMENT_ID_<id>[_NEIGHBOR_<type>]_COMMUNITY_<community>_V4/V6: constants'
  default_pl_rules, then each prefix (`le 32`/`le 128` added to a prefix shorter than a host), seq 10,
  20, ...; rewritten whole (`no ip prefix-list X` first) when FRR's differs, left alone when equal;
- a community list COMMUNITY_ALLOW_LIST_..._COMMUNITY_<community> for a key with a community;
- route-map ALLOW_LIST_DEPLOYMENT_ID_<id>[_NEIGHBOR_<type>]_V4/V6 gets an entry matching the prefix list
  (and the community), at the first free sequence number from 10 (with a community) or 30000
  (without), unless an entry with that prefix list and community exists;
- the route-map's 65535 entry sets the default action's community (`no-export` for deny, constants'
  drop_community for permit) where it holds another.

A DEL removes the entry, the prefix lists and the community list FRR holds, and puts back the
constants' default action. Entries are replayed in key order on the state FRR holds (the general
policies' ALLOW_LIST_DEPLOYMENT_ID_0 default entries once a neighbor is added); the `clear bgp
peer-group X soft in` bgpcfgd runs after is an exec command (the route-map change already makes FRR
re-read the routes its peers sent, soft-reconfiguration inbound).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import ip_network
from typing import Any

from twin.stages.render.bgpcfgd_fields import as_received

TABLE = "BGP_ALLOWED_PREFIXES"
EMPTY = "empty"
KEY = re.compile(r"^DEPLOYMENT_ID\|\d+\|\S+$|^DEPLOYMENT_ID\|\d+$|^DEPLOYMENT_ID\|\d+\|\S+\|NEIGHBOR_TYPE\|\S+$|"
                 r"^DEPLOYMENT_ID\|\d+\|NEIGHBOR_TYPE\|\S+")
FAMILIES = (("4", "ip", "v4", 32), ("6", "ipv6", "v6", 128))


def _settings(constants: Mapping[str, Any]) -> Mapping[str, Any]:
    return dict((constants.get("bgp") or {}).get("allow_list") or {})


def enabled(constants: Mapping[str, Any]) -> bool:
    return bool(_settings(constants).get("enabled"))


def default_community(constants: Mapping[str, Any], action: str | None = None) -> str:
    """The default action's community: no-export for deny, drop_community for permit (the request's
    default_action, else constants')."""
    allow = _settings(constants)
    chosen = action if action is not None else str(allow.get("default_action", "permit")).strip()
    return "no-export" if chosen == "deny" else str(allow.get("drop_community", ""))


@dataclass(frozen=True)
class Names:
    pl: dict[str, str]     # "4"/"6" -> prefix-list name
    rm: dict[str, str]     # "4"/"6" -> route-map name
    community: str


def _parse(key: str) -> tuple[int, str, str]:
    """(deployment id, community value or `empty`, neighbor type or "")."""
    if "NEIGHBOR_TYPE" in key:
        head, rest = key.split("|NEIGHBOR_TYPE|", 1)
        ntype, community = rest.split("|", 1) if "|" in rest else (rest, EMPTY)
        return int(head.replace("DEPLOYMENT_ID|", "")), community, ntype
    body = key.replace("DEPLOYMENT_ID|", "")
    dep, community = body.split("|", 1) if "|" in body else (body, EMPTY)
    return int(dep), community, ""


def names(deployment: int, community: str, ntype: str) -> Names:
    neigh = f"_NEIGHBOR_{ntype}" if ntype else ""
    cname = (EMPTY if community == EMPTY
             else f"COMMUNITY_ALLOW_LIST_DEPLOYMENT_ID_{deployment}{neigh}_COMMUNITY_{community}")
    return Names(pl={v: f"PL_ALLOW_LIST_DEPLOYMENT_ID_{deployment}{neigh}_COMMUNITY_{community}_V{v}" for v in "46"},
                 rm={v: f"ALLOW_LIST_DEPLOYMENT_ID_{deployment}{neigh}_V{v}" for v in "46"}, community=cname)


def _is_version(text: str, version: int) -> bool:
    try:
        return ip_network(text.strip(), strict=False).version == version
    except ValueError:
        return False


def _prefixes(row: Mapping[str, Any], name: str) -> list[str]:
    return str(row[name]).split(",") if name in row else []


def valid(key: str, row: Mapping[str, Any] | None) -> bool:
    """__set_handler_validate: the key's shape, each prefix of its family, some prefix, the action."""
    if row is None or not KEY.match(key):
        return False
    v4, v6 = _prefixes(row, "prefixes_v4"), _prefixes(row, "prefixes_v6")
    if not all(_is_version(re.split("ge|le", p)[0], 4) for p in v4):
        return False
    if not all(_is_version(re.split("ge|le", p)[0], 6) for p in v6):
        return False
    return bool(v4 or v6) and row.get("default_action", "permit") in ("permit", "deny")


def _rules(prefixes: list[str], host: int) -> list[str]:
    """__to_prefix_list."""
    out = []
    for prefix in prefixes:
        if "le" in prefix or "ge" in prefix or int(prefix.split("/")[1]) == host:
            out.append(f"permit {prefix}")
        else:
            out.append(f"permit {prefix} le {host}")
    return out


def _normalize(v6: bool, rules: list[str]) -> list[str]:
    """__normalize_ipnetwork: the prefix (second word) of an IPv6 rule written as Python writes the network."""
    out = []
    for rule in rules:
        words = rule.split(" ")
        if v6:
            words[1] = str(ip_network(words[1]))
        out.append(" ".join(words))
    return out


@dataclass
class FrrAllowList:
    """What FRR holds of the allow-list (the parts of its running config the manager reads)."""

    prefix_lists: dict[str, list[str]] = field(default_factory=dict)
    communities: dict[str, str] = field(default_factory=dict)
    entries: dict[str, dict[int, tuple[str, str]]] = field(default_factory=dict)   # rm -> seq -> (pl, community)
    defaults: dict[str, str] = field(default_factory=dict)                         # rm -> 65535's community

    def _prefix_list(self, ip: str, pl: str, rules: list[str]) -> list[str]:
        v6 = ip == "ipv6"
        wanted = _normalize(v6, rules)
        have = self.prefix_lists.get(pl)
        if have is not None and set(have) == set(wanted):
            return []
        cmds = [f"no {ip} prefix-list {pl}"] if have is not None else []
        cmds += [f"{ip} prefix-list {pl} seq {10 * (i + 1)} {rule}" for i, rule in enumerate(wanted)]
        self.prefix_lists[pl] = wanted
        return cmds

    def _community(self, cname: str, value: str) -> list[str]:
        if value == EMPTY or self.communities.get(cname) == value:
            return []
        cmds = [f"no bgp community-list standard {cname}"] if cname in self.communities else []
        self.communities[cname] = value
        return [*cmds, f"bgp community-list standard {cname} permit {value}"]

    def _entry(self, v: str, rm: str, pl: str, cname: str, tag: str | None) -> list[str]:
        entries = self.entries.setdefault(rm, {})
        if (pl, cname) in entries.values():
            return []
        start, end = (10, 29990) if cname != EMPTY else (30000, 65530)
        seq = next((s for s in range(start, end, 10) if s not in entries), None)
        if seq is None:
            return []  # bgpcfgd raises: no free sequence number
        entries[seq] = (pl, cname)
        cmds = [f"route-map {rm} permit {seq}", f" match ip{'' if v == '4' else 'v6'} address prefix-list {pl}"]
        if not cname.endswith(EMPTY):
            cmds.append(f" match community {cname}")
        elif tag:
            cmds.append(f" set tag {tag}")
        return cmds

    def _default(self, rm: str, community: str) -> list[str]:
        if self.defaults.get(rm) == community:
            return []
        self.defaults[rm] = community
        return [f"route-map {rm} permit 65535", f" set community {community} additive"]

    def set(self, key: str, row: Mapping[str, Any], constants: Mapping[str, Any]) -> list[str]:
        """__update_policy for a valid SET."""
        deployment, community, ntype = _parse(key)
        n = names(deployment, community, ntype)
        rules = (_settings(constants).get("default_pl_rules") or {})
        tag = _settings(constants).get("prefix_match_tag")
        cmds: list[str] = []
        for v, ip, af, host in FAMILIES:
            cmds += self._prefix_list(ip, n.pl[v], list(rules.get(af) or []) + _rules(
                _prefixes(row, f"prefixes_v{v}"), host))
        cmds += self._community(n.community, community)
        for v, _, _, _ in FAMILIES:
            cmds += self._entry(v, n.rm[v], n.pl[v], n.community, None if tag is None else str(tag))
        action = default_community(constants, row.get("default_action"))
        for v, _, _, _ in FAMILIES:
            cmds += self._default(n.rm[v], action)
        return cmds

    def delete(self, key: str, constants: Mapping[str, Any]) -> list[str]:
        """__remove_policy."""
        deployment, community, ntype = _parse(key)
        n = names(deployment, community, ntype)
        cmds: list[str] = []
        for v, _, _, _ in FAMILIES:
            entries = self.entries.get(n.rm[v], {})
            seq = next((s for s, e in entries.items() if e == (n.pl[v], n.community)), None)
            if seq is not None:
                del entries[seq]
                cmds.append(f"no route-map {n.rm[v]} permit {seq}")
        for v, ip, _, _ in FAMILIES:
            if self.prefix_lists.pop(n.pl[v], None) is not None:
                cmds.append(f"no {ip} prefix-list {n.pl[v]}")
        if n.community != EMPTY and self.communities.pop(n.community, None) is not None:
            cmds.append(f"no bgp community-list standard {n.community}")
        for v, _, _, _ in FAMILIES:
            cmds += self._default(n.rm[v], default_community(constants))
        return cmds


def _rows(db: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The table's rows as bgpcfgd receives them: `prefixes_v4`/`prefixes_v6` written as lists (YANG
    leaf-lists) arrive as `prefixes_v4@`/`prefixes_v6@`, which the manager does not read, so such a row
    has no prefixes and is refused, as on SONiC (twin.stages.render.bgpcfgd_fields)."""
    return {key: as_received(row or {}) for key, row in (db.get(TABLE) or {}).items()}


def _start(policies_pushed: bool, constants: Mapping[str, Any]) -> FrrAllowList:
    """FRR before the manager acts: the general policies' default entries of deployment 0, if pushed."""
    state = FrrAllowList()
    allow = _settings(constants)
    if policies_pushed and allow.get("enabled") and "drop_community" in allow:
        for v in "46":
            state.defaults[f"ALLOW_LIST_DEPLOYMENT_ID_0_V{v}"] = str(allow["drop_community"])
    return state


def _replay(db: Mapping[str, Any], policies_pushed: bool, constants: Mapping[str, Any]) -> tuple[FrrAllowList,
                                                                                                list[str]]:
    state, cmds = _start(policies_pushed, constants), []
    if enabled(constants):
        for key, row in sorted(_rows(db).items()):
            if valid(key, row):
                cmds += state.set(key, row, constants)
    return state, cmds


def boot_lines(db: Mapping[str, Any], policies_pushed: bool, constants: Mapping[str, Any]) -> list[str]:
    """Every valid entry applied in key order, after the general policies (when a neighbor was added)."""
    return _replay(db, policies_pushed, constants)[1]


def change_lines(old: Mapping[str, Any], new: Mapping[str, Any], policies_pushed: bool,
                 constants: Mapping[str, Any]) -> list[str]:
    """What the manager pushes when CONFIG_DB goes from `old` to `new`: DELs, then SETs of new or
    changed entries, in key order, each against what FRR holds."""
    if not enabled(constants):
        return []
    state = _replay(old, policies_pushed, constants)[0]
    before, after = _rows(old), _rows(new)
    cmds: list[str] = []
    for key in sorted(set(before) - set(after)):
        if KEY.match(key):
            cmds += state.delete(key, constants)
    for key, row in sorted(after.items()):
        if before.get(key) != row and valid(key, row):
            cmds += state.set(key, row, constants)
    return cmds
