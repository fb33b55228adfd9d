"""The agent's state loop asks FRR only where something unlogged may have changed or frr.log was
written (told by inotify), sleeps between its steps, and a switch's netlink dumps share one socket
that never takes a stale reply for the current dump."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg

from twin.switch.state import netlink
from twin.switch.state.logwatch import LogWatch
from twin.switch.state.producers import Batch, SwitchProducers, TableWriter, port_oid
from twin.switch.state.serial_writer import SerialWriter
from twin.switch.state.switchd import FIRST_PASS_WORKERS, MIN_FRR_GAP_S, MIN_WAIT_S, REFRESH_S, StateLoop


class FakeProducers:
    """What the loop calls on a switch's producers, recording the FRR polls."""

    def __init__(self, name: str, settled: bool, bfdd: bool) -> None:
        self.name, self.settled, self.bfdd = name, settled, bfdd
        self.polls: list[bool] = []
        self.writer = SerialWriter(name)   # not started: writes at once

    def bgp_settled(self) -> bool:
        return self.settled

    def runs_bfdd(self) -> bool:
        return self.bfdd

    def poll_frr(self, bgp: bool = True) -> None:
        self.polls.append(bgp)

    def close(self) -> None: ...


def _loop(*producers: FakeProducers) -> StateLoop:
    return StateLoop(producers)  # type: ignore[arg-type]


def test_the_refresh_asks_bgpd_only_while_a_session_is_on_its_way_up() -> None:
    up = FakeProducers("leaf1", settled=True, bfdd=False)
    coming = FakeProducers("leaf2", settled=False, bfdd=False)
    up_bfd = FakeProducers("leaf3", settled=True, bfdd=True)
    loop = _loop(up, coming, up_bfd)
    now = 100.0
    loop.ask_frr(now)  # the first look: every switch, bgpd included
    assert up.polls == coming.polls == up_bfd.polls == [True]
    for item in loop.items:
        item.refresh()
    loop.ask_frr(now + 1)
    assert up.polls == [True]                   # all sessions up, nothing logged: bgpd not asked
    assert coming.polls == [True, True]         # a session not Established: asked again
    assert up_bfd.polls == [True, False]        # bfdd asked (it logs nothing), bgpd not


def test_a_logged_change_asks_a_settled_switch_s_bgpd_again() -> None:
    up = FakeProducers("spine1", settled=True, bfdd=False)
    loop = _loop(up)
    loop.ask_frr(100.0)
    loop.items[0].refresh()
    loop.ask_frr(101.0)
    assert up.polls == [True]
    loop.items[0].frr_due = True  # what frr.log changing or a kernel event sets
    loop.ask_frr(102.0)
    assert up.polls == [True, True]


def test_frr_log_written_is_told_for_its_switch_alone(tmp_path: Path) -> None:
    a, b, c = (tmp_path / n for n in ("leaf1", "leaf2", "leaf3"))
    for d in (a, b, c):
        d.mkdir()
    (a / "frr.log").write_text("")
    (b / "frr.log").write_text("")
    watch: LogWatch[str] = LogWatch()
    try:
        for d in (a, b, c):   # leaf3's log does not exist yet
            watch.add(d / "frr.log", d.name)
        assert watch.changed() == []
        with open(a / "frr.log", "a") as f:
            f.write("%ADJCHANGE: neighbor 10.0.0.0 Down\n")
            f.flush()
            f.write("%ADJCHANGE: neighbor 10.0.0.2 Down\n")
        (b / "bgpd.log").write_text("another file in the same directory\n")
        assert watch.changed() == ["leaf1"]   # once, however many writes
        assert watch.changed() == []
        (c / "frr.log").write_text("made anew\n")
        (b / "frr.log").write_text("up\n")
        assert sorted(watch.changed()) == ["leaf2", "leaf3"]
    finally:
        watch.close()


