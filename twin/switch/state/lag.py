"""teamd and teamsyncd of one switch: a PortChannel's state from its members' links, and min_links held.

A PortChannel is a bridge of isolated member ports (twin.switch.config.portchannel). From kernel link
events this keeps what teamsyncd writes:
- APPL_DB `LAG_TABLE:PortChannelN` {admin_status, oper_status, mtu} and
  `LAG_MEMBER_TABLE:PortChannelN:EthernetX` {status: enabled | disabled};
- STATE_DB `LAG_TABLE|PortChannelN` {state: ok, admin_status, oper_status, mtu, min_links} and
  `LAG_MEMBER_TABLE|PortChannelN|EthernetX` {status}.
A member is up when it is admin up with its carrier; the PortChannel is oper up while it is admin up
and at least `min_links` members are up (teamd's `min_ports`); a member is enabled while it is up and
its PortChannel is oper up.

teamd takes the team device's carrier away below min_ports. A bridge has its carrier while any port
forwards, so while a PortChannel is held down with members still up, those members' bridge ports are
set disabled (`bridge link set ... state 0`); the kernel puts a port back to forwarding when its
carrier returns, so a member whose link flags changed is disabled again. Released, they forward again.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from twin.switch.config.portchannel import is_portchannel, min_links_of

Row = dict[str, str]
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
AF_BRIDGE = 7
BR_STATE_DISABLED, BR_STATE_FORWARDING = 0, 3
log = logging.getLogger("twin.lag")


@dataclass(frozen=True)
class Link:
    """What a kernel link event says that a PortChannel's state needs."""

    name: str
    flags: int
    mtu: int = 0
    master: int | None = None
    alias: str | None = None

    @property
    def up(self) -> bool:
        return bool(self.flags & IFF_UP and self.flags & IFF_LOWER_UP)


@dataclass
class LagState:
    """Each PortChannel's rows, and which of them are held down with members up."""

    appl_lag: dict[str, Row] = field(default_factory=dict)
    appl_members: dict[str, Row] = field(default_factory=dict)
    state_lag: dict[str, Row] = field(default_factory=dict)
    state_members: dict[str, Row] = field(default_factory=dict)
    held: dict[str, list[str]] = field(default_factory=dict)   # PortChannel -> its members that are up


def lag_state(links: Mapping[int, Link]) -> LagState:
    """The rows of every PortChannel among `links` (ifindex -> link), pure."""
    out = LagState()
    for index, lag in sorted(links.items(), key=lambda item: item[1].name):
        if not is_portchannel(lag.name):
            continue
        members = sorted((m for m in links.values() if m.master == index), key=lambda m: m.name)
        up = [m.name for m in members if m.up]
        min_links = min_links_of(lag.alias)
        admin = "up" if lag.flags & IFF_UP else "down"
        oper = "up" if admin == "up" and len(up) >= min_links else "down"
        out.appl_lag[lag.name] = {"admin_status": admin, "oper_status": oper, "mtu": str(lag.mtu)}
        out.state_lag[lag.name] = {"state": "ok", "admin_status": admin, "oper_status": oper,
                                   "mtu": str(lag.mtu), "min_links": str(min_links)}
        for m in members:
            status = "enabled" if m.up and oper == "up" else "disabled"
            out.appl_members[f"{lag.name}:{m.name}"] = {"status": status}
            out.state_members[f"{lag.name}|{m.name}"] = {"status": status}
        if oper == "down" and admin == "up" and up:
            out.held[lag.name] = up
    return out


def link_of(msg: Any) -> Link | None:
    """A link event's facts (None for a bridge port's own event, which says nothing new of the link)."""
    name = msg.get_attr("IFLA_IFNAME")
    if name is None or msg["family"] == AF_BRIDGE:
        return None
    return Link(name=name, flags=msg["flags"], mtu=msg.get_attr("IFLA_MTU") or 0,
                master=msg.get_attr("IFLA_MASTER") or None, alias=msg.get_attr("IFLA_IFALIAS"))


def port_state_lines(held: Mapping[str, Iterable[str]], before: Mapping[str, Mapping[str, int]],
                     links: Mapping[str, int]) -> tuple[list[str], dict[str, dict[str, int]]]:
    """`bridge -b` lines that hold the `held` PortChannels' up members disabled and give back those
    released, and what is held now (PortChannel -> member -> its link flags when disabled). `before`
    is what was held; `links` each member's flags now: a member already disabled at these flags
    needs no line."""
    lines: list[str] = []
    now: dict[str, dict[str, int]] = {}
    for lag, up in sorted(held.items()):
        now[lag] = {}
        for member in up:
            flags = links.get(member, 0)
            if before.get(lag, {}).get(member) != flags:
                lines.append(f"link set dev {member} state {BR_STATE_DISABLED}")
            now[lag][member] = flags
    for lag, members in sorted(before.items()):
        for member in sorted(members):
            if member not in now.get(lag, {}) and member in links:
                lines.append(f"link set dev {member} state {BR_STATE_FORWARDING}")
    return lines, now


class LagKeeper:
    """teamd's min_links for one switch: applies port_state_lines in its namespace."""

    def __init__(self, netns: str) -> None:
        self.netns = netns
        self.held: dict[str, dict[str, int]] = {}

    def apply(self, state: LagState, links: Iterable[Link]) -> None:
        lines, self.held = port_state_lines(state.held, self.held, {link.name: link.flags for link in links})
        if not lines:
            return
        proc = subprocess.run(["bridge", "-n", self.netns, "-force", "-b", "-"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            log.warning("%s: holding PortChannels down: %s", self.netns, proc.stderr.strip()[-300:])
