"""The state producers of one switch: what SONiC's daemons write to redis, driven by events.

- portsyncd / portsorch: STATE_DB `PORT_TABLE|EthernetN` {state, netdev_oper_status,
  admin_status, mtu} and APPL_DB `PORT_TABLE:EthernetN` {oper_status, admin_status, mtu, and
  portsorch's flap_count, last_down_time, last_up_time (twin.switch.state.flaps)}, from kernel link
  events;
- fpmsyncd: APPL_DB `ROUTE_TABLE:<prefix>` {nexthop, ifname, protocol}, ECMP as comma-separated
  lists, host routes keyed without `/32` (libnl drops a full-length mask), from kernel route
  events. Only routes a routing daemon installed count (zebra's FPM feed has no connected or
  kernel routes), and none through eth0 (SONiC keeps management in its own VRF);
- bgpmon: STATE_DB `NEIGH_STATE_TABLE|<peer>` {state, peerType}. bgpmon asks FRR again when
  frr.log changed (checked every 15 s on SONiC); twin asks when frr.log is written (inotify,
  twin.switch.state.logwatch) and also on every kernel event, and once a second while a session is
  not Established (the states a session passes through on its way up are not logged; leaving
  Established is);
- BFD_SESSION_TABLE `default|<interface>|<peer>` {state, local_addr, type, multiplier,
  rx_interval, tx_interval} from bfdd, asked at the same moments and once a second (bfdd logs
  no state change);
- teamsyncd (and teamd's min_links): APPL_DB and STATE_DB `LAG_TABLE` and `LAG_MEMBER_TABLE`, from
  the kernel link events of PortChannels and their members (twin.switch.state.lag);
- the flex counter poller: COUNTERS_DB `COUNTERS_PORT_NAME_MAP` (port -> oid) and
  `COUNTERS:<oid>` SAI_PORT_STAT_* counters (`counter_row`), and the queues' and priority groups' maps,
  counters and watermarks (twin.switch.state.queues, from the ports' htb trees), once a second (SONiC's
  PORT_STAT interval).
Each writes only rows that changed, one script per database (`SonicRedis.write_rows`), and deletes
rows that went away. The writes go through the switch's own `SerialWriter`
(twin.switch.state.serial_writer): on its own thread once the agent's state loop starts it, so a slow
or paused redis holds back its own switch only.
"""

from __future__ import annotations

import contextlib
import errno
import json
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twin.switch.config.portchannel import is_portchannel
from twin.switch.frr.frr_vty import Vty, VtyError
from twin.switch.redis.sonic_redis import SonicRedis, redis_key
from twin.switch.state import netlink, queues
from twin.switch.state.flaps import FlapCounter
from twin.switch.state.lag import AF_BRIDGE, LagKeeper, Link, lag_state, link_of
from twin.switch.state.serial_writer import SerialWriter

Row = dict[str, str]
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
RT_TABLE_MAIN, RTN_UNICAST = 254, 1
NOT_FROM_ZEBRA = {2, 3, 4}  # RTPROT_KERNEL (connected), RTPROT_BOOT (ip route add), RTPROT_STATIC
PROTOCOLS = {186: "bgp", 187: "isis", 188: "ospf", 189: "rip", 196: "static", 11: "zebra", 192: "sharp"}
MGMT_PORT = "eth0"
# Kernel events waiting beyond this many bytes (some hundreds of route changes: a switch converging
# with wide ECMP) are dropped and the tables read whole instead, as on an overflow: the result is
# the same rows, for a fraction of the decoding.
RESYNC_BACKLOG = 256 * 1024

SAI_COUNTERS = {
    "SAI_PORT_STAT_IF_IN_OCTETS": "rx_bytes", "SAI_PORT_STAT_IF_IN_DISCARDS": "rx_dropped",
    "SAI_PORT_STAT_IF_IN_ERRORS": "rx_errors", "SAI_PORT_STAT_IF_OUT_OCTETS": "tx_bytes",
    "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": "tx_packets", "SAI_PORT_STAT_IF_OUT_DISCARDS": "tx_dropped",
    "SAI_PORT_STAT_IF_OUT_ERRORS": "tx_errors",
}
# PFC frames per priority: no kernel sends or receives them (its qdiscs pause nothing), so they stay 0
PFC_COUNTERS = tuple(f"SAI_PORT_STAT_PFC_{p}_{way}_PKTS" for way in ("TX", "RX") for p in range(8))


