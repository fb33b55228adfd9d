"""Decoding the rtnetlink messages the state producers read: links (RTM_NEWLINK/DELLINK) and routes
(RTM_NEWROUTE/DELROUTE), with only the attributes portsyncd, fpmsyncd and the counter poller use, and
the queueing disciplines of a qdisc dump (RTM_NEWQDISC: their kind and statistics, `qdisc_stats`).

pyroute2's marshal decodes every attribute of every message through generic Python objects: a
64-way ECMP route costs it ~3 ms, so reading one leaf of the 64 x 128 fabric (127 such routes, and
its 130 links with their statistics) took over a second, and an agent serving 192 switches spent
minutes starting. These are the kernel's fixed layouts (linux/rtnetlink.h, linux/if_link.h) read
with `struct`, exposing what pyroute2's messages expose to the producers: `msg["event"]`, the
header fields by name, and `get_attr(name)`. tests/unit/test_rtnl.py checks them against pyroute2.
"""

from __future__ import annotations

import functools
import socket
import struct
from typing import Any, NamedTuple

NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWQDISC = 36
EVENTS = {16: "RTM_NEWLINK", 17: "RTM_DELLINK", 24: "RTM_NEWROUTE", 25: "RTM_DELROUTE"}

_NLMSGHDR = struct.Struct("=LHHLL")
_IFINFOMSG = struct.Struct("=BxHiII")
_RTMSG = struct.Struct("=BBBBBBBBI")
_RTATTR = struct.Struct("=HH")
_RTNEXTHOP = struct.Struct("=HBBi")
_TCMSG = struct.Struct("=BxHiIII")
_U32 = struct.Struct("=I")
_U64 = struct.Struct("=Q")
_STATS_BASIC = struct.Struct("=QI")      # struct gnet_stats_basic: bytes, packets
_STATS_QUEUE = struct.Struct("=IIIII")   # struct gnet_stats_queue: qlen, backlog, drops, requeues, overlimits

IFLA_IFNAME, IFLA_MTU, IFLA_MASTER, IFLA_IFALIAS, IFLA_STATS64 = 3, 4, 10, 20, 23
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_MULTIPATH = 1, 4, 5, 9
TCA_KIND, TCA_STATS2 = 1, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_PKT64 = 1, 3, 8   # nested in TCA_STATS2 (linux/gen_stats.h)
# struct rtnl_link_stats64, in order (the counters SONiC's PORT_STAT reads come first)
STATS64 = ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors", "tx_errors", "rx_dropped",
           "tx_dropped", "multicast", "collisions")


def _align(n: int) -> int:
    return (n + 3) & ~3


def _attrs(data: bytes, start: int, end: int) -> dict[int, bytes]:
    """rtattr type -> payload, for the attributes between `start` and `end`."""
    out: dict[int, bytes] = {}
    pos = start
    while pos + 4 <= end:
        length, kind = _RTATTR.unpack_from(data, pos)
        if length < 4:
            break
        out[kind & 0x3FFF] = data[pos + 4:pos + length]   # without NLA_F_NESTED / NLA_F_NET_BYTEORDER
        pos += _align(length)
    return out


def _address(raw: bytes) -> str:
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


class Nexthop:
    """One path of a multipath route: `hop["oif"]`, `hop.get_attr("RTA_GATEWAY")` (decoded once)."""

    __slots__ = ("gateway", "oif")

    def __init__(self, oif: int, attrs: dict[int, bytes]) -> None:
        self.oif = oif
        raw = attrs.get(RTA_GATEWAY)
        self.gateway = _address(raw) if raw else None

    def __getitem__(self, key: str) -> int:
        if key != "oif":
            raise KeyError(key)
        return self.oif

    def get_attr(self, name: str) -> Any:
        return self.gateway if name == "RTA_GATEWAY" else None


class Message:
    """One decoded message; header and body fields by pyroute2's names."""

    def __init__(self, kind: int, fields: dict[str, Any], attrs: dict[int, bytes], seq: int = 0) -> None:
        self.fields = fields
        self.fields["header"] = {"type": kind, "sequence_number": seq}
        self.fields["event"] = EVENTS.get(kind, str(kind))
        self.attrs = attrs

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def get_attr(self, name: str) -> Any:
        return _DECODERS[name](self.attrs) if name in _DECODERS else None


def _string(kind: int) -> Any:
    return lambda attrs: attrs[kind].split(b"\0", 1)[0].decode() if kind in attrs else None


def _u32(kind: int) -> Any:
    return lambda attrs: _U32.unpack(attrs[kind][:4])[0] if kind in attrs else None


def _ip(kind: int) -> Any:
    return lambda attrs: _address(attrs[kind]) if kind in attrs else None


def _stats64(attrs: dict[int, bytes]) -> dict[str, int] | None:
    raw = attrs.get(IFLA_STATS64)
    if raw is None:
        return None
    values = struct.unpack_from(f"={len(STATS64)}Q", raw)
    return dict(zip(STATS64, values, strict=True))


def _multipath(attrs: dict[int, bytes]) -> tuple[Nexthop, ...] | None:
    """The route's paths: one tuple per distinct payload, shared by every route by it (read only)."""
    raw = attrs.get(RTA_MULTIPATH)
    return None if raw is None else _hops(raw)


# A leaf's routes to the other leaves all go by the same next hops: at 64 x 128 one dump holds 127
# copies of one 64-way RTA_MULTIPATH, which decoded afresh each time cost the health poll and the
# state producers 20-40 ms a leaf. Decoded once per distinct payload (a dump needs one or two).
MULTIPATH_CACHE = 64


