#!/usr/bin/env python3
"""How long a change in the kernel or FRR takes to reach a switch's redis. Prints one JSON document.

    python bench/state_latency.py [--lab labs/default.yaml] [--rounds 5]

Brings up a lab, then on leaf1, per round:
- link: spine1's end of the leaf1-spine1 link goes down; the delay from leaf1's kernel reporting
  carrier loss (seen on a netlink socket of our own) to STATE_DB PORT_TABLE|<port> changing
  (seen as a keyspace notification), and from leaf1's kernel dropping spine1's next hop from a
  route to APPL_DB ROUTE_TABLE changing;
- bgp: spine1 shuts its session to leaf1; the delay from leaf1's bgpd reporting the session not
  Established (asked over its vty every 2 ms) to STATE_DB NEIGH_STATE_TABLE changing.
Each is put back and left to settle before the next round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from twin.switch.frr.frr_vty import Vty  # noqa: E402
from twin.switch.redis.sonic_redis import SonicRedis  # noqa: E402
from twin.switch.state import netlink  # noqa: E402

TWIN = [sys.executable, "-m", "twin"]


class KeyWatch:
    """Times of the first keyspace event on `pattern` in `db` after `arm()`."""

    def __init__(self, redis: SonicRedis, db: str, pattern: str) -> None:
        self.client = redis.client(db)
        number = {"APPL_DB": 0, "STATE_DB": 6}[db]
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        self.pubsub.psubscribe(f"__keyspace@{number}__:{pattern}")
        self.seen: float | None = None
        self.armed = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            msg = self.pubsub.get_message(timeout=0.1)
            if msg is not None and self.armed.is_set() and self.seen is None:
                self.seen = time.monotonic()

    def arm(self) -> None:
        self.seen = None
        self.armed.set()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.pubsub.close()


def _kernel_event(sock: Any, want: str, deadline: float) -> float | None:
    """When leaf1's kernel first reports an event of kind `want` (link or route)."""
    import select

    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.05)
        if not ready:
            continue
        now = time.monotonic()
        for msg in netlink.drain(sock):
            if want == "link" and msg["event"] == "RTM_NEWLINK" and not msg["flags"] & 0x10000:
                return now
            if want == "route" and msg["event"] in ("RTM_NEWROUTE", "RTM_DELROUTE") and msg["proto"] == 186:
                return now
    return None


def _wait(watch: KeyWatch, deadline: float) -> float | None:
    while watch.seen is None and time.monotonic() < deadline:
        time.sleep(0.001)
    return watch.seen


def link_round(lab: str, redis: SonicRedis, leaf_port: str, spine_port: str) -> dict[str, float | None]:
    ports = KeyWatch(redis, "STATE_DB", f"PORT_TABLE|{leaf_port}")
    routes = KeyWatch(redis, "APPL_DB", "ROUTE_TABLE:*")
    link_sock = netlink.open_socket(f"tw.{lab}.leaf1", netlink.RTMGRP_LINK)
    route_sock = netlink.open_socket(f"tw.{lab}.leaf1", netlink.RTMGRP_IPV4_ROUTE)
    time.sleep(0.3)
    ports.arm()
    routes.arm()
    subprocess.run(["ip", "-n", f"tw.{lab}.spine1", "link", "set", spine_port, "down"], check=True)
    deadline = time.monotonic() + 10
    t_link = _kernel_event(link_sock, "link", deadline)
    t_route = _kernel_event(route_sock, "route", deadline)
    t_port, t_routes = _wait(ports, deadline), _wait(routes, deadline)
    subprocess.run(["ip", "-n", f"tw.{lab}.spine1", "link", "set", spine_port, "up"], check=True)
    for w in (ports, routes):
        w.close()
    link_sock.close()
    route_sock.close()
    return {"port_ms": None if t_link is None or t_port is None else round(1000 * (t_port - t_link), 1),
            "route_ms": None if t_route is None or t_routes is None else round(1000 * (t_routes - t_route), 1)}