def port_oid(port: str) -> str:
    """The SAI object id twin gives a port (SONiC's are assigned by syncd; the form is the same)."""
    number = int(port.removeprefix("Ethernet")) if port.removeprefix("Ethernet").isdigit() else 0
    return f"oid:0x1000000{number:06x}"


def is_port(name: str) -> bool:
    return name.startswith("Ethernet") and "." not in name


# -- rows from kernel and FRR facts (pure) ---------------------------------------------------

def port_rows(flags: int, mtu: int) -> tuple[Row, Row]:
    """(STATE_DB PORT_TABLE row, APPL_DB PORT_TABLE row) of a port with these link flags."""
    admin = "up" if flags & IFF_UP else "down"
    oper = "up" if flags & IFF_UP and flags & IFF_LOWER_UP else "down"
    return ({"state": "ok", "netdev_oper_status": oper, "admin_status": admin, "mtu": str(mtu)},
            {"oper_status": oper, "admin_status": admin, "mtu": str(mtu)})


def route_key(dst: str | None, dst_len: int) -> str:
    """fpmsyncd's ROUTE_TABLE key: `prefix/len`, a host route as the bare address."""
    if dst is None:
        return "0.0.0.0/0"
    return dst if dst_len == 32 else f"{dst}/{dst_len}"


# (nexthop, ifname) of one multipath route's paths, joined as fpmsyncd writes them; None: by eth0
Paths = tuple[str, str] | None
PATHS_KEPT = 64   # distinct next-hop sets a switch's producers keep joined (a leaf's routes share one or two)


def route_row(msg: Any, ifnames: Mapping[int, str], paths: dict[Any, Paths] | None = None) -> tuple[str, Row] | None:
    """(key, row) of one RTM_NEWROUTE, or None for routes fpmsyncd would not hear of. `paths`: the
    joined next hops of the multipath sets seen before, by set (twin.switch.state.rtnl decodes each
    distinct set once and hands every route by it the same tuple), valid while `ifnames` is: a leaf
    of the 64 x 128 fabric has 127 routes by one 64-way set, joined afresh for each they were half
    of reading its tables."""
    if msg["table"] != RT_TABLE_MAIN or msg["type"] != RTN_UNICAST or msg["proto"] in NOT_FROM_ZEBRA:
        return None
    hops = msg.get_attr("RTA_MULTIPATH")
    if not hops:
        joined = _joined([(msg.get_attr("RTA_GATEWAY") or "0.0.0.0", ifnames.get(msg.get_attr("RTA_OIF") or 0, ""))])
    elif paths is None or not isinstance(hops, tuple):
        joined = _joined_hops(hops, ifnames)
    elif hops in paths:
        joined = paths[hops]
    else:
        if len(paths) >= PATHS_KEPT:
            paths.clear()
        joined = paths[hops] = _joined_hops(hops, ifnames)
    if joined is None:
        return None
    return route_key(msg.get_attr("RTA_DST"), msg["dst_len"]), {
        "nexthop": joined[0], "ifname": joined[1], "protocol": PROTOCOLS.get(msg["proto"], str(msg["proto"]))}


def _joined_hops(hops: Any, ifnames: Mapping[int, str]) -> Paths:
    return _joined([(h.get_attr("RTA_GATEWAY") or "0.0.0.0", ifnames.get(h["oif"], "")) for h in hops])


def _joined(pairs: Sequence[tuple[str, str]]) -> Paths:
    if any(dev == MGMT_PORT for _, dev in pairs):
        return None
    return ",".join(gw for gw, _ in pairs), ",".join(dev for _, dev in pairs)


def neigh_rows(summary: Any) -> dict[str, Row]:
    """bgpmon's NEIGH_STATE_TABLE rows from `show bgp summary json` (IPv4 and IPv6 unicast)."""
    out: dict[str, Row] = {}
    for family in ("ipv4Unicast", "ipv6Unicast"):
        part = summary.get(family, {}) if isinstance(summary, dict) else {}
        for peer, row in part.get("peers", {}).items():
            same_as = row.get("remoteAs") == row.get("localAs", part.get("as"))
            out[peer] = {"state": str(row.get("state", "Idle")), "peerType": "i-BGP" if same_as else "e-BGP"}
    return out


