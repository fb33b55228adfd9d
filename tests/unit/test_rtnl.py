"""twin.switch.state.rtnl decodes what pyroute2 decodes: messages encoded by pyroute2, read by both."""

from __future__ import annotations

from typing import Any

from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg
from pyroute2.netlink.rtnl.marshal import MarshalRtnl
from pyroute2.netlink.rtnl.rtmsg import rtmsg

from twin.switch.state import rtnl
from twin.switch.state.producers import counter_row, route_row

IFNAMES = {i: f"Ethernet{4 * i}" for i in range(1, 80)}


def _encoded(msg: Any, kind: int, fields: dict[str, Any], attrs: list[Any]) -> bytes:
    msg["header"]["type"] = kind
    msg["header"]["flags"] = 0
    for key, value in fields.items():
        msg[key] = value
    msg["attrs"] = attrs
    msg.encode()
    return bytes(msg.data)


def _route(dst: str, plen: int, hops: int, kind: int = 24) -> bytes:
    attrs: list[Any] = [("RTA_TABLE", 254), ("RTA_DST", dst), ("RTA_PRIORITY", 20)]
    if hops > 1:
        attrs.append(("RTA_MULTIPATH", [{"oif": i + 1, "hops": 0, "attrs": [("RTA_GATEWAY", f"10.0.{i}.1")]}
                                        for i in range(hops)]))
    else:
        attrs += [("RTA_GATEWAY", "10.0.0.1"), ("RTA_OIF", 1)]
    return _encoded(rtmsg(), kind, {"family": 2, "dst_len": plen, "table": 254, "proto": 186, "scope": 0,
                                    "type": 1}, attrs)


def _link(index: int, name: str, flags: int, stats: dict[str, int], kind: int = 16) -> bytes:
    return _encoded(ifinfmsg(), kind, {"family": 0, "index": index, "flags": flags, "change": 0},
                    [("IFLA_IFNAME", name), ("IFLA_MTU", 9100), ("IFLA_STATS64", stats)])


def both(data: bytes) -> list[tuple[rtnl.Message, Any]]:
    mine, theirs = rtnl.parse(data), list(MarshalRtnl().parse(data))
    assert len(mine) == len(theirs)
    return list(zip(mine, theirs, strict=True))


def test_wide_ecmp_and_single_path_routes_make_the_same_rows() -> None:
    data = _route("10.1.0.4", 32, 64) + _route("10.2.0.0", 24, 1) + _route("10.3.0.0", 24, 2, kind=25)
    pairs = both(data)
    for mine, theirs in pairs:
        assert mine["event"] == theirs["event"]
        assert mine["table"] == theirs["table"] and mine["dst_len"] == theirs["dst_len"]
        assert mine.get_attr("RTA_DST") == theirs.get_attr("RTA_DST")
        assert route_row(mine, IFNAMES) == route_row(theirs, IFNAMES)
    key, row = route_row(pairs[0][0], IFNAMES) or ("", {})
    assert key == "10.1.0.4" and len(row["nexthop"].split(",")) == 64
    assert pairs[2][0]["event"] == "RTM_DELROUTE"


def test_links_give_the_same_names_flags_and_counters() -> None:
    stats = {"rx_packets": 11, "tx_packets": 22, "rx_bytes": 3300, "tx_bytes": 4400, "rx_errors": 1,
             "tx_errors": 2, "rx_dropped": 3, "tx_dropped": 4, "multicast": 5, "collisions": 0}
    data = _link(7, "Ethernet24", 0x10043, stats) + _link(8, "Ethernet28", 0x1002, stats, kind=17)
    for mine, theirs in both(data):
        assert (mine["event"], mine["index"], mine["flags"]) == (theirs["event"], theirs["index"], theirs["flags"])
        assert mine.get_attr("IFLA_IFNAME") == theirs.get_attr("IFLA_IFNAME")
        assert mine.get_attr("IFLA_MTU") == theirs.get_attr("IFLA_MTU") == 9100
        assert counter_row(mine.get_attr("IFLA_STATS64")) == counter_row(theirs.get_attr("IFLA_STATS64"))
    assert counter_row(rtnl.parse(data)[0].get_attr("IFLA_STATS64"))["SAI_PORT_STAT_IF_IN_OCTETS"] == "3300"


def test_the_end_of_a_dump_is_seen() -> None:
    done = (16).to_bytes(4, "little") + (3).to_bytes(2, "little") + bytes(10)
    assert [m["header"]["type"] for m in rtnl.parse(_route("10.1.0.4", 32, 2) + done)] == [24, 3]