def nexthops(raw: bytes) -> tuple[Nexthop, ...]:
    """The paths of one RTA_MULTIPATH payload, decoded once per distinct payload (shared: read only)."""
    return _hops(raw)


@functools.lru_cache(maxsize=MULTIPATH_CACHE)
def _hops(raw: bytes) -> tuple[Nexthop, ...]:
    hops, pos = [], 0
    while pos + _RTNEXTHOP.size <= len(raw):
        length, _flags, _count, ifindex = _RTNEXTHOP.unpack_from(raw, pos)
        if length < _RTNEXTHOP.size:
            break
        hops.append(Nexthop(ifindex, _attrs(raw, pos + _RTNEXTHOP.size, pos + length)))
        pos += _align(length)
    return tuple(hops)


_DECODERS: dict[str, Any] = {
    "IFLA_IFNAME": _string(IFLA_IFNAME), "IFLA_MTU": _u32(IFLA_MTU), "IFLA_STATS64": _stats64,
    "IFLA_MASTER": _u32(IFLA_MASTER), "IFLA_IFALIAS": _string(IFLA_IFALIAS),
    "RTA_DST": _ip(RTA_DST), "RTA_GATEWAY": _ip(RTA_GATEWAY), "RTA_OIF": _u32(RTA_OIF),
    "RTA_MULTIPATH": _multipath,
}


class QdiscStats(NamedTuple):
    """A queueing discipline's statistics, what the queue counters read of each (`qdisc_stats`)."""

    ifindex: int     # its device
    parent: int      # major << 16 | minor
    kind: str
    packets: int
    bytes: int
    drops: int
    backlog: int


def _qdisc_stats(data: bytes, pos: int, end: int) -> QdiscStats:
    _family, _pad, index, _handle, parent, _info = _TCMSG.unpack_from(data, pos)
    kind = ""
    packets = nbytes = drops = backlog = 0
    pkt64: int | None = None
    a = pos + _TCMSG.size
    while a + 4 <= end:
        length, atype = _RTATTR.unpack_from(data, a)
        if length < 4:
            break
        atype &= 0x3FFF
        if atype == TCA_KIND:
            kind = data[a + 4:a + length].split(b"\0", 1)[0].decode()
        elif atype == TCA_STATS2:
            n, stop = a + 4, a + length
            while n + 4 <= stop:
                nlen, ntype = _RTATTR.unpack_from(data, n)
                if nlen < 4:
                    break
                ntype &= 0x3FFF
                if ntype == TCA_STATS_BASIC and nlen - 4 >= _STATS_BASIC.size:
                    nbytes, packets = _STATS_BASIC.unpack_from(data, n + 4)
                elif ntype == TCA_STATS_PKT64 and nlen - 4 >= _U64.size:
                    pkt64 = _U64.unpack_from(data, n + 4)[0]
                elif ntype == TCA_STATS_QUEUE and nlen - 4 >= _STATS_QUEUE.size:
                    _qlen, backlog, drops, _requeues, _over = _STATS_QUEUE.unpack_from(data, n + 4)
                n += _align(nlen)
        a += _align(length)
    return QdiscStats(index, parent, kind, packets if pkt64 is None else pkt64, nbytes, drops, backlog)


def qdisc_stats(data: bytes) -> list[tuple[int, int, QdiscStats | None]]:
    """(type, sequence number, stats of an RTM_NEWQDISC or None) of every message in one datagram: the
    queue counters' read of a qdisc dump, without parse's generic objects (a 128-port switch's dump
    holds 1,400 qdiscs; parse takes five times as long over them)."""
    out: list[tuple[int, int, QdiscStats | None]] = []
    pos = 0
    while pos + _NLMSGHDR.size <= len(data):
        length, kind, _flags, seq, _pid = _NLMSGHDR.unpack_from(data, pos)
        if length < _NLMSGHDR.size:
            break
        item = _qdisc_stats(data, pos + _NLMSGHDR.size, pos + length) if kind == RTM_NEWQDISC else None
        out.append((kind, seq, item))
        pos += _align(length)
    return out


def parse(data: bytes) -> list[Message]:
    """Every message in one netlink datagram (links, routes, NLMSG_DONE and NLMSG_ERROR; others skipped)."""
    out: list[Message] = []
    pos = 0
    while pos + _NLMSGHDR.size <= len(data):
        length, kind, _flags, seq, _pid = _NLMSGHDR.unpack_from(data, pos)
        if length < _NLMSGHDR.size:
            break
        body, end = pos + _NLMSGHDR.size, pos + length
        if kind in (16, 17):
            family, iftype, index, flags, change = _IFINFOMSG.unpack_from(data, body)
            out.append(Message(kind, {"family": family, "ifi_type": iftype, "index": index, "flags": flags,
                                      "change": change}, _attrs(data, body + _IFINFOMSG.size, end), seq))
        elif kind in (24, 25):
            family, dst_len, src_len, tos, table, proto, scope, rtype, flags = _RTMSG.unpack_from(data, body)
            out.append(Message(kind, {"family": family, "dst_len": dst_len, "src_len": src_len, "tos": tos,
                                      "table": table, "proto": proto, "scope": scope, "type": rtype,
                                      "flags": flags}, _attrs(data, body + _RTMSG.size, end), seq))
        elif kind in (NLMSG_ERROR, NLMSG_DONE):
            out.append(Message(kind, {}, {}, seq))
        pos += _align(length)
    return out