def bfd_rows(peers: Any) -> dict[str, Row]:
    """BFD_SESSION_TABLE rows from bfdd's `show bfd peers json`."""
    out: dict[str, Row] = {}
    for p in peers if isinstance(peers, list) else []:
        out[f"default|{p.get('interface', 'default')}|{p.get('peer')}"] = {
            "state": str(p.get("status", "down")).capitalize(), "local_addr": str(p.get("local", "")),
            "type": "async_active", "multiplier": str(p.get("detect-multiplier", "")),
            "rx_interval": str(p.get("receive-interval", "")), "tx_interval": str(p.get("transmit-interval", "")),
        }
    return out


def counter_row(stats: Mapping[str, int] | None, queue_drops: int = 0) -> Row:
    """A port's COUNTERS:<oid> row from its kernel statistics. Received packets split into unicast and the
    multicast the kernel counts (IF_IN_NON_UCAST_PKTS, IF_IN_MULTICAST_PKTS; veth counts none); the kernel
    counts no sent multicast, so every sent packet is unicast and IF_OUT_NON_UCAST_PKTS is 0. portstat's
    RX_OK and TX_OK, and port_rates.lua, sum the unicast and non-unicast pair: a switch lacking either
    shows N/A. IF_OUT_DISCARDS adds what the port's queues dropped (`queue_drops`), as an ASIC's
    egress discards count its queues' tail drops."""
    stats = stats or {}
    multicast = stats.get("multicast", 0)
    row = {sai: str(stats.get(name, 0)) for sai, name in SAI_COUNTERS.items()}
    row["SAI_PORT_STAT_IF_OUT_DISCARDS"] = str(stats.get("tx_dropped", 0) + queue_drops)
    row.update({"SAI_PORT_STAT_IF_IN_UCAST_PKTS": str(max(0, stats.get("rx_packets", 0) - multicast)),
                "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS": str(multicast),
                "SAI_PORT_STAT_IF_IN_MULTICAST_PKTS": str(multicast),
                "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS": "0", **dict.fromkeys(PFC_COUNTERS, "0")})
    return row


# -- writing tables: only what changed ----------------------------------------------------------

class DatabaseWrites:
    """One database's writes of a Batch, in the order queued (HSET, HDEL, DEL, as a pipeline takes them)."""

    def __init__(self) -> None:
        self.ops: list[list[str]] = []

    def hset(self, name: str, mapping: Mapping[str, str]) -> None:
        if not mapping:
            raise ValueError(f"HSET {name} with no fields")   # as redis-py refuses it: no row is empty
        self.ops.append(["h", name, *(x for pair in mapping.items() for x in pair)])

    def hdel(self, name: str, *fields: str) -> None:
        if fields:
            self.ops.append(["x", name, *fields])

    def delete(self, name: str) -> None:
        self.ops.append(["d", name])


class Batch:
    """Writes queued per database, sent as one script each (SonicRedis.write_rows) by `execute`
    (through `writer`, in order with the switch's other writes; at once without one)."""

    def __init__(self, db: SonicRedis, writer: SerialWriter | None = None) -> None:
        self.db, self.writer = db, writer
        self._pipes: dict[str, DatabaseWrites] = {}

    def pipe(self, database: str) -> DatabaseWrites:
        if database not in self._pipes:
            self._pipes[database] = DatabaseWrites()
        return self._pipes[database]

    def execute(self) -> None:
        writes = [(database, json.dumps(w.ops, ensure_ascii=False)) for database, w in self._pipes.items() if w.ops]
        self._pipes.clear()
        if not writes:
            return

        def send() -> None:
            for database, ops in writes:
                self.db.write_rows(database, ops)

        if self.writer is None:
            send()
        else:
            self.writer.submit(send)