def test_a_lost_event_queue_asks_every_switch(tmp_path: Path) -> None:
    dirs = [tmp_path / n for n in ("leaf1", "leaf2", "leaf3")]
    for d in dirs:
        d.mkdir()
        (d / "frr.log").write_text("")
    watch: LogWatch[str] = LogWatch()
    try:
        for d in dirs:
            watch.add(d / "frr.log", d.name)
        queue = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        with open(dirs[0] / "frr.log", "a") as one, open(dirs[1] / "frr.log", "a") as two:  # not leaf3's
            for i in range(queue + 10):   # alternating, so the kernel cannot merge the events
                log = (one, two)[i % 2]
                log.write("x")
                log.flush()
        assert sorted(watch.changed()) == ["leaf1", "leaf2", "leaf3"]   # which were written is unknown
    finally:
        watch.close()


def test_the_loop_asks_the_switch_whose_log_was_written_and_sleeps_otherwise(tmp_path: Path) -> None:
    spine, leaf = FakeProducers("spine1", settled=True, bfdd=False), FakeProducers("leaf1", settled=True, bfdd=False)
    loop = _loop(spine, leaf)
    try:
        loop.ask_frr(100.0)
        assert loop.wait(100.0, deadline=100.5) == 0.5        # nothing due: until the next timed step
        assert loop.wait(100.0, deadline=99.0) == MIN_WAIT_S   # a step held back is not spun on
        assert loop.wait(100.0, deadline=200.0) == REFRESH_S
        (tmp_path / "frr.log").write_text("")
        loop.logs.add(tmp_path / "frr.log", loop.items[1])
        (tmp_path / "frr.log").write_text("%ADJCHANGE: neighbor 10.0.0.1 Down\n")
        ready = [key.data for key, _ in loop.selector.select(timeout=1.0)]
        assert ready == [loop.logs]
        loop.on_ready(loop.logs)
        assert loop.wait(100.0, deadline=100.5) == MIN_FRR_GAP_S
        loop.ask_frr(100.1)
        assert spine.polls == [True] and leaf.polls == [True, True]
    finally:
        loop.close()


def _producers(tmp_path: Path) -> SwitchProducers:
    return SwitchProducers("leaf1", "tw.x.leaf1", tmp_path, db=FakeSonicRedis())  # type: ignore[arg-type]


def test_settled_means_every_known_session_established(tmp_path: Path) -> None:
    p = _producers(tmp_path)
    assert not p.bgp_settled()  # nothing known yet: asked until bgpd answers
    p.neighbors = TableWriter(None, "STATE_DB", "NEIGH_STATE_TABLE",  # type: ignore[arg-type]
                              rows={"10.0.0.0": {"state": "Established"}, "10.0.0.2": {"state": "Active"}})
    assert not p.bgp_settled()
    p.neighbors.rows["10.0.0.2"] = {"state": "Established"}
    assert p.bgp_settled()
    assert not p.runs_bfdd()
    (tmp_path / "bfdd.vty").touch()
    assert p.runs_bfdd()


def _link(seq: int, index: int, flags: int = 1) -> bytes:
    msg = ifinfmsg()
    msg["header"]["type"], msg["header"]["flags"], msg["header"]["sequence_number"] = 16, 2, seq
    msg["family"], msg["index"], msg["flags"], msg["change"] = 0, index, flags, 0
    msg["attrs"] = [("IFLA_IFNAME", f"Ethernet{index}")]
    msg.encode()
    return bytes(msg.data)


def _done(seq: int) -> bytes:
    return struct.pack("=LHHLLi", 20, 3, 2, seq, 0, 0)


def test_a_dump_skips_what_an_earlier_dump_left_on_its_socket() -> None:
    ours, kernel = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with ours, kernel:
        kernel.send(_link(1, 4) + _done(1))         # a reply to dump 1, never read
        kernel.send(_link(2, 8) + _link(2, 12) + _done(2))
        msgs = netlink._dump_on(ours, "tw.x.leaf1", netlink.RTM_GETLINK, netlink.AF_INET, seq=2)
        request = kernel.recv(100)
    assert [m["index"] for m in msgs] == [8, 12]
    assert struct.unpack_from("=LHHLL", request)[1:4] == (netlink.RTM_GETLINK, 0x301, 2)


