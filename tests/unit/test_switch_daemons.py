"""The pure parts of the switch's SONiC daemons: kernel programming, state rows, CLI output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from twin.switch.cli.sonic_cli import format_reply, tool_argv
from twin.switch.config.cfgmgr import keyspace_key
from twin.switch.config.kernel import kernel_changes, kernel_lines
from twin.switch.redis.redis_server import database_config, redis_argv
from twin.switch.redis.sonic_redis import as_stored
from twin.switch.state.producers import (
    bfd_rows,
    neigh_rows,
    port_oid,
    port_rows,
    route_key,
    route_row,
)

# -- kernel (portmgrd, intfmgrd, vlanmgrd) ------------------------------------------------------

T0 = {
    "PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9100"}, "Ethernet8": {"admin_status": "up"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.1/31": {}},
    "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}},
    "VLAN": {"Vlan1000": {"vlanid": "1000"}},
    "VLAN_MEMBER": {"Vlan1000|Ethernet8": {"tagging_mode": "untagged"}},
    "VLAN_INTERFACE": {"Vlan1000": {}, "Vlan1000|192.168.0.1/24": {}},
    "MGMT_INTERFACE": {"eth0|172.20.20.2/24": {"gwaddr": "172.20.20.1"}},
}


def test_a_fresh_switch_gets_ports_addresses_and_a_bridge_per_vlan() -> None:
    lines = kernel_lines(T0)
    assert lines[0] == "link set dev lo up"
    assert "link set dev Ethernet0 mtu 9100 up" in lines
    assert "address add 10.1.0.1/32 dev lo" in lines
    bridge = lines.index("link add name Vlan1000 type bridge")
    enslave = lines.index("link set dev Ethernet8 master Vlan1000")
    svi = lines.index("address add 192.168.0.1/24 dev Vlan1000")
    assert bridge < enslave < svi
    assert not any("eth0" in line for line in lines), "the runtime addresses eth0"


def test_port_admin_status_defaults_down_as_sonic_yang() -> None:
    assert kernel_lines({"PORT": {"Ethernet4": {}}}) == ["link set dev lo up", "link set dev Ethernet4 down"]


def test_tagged_member_is_a_vlan_subinterface_and_goes_away_with_it() -> None:
    tagged = {**T0, "VLAN_MEMBER": {"Vlan1000|Ethernet8": {"tagging_mode": "tagged"}}}
    lines = kernel_changes(T0, tagged)
    assert lines == ["link set dev Ethernet8 nomaster", "link add link Ethernet8 name Ethernet8.1000 type vlan id 1000",
                     "link set dev Ethernet8.1000 master Vlan1000", "link set dev Ethernet8.1000 up"]
    assert kernel_changes(tagged, T0)[0] == "link delete dev Ethernet8.1000"


def test_removing_a_vlan_removes_its_address_before_its_bridge() -> None:
    gone = {t: r for t, r in T0.items() if t not in ("VLAN", "VLAN_MEMBER", "VLAN_INTERFACE")}
    lines = kernel_changes(T0, gone)
    assert lines == ["link set dev Ethernet8 nomaster", "address del 192.168.0.1/24 dev Vlan1000",
                     "link delete dev Vlan1000"]


def test_only_changes_are_programmed() -> None:
    assert kernel_changes(T0, T0) == []
    down = {**T0, "PORT": {**T0["PORT"], "Ethernet0": {"admin_status": "down", "mtu": "9100"}}}
    assert kernel_changes(T0, down) == ["link set dev Ethernet0 down"]
    moved = {**T0, "MGMT_INTERFACE": {"eth0|172.20.20.9/24": {}}}
    assert kernel_changes(T0, moved) == [], "eth0 keeps the lab's management address"


def test_kernel_names_follow_the_ifmap() -> None:
    assert "link set dev e1-1 mtu 9100 up" in kernel_lines(T0, ifmap={"Ethernet0": "e1-1"})


# -- state rows (portsyncd, fpmsyncd, bgpmon, BFD) -----------------------------------------------

def test_port_rows_oper_needs_admin_and_carrier() -> None:
    up = 0x1 | 0x10000
    assert port_rows(up, 9100) == ({"state": "ok", "netdev_oper_status": "up", "admin_status": "up", "mtu": "9100"},
                                   {"oper_status": "up", "admin_status": "up", "mtu": "9100"})
    assert port_rows(0x1, 9100)[0]["netdev_oper_status"] == "down"  # no carrier
    assert port_rows(0x10000, 1500)[1] == {"oper_status": "down", "admin_status": "down", "mtu": "1500"}


class _Msg(dict[str, Any]):
    """A decoded netlink message as pyroute2 gives it: fields by key, attributes by get_attr."""

    def __init__(self, attrs: dict[str, Any], **fields: Any) -> None:
        super().__init__(fields)
        self.attrs = attrs

    def get_attr(self, name: str) -> Any:
        return self.attrs.get(name)


def _hop(gateway: str, oif: int) -> _Msg:
    return _Msg({"RTA_GATEWAY": gateway}, oif=oif)


IFNAMES = {2: "Ethernet0", 3: "Ethernet4", 9: "eth0"}


def _route(dst: str, plen: int, proto: int = 186, **attrs: Any) -> _Msg:
    return _Msg({"RTA_DST": dst, **attrs}, table=254, type=1, proto=proto, dst_len=plen)


def test_route_rows_are_keyed_and_shaped_as_fpmsyncd_writes_them() -> None:
    ecmp = _route("10.1.0.4", 32, RTA_MULTIPATH=[_hop("10.0.0.0", 2), _hop("10.0.0.2", 3)])
    assert route_row(ecmp, IFNAMES) == ("10.1.0.4", {"nexthop": "10.0.0.0,10.0.0.2",
                                                     "ifname": "Ethernet0,Ethernet4", "protocol": "bgp"})
    single = _route("10.2.0.0", 24, RTA_GATEWAY="10.0.0.0", RTA_OIF=2)
    assert route_row(single, IFNAMES) == ("10.2.0.0/24", {"nexthop": "10.0.0.0", "ifname": "Ethernet0",
                                                          "protocol": "bgp"})


@pytest.mark.parametrize("route", [
    _route("10.0.0.0", 31, proto=2, RTA_OIF=2),                      # connected: zebra's FPM does not send it
    _route("0.0.0.0", 0, proto=3, RTA_GATEWAY="172.20.20.1", RTA_OIF=9),  # management default
    _route("10.9.0.0", 24, RTA_GATEWAY="172.20.20.1", RTA_OIF=9),    # anything through eth0
], ids=["connected", "boot", "via-eth0"])
def test_routes_fpmsyncd_would_not_hear_of_are_left_out(route: _Msg) -> None:
    assert route_row(route, IFNAMES) is None


def test_route_key_of_the_default_and_of_prefixes() -> None:
    assert (route_key(None, 0), route_key("10.1.0.1", 32), route_key("10.2.0.0", 24)) == (
        "0.0.0.0/0", "10.1.0.1", "10.2.0.0/24")


def test_neigh_rows_as_bgpmon_writes_them() -> None:
    summary = {"ipv4Unicast": {"as": 65101, "peers": {
        "10.0.0.64": {"state": "Established", "remoteAs": 65100, "localAs": 65101},
        "10.0.0.66": {"state": "Active", "remoteAs": 65101, "localAs": 65101}}}}
    assert neigh_rows(summary) == {"10.0.0.64": {"state": "Established", "peerType": "e-BGP"},
                                   "10.0.0.66": {"state": "Active", "peerType": "i-BGP"}}
    assert neigh_rows({}) == {}


def test_bfd_rows_carry_no_ever_changing_uptime() -> None:
    rows = bfd_rows([{"peer": "10.0.0.64", "interface": "Ethernet128", "status": "up", "local": "10.0.0.65",
                      "detect-multiplier": 3, "receive-interval": 300, "transmit-interval": 300, "uptime": 12}])
    assert rows == {"default|Ethernet128|10.0.0.64": {"state": "Up", "local_addr": "10.0.0.65",
                                                      "type": "async_active", "multiplier": "3",
                                                      "rx_interval": "300", "tx_interval": "300"}}


def test_port_oids_are_distinct_per_port() -> None:
    assert port_oid("Ethernet0") != port_oid("Ethernet4")


# -- redis layout, CLI ----------------------------------------------------------------------------

def test_redis_runs_inside_the_switch_with_keyspace_events(tmp_path: Path) -> None:
    argv = redis_argv(tmp_path)
    assert argv[argv.index("--bind") + 1] == "127.0.0.1" and argv[argv.index("--port") + 1] == "6379"
    assert argv[argv.index("--notify-keyspace-events") + 1] == "AKE"
    assert argv[argv.index("--unixsocket") + 1] == str(tmp_path / "redis.sock")
    assert argv[argv.index("--hz") + 1] == "1"  # housekeeping once a second: see redis_argv
    assert argv[argv.index("--client-output-buffer-limit") + 1] == "pubsub 0 0 0"  # as SONiC's redis.conf
    layout = database_config(tmp_path)["DATABASES"]
    assert (layout["CONFIG_DB"]["id"], layout["STATE_DB"]["separator"], layout["APPL_DB"]["id"]) == (4, "|", 0)


def test_config_read_back_from_redis_is_all_strings() -> None:
    assert as_stored({"PORT": {"Ethernet0": {"index": 1, "lanes": "0,1"}},
                      "BGP_PEER_GROUP_AF": {"x": {"route_map_in": ["A"]}}, "VLAN": {"Vlan1": {}}}) == {
        "PORT": {"Ethernet0": {"index": "1", "lanes": "0,1"}},
        "BGP_PEER_GROUP_AF": {"x": {"route_map_in": ["A"]}}, "VLAN": {"Vlan1": {}}}


def test_sonic_db_cli_prints_as_sonic_does() -> None:
    assert format_reply("hgetall", {"mtu": "9100", "admin_status": "up"}) == "{'mtu': '9100', 'admin_status': 'up'}\n"
    assert format_reply("keys", ["PORT|Ethernet0", "PORT|Ethernet4"]) == "PORT|Ethernet0\nPORT|Ethernet4\n"
    assert format_reply("hget", None) == ""
    assert format_reply("ping", True) == "True\n"


def test_sonic_tools_run_against_the_switch_run_dir(tmp_path: Path) -> None:
    argv = tool_argv(tmp_path, ["sonic-db-cli", "CONFIG_DB", "keys", "*"])
    assert argv is not None and argv[-5:] == [str(tmp_path), "sonic-db-cli", "CONFIG_DB", "keys", "*"]
    assert tool_argv(tmp_path, ["ip", "link"]) is None


def test_keyspace_channel_names_the_config_key() -> None:
    assert keyspace_key("__keyspace@4__:PORT|Ethernet0") == "PORT|Ethernet0"
    assert keyspace_key("__keyspace@6__:PORT_TABLE|Ethernet0") is None