@dataclass
class TableWriter:
    """One producer's table in one database: remembers what it wrote, writes differences."""

    db: SonicRedis
    database: str
    table: str
    rows: dict[str, Row] = field(default_factory=dict)

    def sync(self, rows: Mapping[str, Row], batch: Batch) -> bool:
        """Queue the writes that make the table hold exactly `rows`; True when anything changed."""
        changed = False
        for key in [k for k in self.rows if k not in rows]:
            self.remove(key, batch)
            changed = True
        for key, row in rows.items():
            changed = self.put(key, row, batch) or changed
        return changed

    def put(self, key: str, row: Row, batch: Batch) -> bool:
        """Queue writing one row unless it is already so; True when it was not."""
        old = self.rows.get(key)
        if old == row:
            return False
        name = redis_key(self.database, self.table, key)
        pipe = batch.pipe(self.database)
        gone = [f for f in (old or {}) if f not in row]
        if gone:
            pipe.hdel(name, *gone)
        pipe.hset(name, mapping=dict(row))
        # interned: a leaf's routes all go by the same 64 next hops, two strings of ~800 characters
        # each that every row repeated (at 64 x 128, ~0.3 MiB a leaf)
        self.rows[key] = {f: sys.intern(v) for f, v in row.items()}
        return True

    def remove(self, key: str, batch: Batch) -> None:
        if self.rows.pop(key, None) is not None:
            batch.pipe(self.database).delete(redis_key(self.database, self.table, key))

    def clear(self, writer: SerialWriter | None = None) -> None:
        """Delete every row of this table, also ones an earlier producer left (bgpmon does this at
        start); through `writer` when given."""
        client = self.db.client(self.database)
        sep = redis_key(self.database, self.table, "")

        def delete() -> None:
            names = list(client.scan_iter(match=sep + "*", count=1000))
            if names:
                client.delete(*names)

        if writer is None:
            delete()
        else:
            writer.submit(delete)
        self.rows.clear()