def test_a_switch_dumps_on_one_socket_and_makes_another_after_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    class Sock:
        def __init__(self) -> None:
            self.closed = False

        def setblocking(self, flag: bool) -> None: ...

        def settimeout(self, t: float) -> None: ...

        def close(self) -> None:
            self.closed = True

    def open_socket(netns: str, groups: int = 0) -> Sock:
        made.append(Sock())
        return made[-1]

    answers: list[Any] = [[], [], OSError("gone"), []]

    def dump_on(sock: Any, netns: str, kind: int, family: int, seq: int, parse: Any = None) -> list[Any]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return [seq]

    monkeypatch.setattr(netlink, "open_socket", open_socket)
    monkeypatch.setattr(netlink, "_dump_on", dump_on)
    dumper = netlink.Dumper("tw.x.leaf1")
    assert dumper.dump(netlink.RTM_GETLINK) == [1]
    assert dumper.dump(netlink.RTM_GETROUTE) == [2]
    assert len(made) == 1
    with pytest.raises(OSError):
        dumper.dump(netlink.RTM_GETLINK)
    assert made[0].closed and dumper.sock is None
    assert dumper.dump(netlink.RTM_GETLINK) == [4]  # a fresh socket; sequence numbers go on
    assert len(made) == 2



class FakeRedis:
    """The part of one redis database the producers use: hashes written through pipelines."""

    def __init__(self) -> None:
        self.hashes: dict[str, dict[str, str]] = {}

    def scan_iter(self, match: str, count: int) -> list[str]:
        return [k for k in self.hashes if k.startswith(match.rstrip("*"))]

    def delete(self, *names: str) -> None:
        for name in names:
            self.hashes.pop(name, None)

    def hset(self, name: str, mapping: dict[str, str]) -> None:
        self.hashes.setdefault(name, {}).update(mapping)

    def hdel(self, name: str, *fields: str) -> None:
        for f in fields:
            self.hashes.get(name, {}).pop(f, None)

    def hget(self, name: str, field: str) -> str | None:
        return self.hashes.get(name, {}).get(field)

    def hgetall(self, name: str) -> dict[str, str]:
        return dict(self.hashes.get(name, {}))

    def pipeline(self, transaction: bool) -> FakePipeline:
        return FakePipeline(self)


class FakePipeline:
    """Writes at once; reads answered by execute, in order."""

    def __init__(self, db: FakeRedis) -> None:
        self.db, self.reads = db, []
        self.delete, self.hset, self.hdel = db.delete, db.hset, db.hdel

    def hgetall(self, name: str) -> None:
        self.reads.append(self.db.hgetall(name))

    def execute(self) -> list[dict[str, str]]:
        reads, self.reads = self.reads, []
        return reads


class FakeSonicRedis:
    def __init__(self) -> None:
        self.dbs: dict[str, FakeRedis] = {}

    def client(self, db: str) -> FakeRedis:
        return self.dbs.setdefault(db, FakeRedis())

    def apart(self) -> FakeSonicRedis:
        return self

    def write_rows(self, db: str, ops: str) -> None:
        """SonicRedis.write_rows's script applied as redis runs it (tests/integration/test_state_batch_writes.py
        runs the script itself)."""
        client = self.client(db)
        for kind, name, *rest in json.loads(ops):
            if kind == "h":
                client.hset(name, dict(zip(rest[0::2], rest[1::2], strict=True)))
            elif kind == "x":
                client.hdel(name, *rest)
            else:
                client.delete(name)


class FakeDumper:
    """The kernel as it is now: Ethernet4 up (IFF_UP | IFF_LOWER_UP)."""

    def __init__(self) -> None:
        self.dumps: list[int] = []

    def dump(self, kind: int) -> list[Any]:
        self.dumps.append(kind)
        return netlink.decode(_link(1, 4, flags=1 | 0x10000)) if kind == netlink.RTM_GETLINK else []

    def qdiscs(self) -> list[Any]:
        return []

    def close(self) -> None: ...


