"""Program a switch's kernel from CONFIG_DB, as SONiC's managers do: `ip -b` lines, pure.

What each SONiC manager does, and twin's kernel equivalent (the kernel is the forwarding plane):
- portmgrd: PORT `admin_status` (YANG default down) and `mtu` -> `link set dev EthernetN`;
- intfmgrd: INTERFACE / LOOPBACK_INTERFACE / VLAN_INTERFACE `name|prefix` keys -> addresses.
  There are no dummy interfaces here, so Loopback0's address goes on `lo`, as SONiC-VS's own
  Loopback0 is a real kernel interface carrying it;
- vlanmgrd: VLAN `VlanN` -> a bridge; SONiC puts every VLAN on one vlan-filtering bridge
  `Bridge` with a `VlanN` SVI on top; twin gives each VLAN a bridge of its own named `VlanN`,
  which routes and switches the same for untagged and tagged members: VLAN_MEMBER `VlanN|EthernetX`
  untagged enslaves the port, tagged enslaves `EthernetX.N`;
- teammgrd / teamd: PORTCHANNEL and PORTCHANNEL_MEMBER -> a bridge per PortChannel with its members
  as isolated ports (twin.switch.config.portchannel), PORTCHANNEL_INTERFACE addresses on it;
MGMT_INTERFACE is not programmed: eth0 is on the lab's management network, whose addresses the
runtime hands out (and writes into MGMT_INTERFACE at boot); a pushed config naming another address
(twin's plan uses fabric.mgmt_pool) would cut the switch off from its gNMI agent.
"""

from __future__ import annotations

from typing import Any

from twin.switch.config.portchannel import portchannel_lines

ConfigTables = dict[str, dict[str, Any]]
_ADDRESS_TABLES = ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE", "PORTCHANNEL_INTERFACE")


def _device(table: str, name: str, dev: Any) -> str:
    """The kernel device carrying an address of `name` (`lo` for every loopback)."""
    if table == "LOOPBACK_INTERFACE":
        return "lo"
    return str(dev(name, name))


def _addresses(db: ConfigTables, table: str) -> dict[str, str]:
    """`name|prefix` keys of `table` -> the interface name."""
    return {key: key.split("|", 1)[0] for key in db.get(table, {}) if "|" in key}


def _vlan_id(vlan: str) -> str:
    return vlan.removeprefix("Vlan")


def _member_device(key: str, row: dict[str, Any], dev: Any) -> str:
    """The kernel device a VLAN_MEMBER enslaves: the port itself untagged, `port.vid` tagged."""
    vlan, port = key.split("|", 1)
    kernel = str(dev(port, port))
    return kernel if row.get("tagging_mode", "untagged") == "untagged" else f"{kernel}.{_vlan_id(vlan)}"


def _port_lines(old: ConfigTables, new: ConfigTables, dev: Any) -> list[str]:
    lines = []
    for port, row in new.get("PORT", {}).items():
        before = old.get("PORT", {}).get(port)
        state = "up" if row.get("admin_status", "down") == "up" else "down"
        if before is None:
            mtu = f" mtu {row['mtu']}" if "mtu" in row else ""
            lines.append(f"link set dev {dev(port, port)}{mtu} {state}")
            continue
        if "mtu" in row and row["mtu"] != before.get("mtu"):
            lines.append(f"link set dev {dev(port, port)} mtu {row['mtu']}")
        if state != ("up" if before.get("admin_status", "down") == "up" else "down"):
            lines.append(f"link set dev {dev(port, port)} {state}")
    return lines


def _vlan_lines(old: ConfigTables, new: ConfigTables, dev: Any) -> tuple[list[str], list[str]]:
    """(lines to run before addresses change, lines after): bridges and members come first,
    removed bridges go last, after their addresses."""
    first, last = [], []
    was, now = old.get("VLAN", {}), new.get("VLAN", {})
    for vlan in sorted(set(now) - set(was)):
        first += [f"link add name {vlan} type bridge", f"link set dev {vlan} up"]
        if "mtu" in now[vlan]:
            first.append(f"link set dev {vlan} mtu {now[vlan]['mtu']}")
    members_was, members_now = old.get("VLAN_MEMBER", {}), new.get("VLAN_MEMBER", {})
    retagged = {k for k in set(members_was) & set(members_now)
                if _member_device(k, members_was[k], dev) != _member_device(k, members_now[k], dev)}
    for key in sorted((set(members_was) - set(members_now)) | retagged):
        member = _member_device(key, members_was[key], dev)
        first.append(f"link delete dev {member}" if "." in member else f"link set dev {member} nomaster")
    for key in sorted((set(members_now) - set(members_was)) | retagged):
        vlan, port = key.split("|", 1)
        member = _member_device(key, members_now[key], dev)
        if "." in member:
            first.append(f"link add link {dev(port, port)} name {member} type vlan id {_vlan_id(vlan)}")
        first += [f"link set dev {member} master {vlan}", f"link set dev {member} up"]
    for vlan in sorted(set(was) - set(now)):
        last.append(f"link delete dev {vlan}")
    return first, last


def kernel_changes(old: ConfigTables, new: ConfigTables, ifmap: dict[str, str] | None = None) -> list[str]:
    """`ip -b` lines turning a kernel programmed from `old` into one programmed from `new`.

    `ifmap` maps SONiC port names to kernel names (identity when absent)."""
    dev = (ifmap or {}).get
    lines = _port_lines(old, new, dev)
    vlans_first, vlans_last = _vlan_lines(old, new, dev)
    lag_first, lag_last = portchannel_lines(old, new, dev)
    lines += vlans_first + lag_first
    for table in _ADDRESS_TABLES:
        was, now = _addresses(old, table), _addresses(new, table)
        for key in sorted(set(was) - set(now)):
            lines.append(f"address del {key.split('|', 1)[1]} dev {_device(table, was[key], dev)}")
        for key in sorted(set(now) - set(was)):
            lines.append(f"address add {key.split('|', 1)[1]} dev {_device(table, now[key], dev)}")
    return lines + vlans_last + lag_last


def kernel_lines(db: ConfigTables, ifmap: dict[str, str] | None = None) -> list[str]:
    """Everything a freshly created switch namespace needs for `db`."""
    return ["link set dev lo up", *kernel_changes({}, db, ifmap)]
