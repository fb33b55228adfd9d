"""PortChannels: the kernel lines CONFIG_DB's PORTCHANNEL tables give, read back, and teamsyncd's rows
from canned link states (twin.switch.config.portchannel, twin.switch.state.lag)."""

from __future__ import annotations

from typing import Any

from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg

from twin.switch.config.kernel import kernel_changes
from twin.switch.config.kernel_state import observed
from twin.switch.state import rtnl
from twin.switch.state.lag import IFF_LOWER_UP, IFF_UP, Link, lag_state, link_of, port_state_lines

UP, NO_CARRIER, DOWN = IFF_UP | IFF_LOWER_UP, IFF_UP, 0


def _config(**portchannel: Any) -> dict[str, dict[str, Any]]:
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "mac": "52:54:00:0A:00:01"}},
        "PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9100"},
                 "Ethernet4": {"admin_status": "up", "mtu": "9100"}},
        "PORTCHANNEL": {"PortChannel1": {"admin_status": "up", **portchannel}},
        "PORTCHANNEL_MEMBER": {"PortChannel1|Ethernet0": {}, "PortChannel1|Ethernet4": {}},
        "PORTCHANNEL_INTERFACE": {"PortChannel1": {}, "PortChannel1|10.255.0.0/31": {}},
    }


def test_a_portchannel_is_a_bridge_of_isolated_members_with_the_switch_mac_and_its_address() -> None:
    base = {k: v for k, v in _config().items() if k in ("DEVICE_METADATA", "PORT")}
    lines = kernel_changes(base, _config(min_links="2"))
    assert lines == [
        "link add name PortChannel1 address 52:54:00:0a:00:01 type bridge mcast_snooping 0",
        "link set dev PortChannel1 mtu 9100",
        "link set dev PortChannel1 alias min_links=2",
        "link set dev PortChannel1 up",
        "link set dev Ethernet0 address 52:54:00:0a:00:01",
        "link set dev Ethernet0 master PortChannel1",
        "link set dev Ethernet0 type bridge_slave isolated on",
        "link set dev Ethernet4 address 52:54:00:0a:00:01",
        "link set dev Ethernet4 master PortChannel1",
        "link set dev Ethernet4 type bridge_slave isolated on",
        "address add 10.255.0.0/31 dev PortChannel1",
    ]


def test_changes_send_only_the_difference_and_removal_frees_members_after_the_address() -> None:
    assert kernel_changes(_config(), _config(min_links="2", admin_status="down")) == [
        "link set dev PortChannel1 alias min_links=2", "link set dev PortChannel1 down"]
    one = _config()
    del one["PORTCHANNEL_MEMBER"]["PortChannel1|Ethernet4"]
    assert kernel_changes(_config(), one) == ["link set dev Ethernet4 nomaster"]
    gone = {k: v for k, v in _config().items() if not k.startswith("PORTCHANNEL")}
    assert kernel_changes(_config(), gone) == [
        "address del 10.255.0.0/31 dev PortChannel1",
        "link set dev Ethernet0 nomaster", "link set dev Ethernet4 nomaster", "link delete dev PortChannel1"]


def test_system_mac_wins_and_a_config_without_a_mac_gets_one_per_switch() -> None:
    lines = kernel_changes({}, _config(system_mac="02:00:00:00:00:09"))
    assert "link add name PortChannel1 address 02:00:00:00:00:09 type bridge mcast_snooping 0" in lines
    assert kernel_changes(_config(), _config(system_mac="02:00:00:00:00:09")) == [
        "link set dev PortChannel1 address 02:00:00:00:00:09", "link set dev Ethernet0 address 02:00:00:00:00:09",
        "link set dev Ethernet4 address 02:00:00:00:00:09"]
    a, b = _config(), _config()
    del a["DEVICE_METADATA"]["localhost"]["mac"], b["DEVICE_METADATA"]["localhost"]["mac"]
    b["DEVICE_METADATA"]["localhost"]["hostname"] = "spine1"
    assert kernel_changes({}, a)[2] != kernel_changes({}, b)[2]


def test_the_kernel_read_back_needs_no_lines() -> None:
    links = [
        {"ifname": "Ethernet0", "flags": ["UP", "LOWER_UP"], "mtu": 9100, "master": "PortChannel1", "addr_info": []},
        {"ifname": "Ethernet4", "flags": ["UP"], "mtu": 9100, "master": "PortChannel1", "addr_info": []},
        {"ifname": "PortChannel1", "flags": ["UP"], "mtu": 9100, "address": "52:54:00:0a:00:01",
         "addr_info": [{"family": "inet", "local": "10.255.0.0", "prefixlen": 31, "scope": "global"}]},
    ]
    assert kernel_changes(observed(links, _config()), _config()) == []
    links[1].pop("master")
    links[2]["flags"] = []
    assert kernel_changes(observed(links, _config()), _config()) == [
        "link set dev PortChannel1 up", "link set dev Ethernet4 address 52:54:00:0a:00:01",
        "link set dev Ethernet4 master PortChannel1", "link set dev Ethernet4 type bridge_slave isolated on"]