def test_events_from_before_the_tables_are_read_do_not_put_older_state_back(tmp_path: Path) -> None:
    """Subscribed early (the agent subscribes while the fabric launches), a switch's socket holds
    events older than the tables write_all reads; they are dropped, not handled after the reading."""
    db = FakeSonicRedis()
    p = SwitchProducers("leaf1", "tw.x.leaf1", tmp_path, db=db)  # type: ignore[arg-type]
    p.dumper = FakeDumper()  # type: ignore[assignment]
    ours, kernel = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with ours, kernel:
        ours.setblocking(False)
        p.sock = ours
        kernel.send(_link(7, 4, flags=0))   # earlier: Ethernet4 down, queued since the subscription
        p.write_all()
        p.on_kernel_events()
        assert db.dbs["STATE_DB"].hashes["PORT_TABLE|Ethernet4"]["netdev_oper_status"] == "up"
        kernel.send(_link(8, 4, flags=0))   # after the reading: handled
        p.on_kernel_events()
        assert db.dbs["STATE_DB"].hashes["PORT_TABLE|Ethernet4"]["netdev_oper_status"] == "down"


def test_the_first_pass_leaves_the_queue_maps_to_the_first_counters_poll(tmp_path: Path) -> None:
    """`twin up` waits for write_all: it writes the ports (their counters too) and leaves the queues'
    and PGs' maps and rows, three quarters of the pass on a 128-port switch, to the switch's first
    counters poll, as SONiC's flex counters fill them after boot."""
    db = FakeSonicRedis()
    p = SwitchProducers("leaf1", "tw.x.leaf1", tmp_path, db=db)  # type: ignore[arg-type]
    p.dumper = dumper = FakeDumper()  # type: ignore[assignment]
    p.write_all()
    assert dumper.dumps.count(netlink.RTM_GETLINK) == 1   # the ports' counters come from the links' dump
    counters = db.dbs["COUNTERS_DB"].hashes
    assert db.dbs["STATE_DB"].hashes["PORT_TABLE|Ethernet4"]["netdev_oper_status"] == "up"
    assert counters["COUNTERS_PORT_NAME_MAP"] == {"Ethernet4": port_oid("Ethernet4")}
    assert f"COUNTERS:{port_oid('Ethernet4')}" in counters
    assert "COUNTERS_QUEUE_NAME_MAP" not in counters and "COUNTERS_PG_NAME_MAP" not in counters
    p.poll_counters()
    assert "Ethernet4:0" in counters["COUNTERS_QUEUE_NAME_MAP"]
    assert "Ethernet4:0" in counters["COUNTERS_PG_NAME_MAP"]
    queue = counters["COUNTERS_QUEUE_NAME_MAP"]["Ethernet4:0"]
    assert f"COUNTERS:{queue}" in counters


def test_drain_drops_what_waits_and_an_overflow() -> None:
    ours, kernel = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with ours, kernel:
        ours.setblocking(False)
        kernel.send(b"one")
        kernel.send(b"two")
        netlink.drain(ours)
        with pytest.raises(BlockingIOError):
            ours.recv(10)


def test_rows_kept_share_one_copy_of_a_repeated_value() -> None:
    """A leaf's routes all go by the same next hops: what the writer remembers holds that string
    once, whatever copies its rows came in."""
    db = FakeSonicRedis()
    routes = TableWriter(db, "APPL_DB", "ROUTE_TABLE")  # type: ignore[arg-type]
    hops = [f"10.0.{i}.1" for i in range(64)]
    batch = Batch(db)  # type: ignore[arg-type]
    for prefix in ("10.1.0.1", "10.1.0.2"):
        routes.put(prefix, {"nexthop": ",".join(hops), "ifname": ",".join(f"Ethernet{4 * i}" for i in range(64)),
                            "protocol": "bgp"}, batch)
    batch.execute()
    first, second = routes.rows["10.1.0.1"], routes.rows["10.1.0.2"]
    assert first == second and first is not second
    assert first["nexthop"] is second["nexthop"] and first["ifname"] is second["ifname"]
    assert db.dbs["APPL_DB"].hashes["ROUTE_TABLE:10.1.0.2"]["nexthop"] == ",".join(hops)


