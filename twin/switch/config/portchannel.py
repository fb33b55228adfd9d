"""PortChannels in the kernel, as teammgrd asks teamd for them: `ip -b` lines, pure.

This kernel has no bonding or team driver, so a PortChannel is a bridge named after it
(`PortChannel0001`) with its members enslaved as bridge ports marked `isolated`: an isolated port
never forwards to another isolated port, so two switches joined by parallel members make no L2
loop, while every member carries the PortChannel's own traffic (the frames the switch sends and
receives). The bridge carries PORTCHANNEL_INTERFACE's addresses, as the team device does on SONiC.
A member losing its carrier drops out of the bridge's forwarding at once and the bridge forgets
the MAC addresses learned on it, so traffic goes on over the others; with no member forwarding the
bridge loses its carrier, and the PortChannel's routes and sessions go down.

- the bridge's MAC address is PORTCHANNEL `system_mac`, else DEVICE_METADATA's `mac` (teammgrd
  gives the team device the switch's MAC), set when the bridge is made so that it never follows
  its members' addresses; each member takes it too, as a team port takes its team's: whatever a
  member sends by itself (an ARP from a socket bound to it) names the PortChannel's MAC, so the
  peer's neighbor entry never points at one member (it would black-hole when that member is lost);
  a released member keeps it;
- `admin_status` is the bridge's admin state, `mtu` its MTU (teammgrd's default 9100);
- `min_links` (teamd's `min_ports`, default 1) is handed to the state side in the bridge's alias
  (`min_links=N`): twin.switch.state.lag holds the PortChannel down while fewer members are up.
"""

from __future__ import annotations

import hashlib
from typing import Any

ConfigTables = dict[str, dict[str, Any]]
DEFAULT_MTU = "9100"   # teammgrd's DEFAULT_MTU_STR
DEFAULT_ADMIN = "up"   # teammgrd's DEFAULT_ADMIN_STATUS_STR
ALIAS_PREFIX = "min_links="


def is_portchannel(name: str) -> bool:
    return name.startswith("PortChannel") and name[len("PortChannel"):].isdigit()


def alias(min_links: int) -> str:
    """The bridge alias carrying `min_links` to the state side."""
    return f"{ALIAS_PREFIX}{min_links}"


def min_links_of(alias_text: str | None) -> int:
    """`min_links` from a bridge's alias (1 when it carries none)."""
    if alias_text and alias_text.startswith(ALIAS_PREFIX) and alias_text[len(ALIAS_PREFIX):].isdigit():
        return max(1, int(alias_text[len(ALIAS_PREFIX):]))
    return 1


def fallback_mac(db: ConfigTables, name: str) -> str:
    """A locally administered MAC for a PortChannel of a config without DEVICE_METADATA `mac`: from
    the hostname and the name, so it is the same on every run and differs between switches."""
    host = str(db.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname", ""))
    digest = hashlib.sha256(f"{host}|{name}".encode()).digest()
    return ":".join(f"{b:02x}" for b in (0x02, *digest[:5]))


def programmed(db: ConfigTables) -> dict[str, dict[str, str]]:
    """What the kernel holds of each PORTCHANNEL of `db`: {name: {admin_status, mtu, min_links, mac}}."""
    mac = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("mac")
    out = {}
    for name, row in db.get("PORTCHANNEL", {}).items():
        if not is_portchannel(name):
            continue
        out[name] = {"admin_status": "up" if str(row.get("admin_status", DEFAULT_ADMIN)) == "up" else "down",
                     "mtu": str(row.get("mtu", DEFAULT_MTU)),
                     "min_links": str(max(1, int(row.get("min_links", 1)))),
                     "mac": str(row.get("system_mac") or mac or fallback_mac(db, name)).lower()}
    return out


def members(db: ConfigTables) -> dict[str, str]:
    """PORTCHANNEL_MEMBER `name|port` keys -> port, for PortChannels `db` declares."""
    channels = db.get("PORTCHANNEL", {})
    return {key: key.split("|", 1)[1] for key in db.get("PORTCHANNEL_MEMBER", {})
            if "|" in key and key.split("|", 1)[0] in channels}


def portchannel_lines(old: ConfigTables, new: ConfigTables, dev: Any) -> tuple[list[str], list[str]]:
    """(lines before addresses change, lines after): bridges made and set, members enslaved before;
    members released and bridges deleted after, once their addresses are gone."""
    first: list[str] = []
    last: list[str] = []
    was, now = programmed(old), programmed(new)
    for name in sorted(now):
        row, before = now[name], was.get(name)
        if before is None:
            first.append(f"link add name {name} address {row['mac']} type bridge mcast_snooping 0")
            before = {"mac": row["mac"]}
        if before["mac"] != row["mac"]:
            first.append(f"link set dev {name} address {row['mac']}")
            first += [f"link set dev {dev(p, p)} address {row['mac']}" for k, p in sorted(members(new).items())
                      if k.split("|", 1)[0] == name and k in members(old)]
        if before.get("mtu") != row["mtu"]:
            first.append(f"link set dev {name} mtu {row['mtu']}")
        if before.get("min_links") != row["min_links"]:
            first.append(f"link set dev {name} alias {alias(int(row['min_links']))}")
        if before.get("admin_status") != row["admin_status"]:
            first.append(f"link set dev {name} {row['admin_status']}")
    m_was, m_now = members(old), members(new)
    for key in sorted(set(m_was) - set(m_now)):
        port = dev(m_was[key], m_was[key])
        (first if key.split("|", 1)[0] in now else last).append(f"link set dev {port} nomaster")
    for key in sorted(set(m_now) - set(m_was)):
        port = dev(m_now[key], m_now[key])
        first += [f"link set dev {port} address {now[key.split('|', 1)[0]]['mac']}",
                  f"link set dev {port} master {key.split('|', 1)[0]}",
                  f"link set dev {port} type bridge_slave isolated on"]
    for name in sorted(set(was) - set(now)):
        last.append(f"link delete dev {name}")
    return first, last