def _links(pc_flags: int = UP, min_links: int = 1, **members: int) -> dict[int, Link]:
    out = {10: Link("PortChannel1", pc_flags, 9100, None, f"min_links={min_links}")}
    for i, (name, flags) in enumerate(sorted(members.items())):
        out[i + 1] = Link(name, flags, 9100, 10)
    out[9] = Link("Ethernet8", UP, 9100)   # not a member
    return out


def test_teamsyncd_rows_with_every_member_up() -> None:
    state = lag_state(_links(Ethernet0=UP, Ethernet4=UP))
    assert state.appl_lag == {"PortChannel1": {"admin_status": "up", "oper_status": "up", "mtu": "9100"}}
    assert state.state_lag == {"PortChannel1": {"state": "ok", "admin_status": "up", "oper_status": "up",
                                                "mtu": "9100", "min_links": "1"}}
    assert state.appl_members == {"PortChannel1:Ethernet0": {"status": "enabled"},
                                  "PortChannel1:Ethernet4": {"status": "enabled"}}
    assert state.state_members == {"PortChannel1|Ethernet0": {"status": "enabled"},
                                   "PortChannel1|Ethernet4": {"status": "enabled"}}
    assert state.held == {}


def test_a_member_lost_is_disabled_and_the_last_takes_the_portchannel_down() -> None:
    one = lag_state(_links(Ethernet0=NO_CARRIER, Ethernet4=UP))
    assert one.state_lag["PortChannel1"]["oper_status"] == "up"
    assert one.state_members["PortChannel1|Ethernet0"] == {"status": "disabled"}
    assert one.state_members["PortChannel1|Ethernet4"] == {"status": "enabled"}
    none = lag_state(_links(Ethernet0=NO_CARRIER, Ethernet4=DOWN))
    assert none.appl_lag["PortChannel1"]["oper_status"] == "down"
    assert set(s["status"] for s in none.state_members.values()) == {"disabled"}
    assert none.held == {}   # nothing up to hold: the bridge has no carrier of its own


def test_min_links_holds_the_portchannel_down_with_members_up() -> None:
    state = lag_state(_links(min_links=2, Ethernet0=UP, Ethernet4=NO_CARRIER))
    assert state.state_lag["PortChannel1"]["oper_status"] == "down"
    assert state.state_lag["PortChannel1"]["min_links"] == "2"
    assert state.state_members["PortChannel1|Ethernet0"] == {"status": "disabled"}
    assert state.held == {"PortChannel1": ["Ethernet0"]}
    assert lag_state(_links(min_links=2, Ethernet0=UP, Ethernet4=UP)).held == {}
    down = lag_state(_links(pc_flags=DOWN, Ethernet0=UP, Ethernet4=UP))
    assert down.state_lag["PortChannel1"]["oper_status"] == "down" and down.held == {}


def test_held_members_are_disabled_once_per_link_state_and_forward_again_when_released() -> None:
    lines, held = port_state_lines({"PortChannel1": ["Ethernet0"]}, {}, {"Ethernet0": UP})
    assert lines == ["link set dev Ethernet0 state 0"]
    again, held = port_state_lines({"PortChannel1": ["Ethernet0"]}, held, {"Ethernet0": UP})
    assert again == []   # its own bridge event changes nothing: no loop
    flapped, held = port_state_lines({"PortChannel1": ["Ethernet0"]}, held, {"Ethernet0": UP | 0x2})
    assert flapped == ["link set dev Ethernet0 state 0"]   # the kernel forwards a port whose carrier returned
    released, held = port_state_lines({}, held, {"Ethernet0": UP})
    assert released == ["link set dev Ethernet0 state 3"] and held == {}


def test_link_events_carry_master_and_alias_and_bridge_port_events_are_skipped() -> None:
    def encoded(family: int) -> bytes:
        msg = ifinfmsg()
        msg["header"]["type"] = 16
        msg.update({"family": family, "index": 3, "flags": UP, "change": 0})
        msg["attrs"] = [("IFLA_IFNAME", "Ethernet0"), ("IFLA_MTU", 9100), ("IFLA_MASTER", 10),
                        ("IFLA_IFALIAS", "min_links=3")]
        msg.encode()
        return bytes(msg.data)

    link = link_of(rtnl.parse(encoded(0))[0])
    assert link == Link("Ethernet0", UP, 9100, 10, "min_links=3")
    assert link_of(rtnl.parse(encoded(7))[0]) is None