class WritingProducers(FakeProducers):
    """Producers whose first pass is recorded, its redis writes going through a started writer."""

    def __init__(self, name: str, events: list[str]) -> None:
        super().__init__(name, settled=True, bfdd=False)
        self.events = events
        self.writer.start()

    def write_all(self) -> None:
        self.events.append(f"write_all {self.name}")
        self.writer.submit(lambda: (time.sleep(0.05), self.events.append(f"sent {self.name}")))

    def poll_frr(self, bgp: bool = True) -> None:
        self.events.append(f"poll {self.name}")

    def poll_counters(self) -> None:
        self.events.append(f"counters {self.name}")


def test_every_switch_s_tables_are_written_and_sent_before_the_agent_says_so() -> None:
    """`twin up` returns once the agent says every switch's tables are written (on_written): that is
    after each switch's first pass and after its writer sent it, and before the loop polls anything."""
    events: list[str] = []
    producers = [WritingProducers(f"leaf{i}", events) for i in (1, 2, 3)]
    loop = _loop(*producers)
    stop = threading.Event()

    def written() -> None:
        events.append("written")
        stop.set()

    runner = threading.Thread(target=loop.run, args=(stop, written))
    runner.start()
    runner.join(timeout=10)
    assert not runner.is_alive()
    at = events.index("written")
    assert sorted(events[:at]) == sorted([f"{w} leaf{i}" for i in (1, 2, 3) for w in ("write_all", "sent")])
    assert not [e for e in events if e.startswith(("poll", "counters"))]
    for p in producers:
        p.writer.close()


def test_a_loop_stopped_during_its_first_pass_never_says_the_tables_are_written() -> None:
    events: list[str] = []
    producers = [WritingProducers("leaf1", events)]
    stop = threading.Event()
    stop.set()
    _loop(*producers).run(stop, lambda: events.append("written"))
    assert "written" not in events
    producers[0].writer.close()


class MeetingProducers(WritingProducers):
    """Producers whose first pass waits until `barrier`'s other parties are reading too."""

    def __init__(self, name: str, events: list[str], barrier: threading.Barrier) -> None:
        super().__init__(name, events)
        self.barrier = barrier

    def write_all(self) -> None:
        self.barrier.wait(timeout=5)   # raises (BrokenBarrierError) unless the others read meanwhile
        super().write_all()


def test_the_first_pass_reads_switches_side_by_side() -> None:
    """Each switch's reading waits on its bgpd, redis and kernel most of its time: the first pass
    reads FIRST_PASS_WORKERS switches at once. Read one after the other, no switch here would get
    past its barrier."""
    events: list[str] = []
    barrier = threading.Barrier(FIRST_PASS_WORKERS)
    producers = [MeetingProducers(f"leaf{i}", events, barrier) for i in range(FIRST_PASS_WORKERS)]
    stop = threading.Event()
    runner = threading.Thread(target=_loop(*producers).run, args=(stop, lambda: (events.append("written"), stop.set())))
    runner.start()
    runner.join(timeout=15)
    assert not runner.is_alive()
    read = sorted(e for e in events if e.startswith("write_all"))
    assert read == [f"write_all leaf{i}" for i in range(FIRST_PASS_WORKERS)]
    assert events[-1] == "written"
    for p in producers:
        p.writer.close()


def test_switches_not_begun_when_the_loop_stops_are_not_read() -> None:
    events: list[str] = []
    stop = threading.Event()

    class Stopping(WritingProducers):
        def write_all(self) -> None:
            super().write_all()
            stop.set()   # the agent is told to stop while this switch is read

    producers = [Stopping(f"leaf{i}", events) for i in range(FIRST_PASS_WORKERS * 3)]
    _loop(*producers).run(stop, lambda: events.append("written"))
    read = [e for e in events if e.startswith("write_all")]
    assert 1 <= len(read) <= FIRST_PASS_WORKERS   # those begun before the stop, none after
    assert "written" not in events
    for p in producers:
        p.writer.close()