def bgp_round(lab: str, redis: SonicRedis, peer: str, leaf_ip: str) -> dict[str, float | None]:
    neigh = KeyWatch(redis, "STATE_DB", f"NEIGH_STATE_TABLE|{peer}")
    vty = Vty(Path(f"/run/twin/{lab}/nodes/leaf1"), "bgpd")
    spine = f"/run/twin/{lab}/nodes/spine1"
    time.sleep(0.3)
    neigh.arm()
    subprocess.run(["vtysh", "--vty_socket", spine, "-c", "configure terminal", "-c", "router bgp 65100",
                    "-c", f"neighbor {leaf_ip} shutdown"], check=True, capture_output=True)
    t_frr = None
    deadline = time.monotonic() + 10
    while t_frr is None and time.monotonic() < deadline:
        peers = vty.json("show bgp summary json").get("ipv4Unicast", {}).get("peers", {})
        if peers.get(peer, {}).get("state") != "Established":
            t_frr = time.monotonic()
        time.sleep(0.002)
    t_redis = _wait(neigh, deadline)
    subprocess.run(["vtysh", "--vty_socket", spine, "-c", "configure terminal", "-c", "router bgp 65100",
                    "-c", f"no neighbor {leaf_ip} shutdown"], check=True, capture_output=True)
    neigh.close()
    vty.close()
    return {"neigh_ms": None if t_frr is None or t_redis is None else round(1000 * (t_redis - t_frr), 1)}


def _settle(lab: str) -> None:
    """Until every session of leaf1 is Established again, then a second for routes to follow."""
    vty = Vty(Path(f"/run/twin/{lab}/nodes/leaf1"), "bgpd")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        peers = vty.json("show bgp summary json").get("ipv4Unicast", {}).get("peers", {})
        if peers and all(p.get("state") == "Established" for p in peers.values()):
            break
        time.sleep(0.1)
    vty.close()
    time.sleep(2.0)


def _summary(values: list[float | None]) -> dict[str, Any]:
    got = [v for v in values if v is not None]
    return {"samples": values, "median": statistics.median(got) if got else None, "max": max(got) if got else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lab", default="labs/default.yaml")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    lab = "benchlat"
    subprocess.run([*TWIN, "down", "--name", lab], cwd=REPO, capture_output=True)
    subprocess.run([*TWIN, "up", args.lab, "--name", lab, "--json"], cwd=REPO, capture_output=True, check=True)
    try:
        plan = json.loads(Path(f"/run/twin/{lab}/plan.json").read_text())
        link = next(lk for lk in plan["links"] if (lk["a_node"] == "leaf1" and lk["b_node"] == "spine1")
                    or (lk["b_node"] == "leaf1" and lk["a_node"] == "spine1"))
        leaf_port, spine_port = ((link["a_iface"], link["b_iface"]) if link["a_node"] == "leaf1"
                                 else (link["b_iface"], link["a_iface"]))
        leaf = next(n for n in plan["nodes"] if n["name"] == "leaf1")
        nb = next(n for n in leaf["neighbors"] if n["name"] == "spine1")
        redis = SonicRedis(unix_socket=Path(f"/run/twin/{lab}/nodes/leaf1/redis.sock"))
        _settle(lab)
        links, sessions = [], []
        for _ in range(args.rounds):
            links.append(link_round(lab, redis, leaf_port, spine_port))
            _settle(lab)
        for _ in range(args.rounds):
            sessions.append(bgp_round(lab, redis, nb["ip"], nb["local_addr"]))
            _settle(lab)
        doc = {"lab": args.lab, "rounds": args.rounds,
               "port_table_after_kernel_ms": _summary([r["port_ms"] for r in links]),
               "route_table_after_kernel_ms": _summary([r["route_ms"] for r in links]),
               "neigh_state_after_frr_ms": _summary([r["neigh_ms"] for r in sessions])}
        print(json.dumps(doc, indent=2))
    finally:
        subprocess.run([*TWIN, "down", "--name", lab], cwd=REPO, capture_output=True)


if __name__ == "__main__":
    main()
