"""What drills read: bgpd's ADJCHANGE lines, /proc/net/dev counters, netlink route messages."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pyroute2.netlink.rtnl.rtmsg import rtmsg

from twin.checks.fibwatch import parse_routes
from twin.drills.observe.counters import tx_packets
from twin.drills.observe.logwatch import LogWatch, parse_line

NAMES = {"10.0.0.64": "spine1"}


def test_adjchange_down_with_reason_and_microseconds() -> None:
    line = ("2026/11/21 14:13:47.763093 BGP: [PXVXG-TFNNT] %ADJCHANGE: neighbor 10.0.0.64(vm) in vrf default "
            "Down BFD down received")
    e = parse_line(line, "leaf1", NAMES)
    assert e is not None
    assert (e.node, e.peer, e.state, e.reason) == ("leaf1", "spine1", "down", "BFD down received")
    assert e.t == datetime(2026, 11, 21, 14, 13, 47, 763093).timestamp()


def test_adjchange_up_and_unrelated_lines() -> None:
    up = parse_line("2026/11/21 14:11:27.5 BGP: [N9HHH-F8H1M] %ADJCHANGE: neighbor 10.0.0.66 in vrf default Up",
                    "leaf1", NAMES)
    assert up is not None and up.state == "up" and up.peer == "10.0.0.66"
    assert parse_line("2026/11/21 14:11:27.5 BGP: [M59KS] rcvd End-of-RIB from 10.0.0.64", "leaf1", NAMES) is None


def test_logwatch_reads_only_new_complete_lines(tmp_path: Path) -> None:
    log = tmp_path / "frr.log"
    log.write_text("2026/11/21 14:00:00.000001 BGP: [X] %ADJCHANGE: neighbor 10.0.0.64 in vrf default Up\n")
    watch = LogWatch({"leaf1": log}, {"leaf1": NAMES})
    assert watch.poll() == []  # what was there before the watch began is history
    with log.open("a") as fh:
        fh.write("2026/11/21 14:00:01.000001 BGP: [X] %ADJCHANGE: neighbor 10.0.0.64 in vrf default Down Inter")
    assert watch.poll() == []
    with log.open("a") as fh:
        fh.write("face down\n")
    (event,) = watch.poll()
    assert event.reason == "Interface down" and watch.events == [event]


def test_tx_packets_from_proc_net_dev() -> None:
    text = ("Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo "
            "colls carrier compressed\n"
            "    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0 "
            "    0       0          0\n"
            "Ethernet128: 1234 10 0 0 0 0 0 0 5678 4321 0 0 0 0 0 0\n")
    assert tx_packets(text) == {"lo": 0, "Ethernet128": 4321}


def _route(dst: str, multipath: list[tuple[str, int]], proto: int = 186) -> rtmsg:
    msg = rtmsg()
    msg["family"], msg["dst_len"], msg["proto"], msg["table"] = 2, 32, proto, 254
    msg["attrs"] = [("RTA_TABLE", 254), ("RTA_DST", dst),
                    ("RTA_MULTIPATH", [{"attrs": [("RTA_GATEWAY", gw)], "flags": flags, "hops": 0, "oif": 3}
                                       for gw, flags in multipath])]
    msg.encode()
    out = rtmsg(msg.data)
    out.decode()
    return out


def test_fib_keeps_usable_bgp_next_hops_only() -> None:
    routes = [_route("10.1.4.2", [("10.0.0.64", 0), ("10.0.0.66", 16), ("10.0.0.68", 1), ("10.0.0.70", 0)]),
              _route("10.1.4.3", [("10.0.0.64", 16)]),
              _route("10.9.9.9", [("10.0.0.64", 0)], proto=2)]
    assert parse_routes(routes) == {"10.1.4.2/32": frozenset({"10.0.0.64", "10.0.0.70"})}


def test_logwatch_names_the_cause_of_a_notification(tmp_path: Path) -> None:
    log = tmp_path / "frr.log"
    log.write_text("")
    watch = LogWatch({"spine2": log}, {"spine2": NAMES})
    log.write_text(
        "2026/11/21 14:12:27.597513 BGP: [HZN6M-XRM1G] %NOTIFICATION(Hard Reset): sent to neighbor 10.0.0.64 6/10 "
        "(Cease/BFD Down) 0 bytes \n"
        "2026/11/21 14:12:27.597602 BGP: [PXVXG-TFNNT] %ADJCHANGE: neighbor 10.0.0.64(vm) in vrf default Down BGP "
        "Notification send\n")
    (event,) = watch.poll()
    assert event.peer == "spine1" and event.reason == "BGP Notification send (Cease/BFD Down)"