class SwitchProducers:
    """Every state producer of one switch, fed by the loop in `twin.switch.state.switchd`."""

    def __init__(self, name: str, netns: str, rundir: Path, db: SonicRedis) -> None:
        # connections of the producers' own: no client of the switch's redis can take them
        self.name, self.netns, self.rundir, self.db = name, netns, rundir, db.apart()
        self.ifnames: dict[int, str] = {}
        self.paths: dict[Any, Paths] = {}   # route_row's joined next-hop sets, valid while ifnames is
        self.state_ports = TableWriter(db, "STATE_DB", "PORT_TABLE")
        self.appl_ports = TableWriter(db, "APPL_DB", "PORT_TABLE")
        self.routes = TableWriter(db, "APPL_DB", "ROUTE_TABLE")
        self.neighbors = TableWriter(db, "STATE_DB", "NEIGH_STATE_TABLE")
        self.bfd = TableWriter(db, "STATE_DB", "BFD_SESSION_TABLE")
        self.counters = TableWriter(db, "COUNTERS_DB", "COUNTERS")
        self.queue_map_key: tuple[object, ...] | None = None   # what the queue maps were made from
        self.queue_enabled: queues.Enabled = None                # the queues they hold (None: all)
        self.queue_poller = queues.QueuePoller(time.monotonic())
        self.flaps = FlapCounter()
        self.flaps_seeded = False
        self.lag_tables = (TableWriter(db, "APPL_DB", "LAG_TABLE"), TableWriter(db, "APPL_DB", "LAG_MEMBER_TABLE"),
                           TableWriter(db, "STATE_DB", "LAG_TABLE"), TableWriter(db, "STATE_DB", "LAG_MEMBER_TABLE"))
        self.links: dict[int, Link] = {}
        self.lag_keeper = LagKeeper(netns)
        self.bgpd, self.bfdd = Vty(rundir, "bgpd"), Vty(rundir, "bfdd")
        self.sock: socket.socket | None = None
        self.dumper = netlink.Dumper(netns)
        self.log_path = rundir / "frr.log"  # every daemon's log: written on each session change
        self.writer = SerialWriter(name)   # every redis write of this switch's producers, in order

    # -- start ------------------------------------------------------------------------------

    def subscribe(self, rcvbuf: int = netlink.RCVBUF) -> socket.socket:
        """The switch's kernel events, from now on (read them after write_all); until write_all,
        at most `rcvbuf` bytes of them are kept."""
        self.sock = netlink.open_socket(self.netns, rcvbuf=rcvbuf)
        return self.sock

    def write_all(self) -> None:
        """The tables written afresh from the kernel and FRR as they are now. The kernel events
        that came since subscribe are dropped first: what they say is in the tables read after
        them (handled after the reading, they would put older state back). From here the socket
        keeps netlink.RCVBUF bytes of them."""
        if self.sock is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, netlink.RCVBUF)
            netlink.drain(self.sock)
        if not self.flaps_seeded:   # a producer started on a running switch goes on from its counts
            self.flaps.seed(self._appl_ports())
            self.flaps_seeded = True
        for writer in (self.state_ports, self.appl_ports, self.routes, self.neighbors, self.bfd, self.counters,
                       *self.lag_tables):
            writer.clear(self.writer)
        self.queue_map_key = None   # the queues' maps and rows written afresh by the first poll
        batch = Batch(self.db, self.writer)
        self.links.clear()
        links = self.dumper.dump(netlink.RTM_GETLINK)
        for msg in links:
            self._link(msg, batch)
        self._lags(batch)
        for msg in self.dumper.dump(netlink.RTM_GETROUTE):
            self._route(msg, batch)
        batch.execute()
        ports = sorted((n for n in self.ifnames.values() if is_port(n)),
                       key=lambda p: int(p.removeprefix("Ethernet") or 0))
        names = self.db.client("COUNTERS_DB").pipeline(transaction=True)
        names.delete("COUNTERS_PORT_NAME_MAP")
        if ports:
            names.hset("COUNTERS_PORT_NAME_MAP", mapping={p: port_oid(p) for p in ports})
        self.writer.submit(names.execute)
        # The queues' and PGs' maps and rows (about 15,000 keys on a 128-port switch, three quarters
        # of this pass) come with the switch's first counters poll of the loop instead: `twin up`
        # waits for this pass, and SONiC too fills COUNTERS_DB's queue maps after its ports and
        # routes (flexcounterorch, once the flex counters are enabled after boot).
        self.poll_counters(with_queues=False, links=links)   # the ports' counters from the same dump
        self.poll_frr()

    def _appl_ports(self) -> dict[str, dict[str, str]]:
        """APPL_DB's PORT_TABLE rows as they are (what portsorch reads when it starts)."""
        client = self.db.client("APPL_DB")
        names = [str(n) for n in client.scan_iter(match="PORT_TABLE:*", count=1000)]
        pipe = client.pipeline(transaction=False)
        for name in names:
            pipe.hgetall(name)
        return {name.split(":", 1)[1]: {str(k): str(v) for k, v in row.items()}
                for name, row in zip(names, pipe.execute(), strict=True)}

    # -- kernel events ----------------------------------------------------------------------

    def _link(self, msg: Any, batch: Batch) -> None:
        name = msg.get_attr("IFLA_IFNAME")
        if name is None or msg["family"] == AF_BRIDGE:   # a bridge port's event (a port leaving a bridge
            return                                       # is an AF_BRIDGE RTM_DELLINK): not the link's
        if msg["event"] == "RTM_DELLINK":
            if self.ifnames.pop(msg["index"], None) is not None:
                self.paths.clear()
            self.links.pop(msg["index"], None)
            if is_port(name):
                self.state_ports.remove(name, batch)
                self.appl_ports.remove(name, batch)
            return
        if self.ifnames.get(msg["index"]) != name:
            self.ifnames[msg["index"]] = name
            self.paths.clear()
        link = link_of(msg)
        if link is not None:
            self.links[msg["index"]] = link
        if is_port(name):
            state, appl = port_rows(msg["flags"], msg.get_attr("IFLA_MTU") or 0)
            appl.update(self.flaps.observe(name, appl["oper_status"], time.time()))
            self.state_ports.put(name, state, batch)
            self.appl_ports.put(name, appl, batch)

    def _lags(self, batch: Batch) -> None:
        """teamsyncd's rows from the links as they are now, and min_links held (twin.switch.state.lag)."""
        if not any(t.rows for t in self.lag_tables) and not any(map(is_portchannel, self.ifnames.values())):
            return
        state = lag_state(self.links)
        for table, rows in zip(self.lag_tables, (state.appl_lag, state.appl_members, state.state_lag,
                                                 state.state_members), strict=True):
            table.sync(rows, batch)
        self.lag_keeper.apply(state, self.links.values())

    def _route(self, msg: Any, batch: Batch) -> None:
        if msg["table"] != RT_TABLE_MAIN:
            return
        key = route_key(msg.get_attr("RTA_DST"), msg["dst_len"])
        entry = None if msg["event"] == "RTM_DELROUTE" else route_row(msg, self.ifnames, self.paths)
        if entry is None:  # gone, or replaced by a route fpmsyncd does not carry
            self.routes.remove(key, batch)
        else:
            self.routes.put(*entry, batch)

    def on_kernel_events(self) -> int:
        """Handle every waiting link and route event; how many there were (a resync counts one). When
        the kernel dropped events (the socket overflowed), or more are waiting than reading the tables
        whole would cost (RESYNC_BACKLOG), read everything again, as portsyncd and fpmsyncd resync."""
        assert self.sock is not None
        batch = Batch(self.db, self.writer)
        count = 0
        try:
            waiting = netlink.receive(self.sock)
            if sum(map(len, waiting)) >= RESYNC_BACKLOG:
                self.resync_kernel(batch)   # one dump costs less than decoding thousands of events
                count += 1
            else:
                for msg in (m for data in waiting for m in netlink.decode(data)):
                    count += 1
                    if msg["event"] in ("RTM_NEWLINK", "RTM_DELLINK"):
                        self._link(msg, batch)
                    elif msg["event"] in ("RTM_NEWROUTE", "RTM_DELROUTE"):
                        self._route(msg, batch)
                self._lags(batch)
        except OSError as exc:
            if exc.errno != errno.ENOBUFS:
                raise
            self.resync_kernel(batch)
            count += 1
        batch.execute()
        return count

    def resync_kernel(self, batch: Batch) -> None:
        """Links and routes read whole again; rows that went away are deleted."""
        links = [m for m in self.dumper.dump(netlink.RTM_GETLINK) if m["family"] != AF_BRIDGE]
        self.ifnames = {m["index"]: m.get_attr("IFLA_IFNAME") for m in links if m.get_attr("IFLA_IFNAME")}
        self.paths.clear()
        self.links = {m["index"]: link for m in links if (link := link_of(m)) is not None}
        self._lags(batch)
        state, appl = {}, {}
        for msg in links:
            name = msg.get_attr("IFLA_IFNAME") or ""
            if is_port(name):
                state[name], appl[name] = port_rows(msg["flags"], msg.get_attr("IFLA_MTU") or 0)
                appl[name].update(self.flaps.observe(name, appl[name]["oper_status"], time.time()))
        self.state_ports.sync(state, batch)
        self.appl_ports.sync(appl, batch)
        routes = dict(entry for msg in self.dumper.dump(netlink.RTM_GETROUTE) if msg["table"] == RT_TABLE_MAIN
                      and (entry := route_row(msg, self.ifnames, self.paths)) is not None)
        self.routes.sync(routes, batch)

    # -- FRR ----------------------------------------------------------------------------------

    def bgp_settled(self) -> bool:
        """Every BGP session was Established when bgpd was last asked. From there every change is
        logged (`bgp log-neighbor-changes`, which SONiC renders), so bgpd need not be asked again
        until frr.log changes, which is when bgpmon asks; a session on its way up passes through
        states FRR logs nothing of (Connect, Active, OpenSent)."""
        rows = self.neighbors.rows
        return bool(rows) and all(row["state"] == "Established" for row in rows.values())

    def runs_bfdd(self) -> bool:
        return (self.rundir / "bfdd.vty").exists()

    def poll_frr(self, bgp: bool = True) -> None:
        """Ask bgpd (unless not `bgp`) and bfdd now and write what changed (bgpmon; BFD sessions)."""
        batch = Batch(self.db, self.writer)
        if bgp:
            with contextlib.suppress(OSError, VtyError):  # bgpd not running (yet): keep the last states, as bgpmon
                self.neighbors.sync(neigh_rows(self.bgpd.json("show bgp summary json")), batch)
        if self.runs_bfdd():
            with contextlib.suppress(OSError, VtyError):
                self.bfd.sync(bfd_rows(self.bfdd.json("show bfd peers json")), batch)
        batch.execute()

    # -- counters -----------------------------------------------------------------------------

    def poll_counters(self, with_queues: bool = True, links: Sequence[Any] | None = None) -> None:
        """The ports' counters (from `links`, a link dump just taken, when given), and (unless not
        `with_queues`) the queues' and PGs' maps, rows and counters."""
        batch = Batch(self.db, self.writer)
        if links is None:
            links = self.dumper.dump(netlink.RTM_GETLINK)
        stats = {name: msg.get_attr("IFLA_STATS64") for msg in links
                 if is_port(name := msg.get_attr("IFLA_IFNAME") or "")}
        leaves = queues.leaf_stats(self.dumper.qdiscs(), self.ifnames)
        self.counters.sync({port_oid(name): counter_row(s, sum(q[2] for q in leaves.get(name, {}).values()))
                            for name, s in stats.items()}, batch)
        if with_queues:
            self._queues(stats, leaves, batch)
        batch.execute()

    def _buffers(self) -> tuple[bool, list[str], list[str]]:
        """create_only_config_db_buffers, and then BUFFER_QUEUE's and BUFFER_PG's keys (what the queue
        and PG maps hold follows them, as flexcounterorch's do)."""
        client = self.db.client("CONFIG_DB")
        if client.hget("DEVICE_METADATA|localhost", "create_only_config_db_buffers") != "true":
            return False, [], []
        keys = [[str(k).split("|", 1)[1] for k in client.scan_iter(match=f"{table}|*", count=1000)]
                for table in ("BUFFER_QUEUE", "BUFFER_PG")]
        return True, sorted(keys[0]), sorted(keys[1])

    def _queues(self, stats: Mapping[str, Mapping[str, int] | None], leaves: Mapping[str, Mapping[int, queues.Stats]],
                batch: Batch) -> None:
        """The queues' and PGs' maps and rows, written whole when the ports or the buffers they follow
        changed (and after write_all), then the queues' counters and watermarks that changed
        (twin.switch.state.queues)."""
        ports = {p: port_oid(p) for p in sorted(stats, key=lambda p: int(p.removeprefix("Ethernet") or 0))}
        create_only, queue_keys, pg_keys = self._buffers()
        key = (tuple(ports), create_only, tuple(queue_keys), tuple(pg_keys))
        pipe = batch.pipe("COUNTERS_DB")
        if key != self.queue_map_key:
            self.queue_enabled = queues.enabled(create_only, queue_keys, queues.QUEUES_PER_PORT)
            pgs = queues.enabled(create_only, pg_keys, queues.PRIORITY_GROUPS)
            maps = queues.queue_maps(ports, self.queue_enabled, pgs)
            self._clear_queue_rows()
            for name, mapping in maps.items():
                pipe.delete(name)
                if mapping:
                    pipe.hset(name, mapping=mapping)
            for oid, row in queues.idle_rows(maps).items():
                pipe.hset(f"COUNTERS:{oid}", mapping=row)
            idle, peaks = queues.idle_watermarks(maps), self.queue_poller.peaks()
            for table in queues.WATERMARK_TABLES:
                for oid, row in {**idle, **{o: r for o, r in peaks[table].items() if o in idle}}.items():
                    pipe.hset(f"{table}:{oid}", mapping=row)
            self.queue_poller.reset()
            self.queue_map_key = key
        written = self.queue_poller.poll(ports, stats, leaves, time.monotonic(), self.queue_enabled)
        for oid, row in written.counters.items():
            pipe.hset(f"COUNTERS:{oid}", mapping=row)
        for table, rows in written.watermarks.items():
            for oid, row in rows.items():
                pipe.hset(f"{table}:{oid}", mapping=row)

    def _clear_queue_rows(self) -> None:
        """Every queue's and PG's row and watermarks, through the switch's writer (before what follows)."""
        client = self.db.client("COUNTERS_DB")
        patterns = (f"COUNTERS:oid:0x{queues.QUEUE_TYPE:x}*", f"COUNTERS:oid:0x{queues.PG_TYPE:x}*",
                    *(f"{t}:*" for t in queues.WATERMARK_TABLES))

        def delete() -> None:
            names = [n for pattern in patterns for n in client.scan_iter(match=pattern, count=1000)]
            if names:
                client.delete(*names)

        self.writer.submit(delete)

    def close(self) -> None:
        self.writer.close()
        if self.sock is not None:
            self.sock.close()
        self.dumper.close()
        self.bgpd.close()
        self.bfdd.close()