def test_the_checks_fib_reads_bgp_routes_as_ip_json_lists_them() -> None:
    """collect_local's FIB, dumped over rtnetlink: entries shaped as `ip -j route show proto bgp`'s
    (a host route's dst without /32, nexthops only for ECMP), other protocols and tables left out."""
    from twin.checks.collect_local import fib_entry
    from twin.checks.ecmp import fib_widths

    kernel = _encoded(rtmsg(), 24, {"family": 2, "dst_len": 31, "table": 254, "proto": 2, "scope": 253,
                                    "type": 1}, [("RTA_TABLE", 254), ("RTA_DST", "10.0.0.64"), ("RTA_OIF", 1)])
    local = _encoded(rtmsg(), 24, {"family": 2, "dst_len": 32, "table": 255, "proto": 186, "scope": 0,
                                   "type": 1}, [("RTA_TABLE", 255), ("RTA_DST", "10.9.9.9"), ("RTA_OIF", 1)])
    msgs = rtnl.parse(_route("10.1.0.4", 32, 4) + _route("10.2.0.0", 24, 1) + kernel + local)
    entries = [fib_entry(m) for m in msgs]
    assert entries[2:] == [None, None]
    assert entries[0] == {"dst": "10.1.0.4", "nexthops": tuple({"gateway": f"10.0.{i}.1"} for i in range(4))}
    assert fib_entry(msgs[0]) is not entries[0] and fib_entry(msgs[0])["nexthops"] is entries[0]["nexthops"]
    assert entries[1] == {"dst": "10.2.0.0/24", "gateway": "10.0.0.1"}
    assert fib_widths([e for e in entries if e]) == {"10.1.0.4/32": 4, "10.2.0.0/24": 1}


def test_routes_sharing_their_next_hops_decode_them_once_and_each_reads_its_own() -> None:
    """A leaf's dump repeats one 64-way RTA_MULTIPATH for every other leaf: it is decoded once, and
    every route still reads its next hops as pyroute2 does; a route with other next hops reads those."""
    rtnl._hops.cache_clear()
    data = b"".join(_route(f"10.1.0.{i}", 32, 64) for i in range(1, 11)) + _route("10.2.0.0", 24, 2)
    pairs = both(data)
    for mine, theirs in pairs:
        assert route_row(mine, IFNAMES) == route_row(theirs, IFNAMES)
        oifs = [h["oif"] for h in theirs.get_attr("RTA_MULTIPATH")]
        assert [h["oif"] for h in mine.get_attr("RTA_MULTIPATH")] == oifs
    info = rtnl._hops.cache_info()
    assert info.misses == 2   # the 64-way set once, the 2-way set once
    assert info.hits >= 9 * 2  # route_row and the oif list above, for the nine repeats
    widest = pairs[0][0].get_attr("RTA_MULTIPATH")
    assert [h.get_attr("RTA_GATEWAY") for h in widest] == [f"10.0.{i}.1" for i in range(64)]
    shared = pairs[1][0].get_attr("RTA_MULTIPATH")
    assert widest is shared and isinstance(shared, tuple)   # one read-only tuple for every route by the set


def test_routes_by_one_next_hop_set_are_joined_once_while_the_interface_names_hold() -> None:
    """route_row joins a multipath set's next hops once per set (`paths`), as long as the names of the
    interfaces hold; given other names, the producers give it an empty `paths` (SwitchProducers)."""
    rtnl._hops.cache_clear()
    data = b"".join(_route(f"10.1.0.{i}", 32, 64) for i in range(1, 6)) + _route("10.2.0.0", 24, 2)
    mine = rtnl.parse(data)
    paths: dict[Any, Any] = {}
    rows = [route_row(m, IFNAMES, paths) for m in mine]
    assert rows == [route_row(m, IFNAMES) for m in mine]
    assert len(paths) == 2   # the 64-way set and the 2-way set
    first, second = rows[0], rows[1]
    assert first is not None and second is not None
    assert first[1]["nexthop"] is second[1]["nexthop"] and first[1]["ifname"] is second[1]["ifname"]
    renamed = {**IFNAMES, 1: "Ethernet999"}
    paths.clear()
    again = route_row(mine[0], renamed, paths)
    assert again is not None and again[1]["ifname"].startswith("Ethernet999,")


def test_a_producer_forgets_joined_next_hops_when_an_interface_is_renamed_or_removed() -> None:
    from twin.switch.state.producers import SwitchProducers
    producers = SwitchProducers.__new__(SwitchProducers)   # no switch: _link of a link that is no port
    producers.ifnames, producers.links, producers.paths = {}, {}, {}
    producers._link(rtnl.parse(_link(1, "uplink1", 0x10041, {}))[0], None)  # type: ignore[arg-type]
    producers.paths = {("set",): ("a", "b")}
    producers._link(rtnl.parse(_link(1, "uplink1", 0x10041, {}))[0], None)  # type: ignore[arg-type]
    assert producers.paths == {("set",): ("a", "b")}   # the same name again: kept
    producers._link(rtnl.parse(_link(1, "uplink2", 0x10041, {}))[0], None)  # type: ignore[arg-type]
    assert producers.paths == {} and producers.ifnames[1] == "uplink2"
    producers.paths[("set",)] = ("a", "b")
    producers._link(rtnl.parse(_link(1, "uplink2", 0, {}, kind=17))[0], None)  # type: ignore[arg-type]
    assert producers.paths == {} and 1 not in producers.ifnames
