#!/usr/bin/env python3
"""gNMI figures of one lab's agent (sonic-gnmi as twin serves it). Prints one JSON document.

    python bench/gnmi.py [--lab-file labs/default.yaml] [--rounds 10] [--window 20] [--keep]
    python bench/gnmi.py --twin-root /tmp/twin-old --parts cpu     # another checkout's twin

Brings up a lab under a unique name (torn down with `twin down` at the end, also on an error or
ctrl-C, unless --keep), then:
- push: `twin push --json` wall time (the CLI's own start-up included), once when nothing
  changes, once after one PORT description per switch was changed over gNMI (a real replace);
- get_all_state: per switch, a Get (json_ietf) of CONFIG_DB, STATE_DB and APPL_DB whole and of
  COUNTERS_DB's COUNTERS table (sonic-gnmi refuses COUNTERS_DB whole), for every switch one after
  the other and from 12 threads at once; connecting is included; bytes are the GetResponses'
  protobuf size;
- on_change_ms: on leaf1, STREAM ON_CHANGE subscriptions to STATE_DB PORT_TABLE and
  NEIGH_STATE_TABLE; per round a fabric port goes down and up (`ip -n ... link set`), timed from
  just before `ip` runs to the first PORT_TABLE notification showing the new netdev_oper_status;
  then the BGP session on that port is shut on leaf1's bgpd (over its vty socket, already in
  `router bgp` mode), timed from just before the command to the first NEIGH_STATE_TABLE
  notification showing it not Established. Each round waits until every session of leaf1 is
  Established again and the notifications say so;
- agent_cpu_percent: the lab's agent process (every switch's gNMI and state producers) as
  percent of one core over --window seconds with no subscription, then with 4 STREAM ON_CHANGE
  subscriptions (leaf1 and leaf2, PORT_TABLE and NEIGH_STATE_TABLE, one RPC each);
- load: 1, 4 and 16 client processes (--clients) on leaf1 for --seconds each: Gets of
  BGP_NEIGHBOR, every tenth request a Set of the client's own port description; requests/s,
  p50/p99, errors, and whether each client's last acknowledged Set is in CONFIG_DB;
- streams: Get latency on leaf1 alone and beside --streams STREAM subscriptions on it.
Other labs on the machine share its CPUs: expect noise, and compare figures of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from process_cpu import process_seconds  # noqa: E402
from pygnmi.client import gNMIclient  # noqa: E402

from twin.gnmi.client import SwitchClient  # noqa: E402
from twin.switch.frr.frr_vty import Vty  # noqa: E402

RUN = Path(os.environ.get("TWIN_RUN_DIR", "/run/twin"))
PARTS = ("push", "get", "on_change", "cpu", "load", "streams")
GET_PATHS = ("/sonic-db:CONFIG_DB/localhost/", "/sonic-db:STATE_DB/localhost/", "/sonic-db:APPL_DB/localhost/",
             "/sonic-db:COUNTERS_DB/localhost/COUNTERS")
PORT_TABLE = "/sonic-db:STATE_DB/localhost/PORT_TABLE"
NEIGH_TABLE = "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE"
WAIT_S = 10.0


class Twin:
    """The twin CLI of a checkout (this one, or --twin-root's), run from that checkout."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = dict(os.environ, PYTHONPATH=str(root))

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "twin", *args], cwd=self.root, env=self.env,
                              capture_output=True, text=True, timeout=timeout)


# -- the lab as its run directory describes it (read as JSON: any checkout's lab) ---------------

def _doc(lab: str, name: str) -> Any:
    return json.loads((RUN / lab / name).read_text())


def switches(lab: str) -> list[str]:
    return [n["name"] for n in _doc(lab, "state.json")["nodes"] if n["kind"] == "switch"]


def target(lab: str, node: str) -> dict[str, Any]:
    """pygnmi's gNMIclient keywords for one switch (what `twin status --json` lists as gnmi)."""
    agent = _doc(lab, "agent.json")
    mgmt = next(n["mgmt"] for n in _doc(lab, "state.json")["nodes"] if n["name"] == node)
    t: dict[str, Any] = {"target": (mgmt, agent["port"]), "username": agent["username"],
                         "password": agent["password"]}
    t["skip_verify" if agent["tls"] else "insecure"] = True
    return t


def twin_target(lab: str, node: str) -> dict[str, Any]:
    """The same, in the form twin's SwitchClient takes."""
    t = target(lab, node)
    host, port = t.pop("target")
    return {"host": host, "port": port, **t}


def client(lab: str, node: str) -> Any:
    gc = gNMIclient(gnmi_timeout=10, show_diff="", **target(lab, node))
    gc.connect()
    return gc


def agent_pid(lab: str) -> int:
    """The agent's pid: what it wrote to agent.ready (the current agent), else agent.pid."""
    for name in ("agent.ready", "agent.pid"):
        try:
            return int((RUN / lab / name).read_text().strip())
        except (OSError, ValueError):
            continue
    raise RuntimeError(f"lab {lab}: no agent pid in {RUN / lab}")


# -- summaries ------------------------------------------------------------------------------------

def summary(values: list[float | None]) -> dict[str, Any]:
    got = sorted(v for v in values if v is not None)
    if not got:
        return {"samples": values, "median": None, "p90": None, "max": None}
    p90 = got[min(len(got) - 1, round(0.9 * (len(got) - 1)))]
    return {"samples": values, "missed": len(values) - len(got), "median": round(statistics.median(got), 1),
            "p90": round(p90, 1), "max": round(got[-1], 1)}


def ms(since: float, at: float | None) -> float | None:
    return None if at is None else round(1000 * (at - since), 1)


# -- 1. push --------------------------------------------------------------------------------------

def push_once(twin: Twin, lab: str) -> dict[str, Any]:
    start = time.monotonic()
    proc = twin.run("push", "--name", lab, "--json", timeout=300)
    wall = time.monotonic() - start
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"seconds": round(wall, 3), "ok": False, "error": (proc.stderr or proc.stdout)[-1500:]}
    results = doc.get("switches", [])
    return {"seconds": round(wall, 3), "ok": bool(doc.get("ok")) and all(r.get("ok") for r in results),
            "switches": len(results),
            "switches_changed": sum(1 for r in results if r.get("added") or r.get("removed") or r.get("changed")),
            "keys_changed": sum(len(r.get("added", [])) + len(r.get("removed", [])) + len(r.get("changed", []))
                                for r in results),
            "errors": [f"{r['switch']}: {r['error']}" for r in results if not r.get("ok")]}


def bench_push(twin: Twin, lab: str) -> dict[str, Any]:
    unchanged = push_once(twin, lab)
    plan = _doc(lab, "plan.json")
    ports = {n["name"]: n["interfaces"][0]["name"] for n in plan["nodes"] if n["kind"] == "switch"}
    mark = f"bench {uuid.uuid4().hex[:6]}"

    def change(node: str) -> None:
        with SwitchClient(node, twin_target(lab, node), timeout=60) as sw:
            sw.set_field("PORT", ports[node], "description", mark)

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(change, sorted(ports)))
    set_s = time.monotonic() - t0
    changed = push_once(twin, lab)
    return {"unchanged": unchanged, "after_gnmi_change": changed,
            "gnmi_sets_before_second_push_seconds": round(set_s, 3),
            "note": "wall time of `twin push --json`, the CLI's python start-up included"}


# -- 2. Get of all state --------------------------------------------------------------------------

class _CountingStub:
    """pygnmi's stub with every GetResponse's size added up."""

    def __init__(self, stub: Any) -> None:
        self.stub = stub
        self.bytes = 0

    def Get(self, *args: Any, **kwargs: Any) -> Any:
        response = self.stub.Get(*args, **kwargs)
        self.bytes += response.ByteSize()
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stub, name)


def get_all(lab: str, node: str) -> tuple[int, int]:
    """(protobuf bytes, updates) of one switch's Gets, connection included."""
    gc = client(lab, node)
    try:
        stub = _CountingStub(gc._gNMIclient__stub)
        gc._gNMIclient__stub = stub
        updates = 0
        for path in GET_PATHS:
            response = gc.get(path=[path], encoding="json_ietf")
            updates += sum(len(n.get("update", [])) for n in response.get("notification", []))
        return stub.bytes, updates
    finally:
        gc.close()


def bench_get(lab: str, repeats: int = 3) -> dict[str, Any]:
    names = switches(lab)
    sequential, parallel = [], []
    size = updates = 0
    for _ in range(repeats):
        t0 = time.monotonic()
        results = [get_all(lab, n) for n in names]
        sequential.append(round(time.monotonic() - t0, 3))
        t0 = time.monotonic()
        with ThreadPoolExecutor(max_workers=12) as pool:
            list(pool.map(lambda n: get_all(lab, n), names))
        parallel.append(round(time.monotonic() - t0, 3))
        size, updates = sum(r[0] for r in results), sum(r[1] for r in results)
    return {"paths_per_switch": list(GET_PATHS), "switches": len(names),
            "sequential_seconds": statistics.median(sequential), "sequential_samples": sequential,
            "parallel_12_seconds": statistics.median(parallel), "parallel_12_samples": parallel,
            "bytes_received": size, "bytes_per_switch": size // max(1, len(names)), "updates": updates}


# -- subscriptions --------------------------------------------------------------------------------

class Watch:
    """One STREAM ON_CHANGE subscription to a table; keeps every notification with its arrival
    time, as rows {key: fields} (the current agent sends `{key: fields}` at the table's path, the
    old one `fields` at the key's path: both are understood)."""

    def __init__(self, gc: Any, path: str) -> None:
        self.table = path.rstrip("/").rsplit("/", 1)[1]
        self.sub = gc.subscribe2(subscribe={"subscription": [{"path": path, "mode": "on_change"}],
                                            "mode": "stream", "encoding": "json_ietf"})
        self.rows: dict[str, dict[str, Any]] = {}
        self.events: list[tuple[float, dict[str, dict[str, Any]]]] = []
        self.cond = threading.Condition()
        self.synced = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _rows(self, msg: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        upd = msg.get("update") or {}
        for u in upd.get("update", []):
            last = str(u.get("path") or "").rstrip("/").rsplit("/", 1)[-1]
            val = u.get("val")
            if not isinstance(val, dict):
                continue
            if last == self.table or last.endswith(":" + self.table):
                out.update({k: v for k, v in val.items() if isinstance(v, dict)})
            else:
                out[last] = val
        return out

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                msg = self.sub.get_update(timeout=0.2)
            except TimeoutError:
                if self.sub.error is not None:
                    return
                continue
            now = time.monotonic()
            if msg is None:
                continue
            rows = self._rows(msg)
            with self.cond:
                self.rows.update(rows)
                if self.synced.is_set():
                    self.events.append((now, rows))
                self.cond.notify_all()
            self.synced.set()

    def wait(self, since: float, key: str, ok: Callable[[dict[str, Any]], bool], timeout: float = WAIT_S
             ) -> float | None:
        """Arrival time of the first notification after `since` whose row of `key` satisfies `ok`."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for at, rows in self.events:
                    if at >= since and key in rows and ok(rows[key]):
                        return at
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def row(self, key: str) -> dict[str, Any]:
        with self.cond:
            return dict(self.rows.get(key, {}))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=2)
        self.sub.close()


@contextmanager
def watching(lab: str, subs: list[tuple[str, str]]) -> Iterator[list[Watch]]:
    """Subscriptions (switch, path), one RPC each, open (and past their first sync) inside."""
    clients: dict[str, Any] = {}
    watches: list[Watch] = []
    try:
        for node, path in subs:
            if node not in clients:
                clients[node] = client(lab, node)
            watches.append(Watch(clients[node], path))
        for w in watches:
            if not w.synced.wait(WAIT_S):
                raise RuntimeError(f"no first sync from the subscription to {w.table}: {w.sub.error}")
        yield watches
    finally:
        for w in watches:
            w.close()
        for gc in clients.values():
            gc.close()


# -- 3. ON_CHANGE latency -------------------------------------------------------------------------

def _established(vty: Vty) -> dict[str, bool]:
    peers = vty.json("show bgp summary json").get("ipv4Unicast", {}).get("peers", {})
    return {ip: p.get("state") == "Established" for ip, p in peers.items()}


def settle(vty: Vty, ports: Watch, neigh: Watch, port: str, timeout: float = 90) -> bool:
    """Until leaf1's bgpd has every session Established, the notifications say so too and the port
    is up, then a quiet second."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        up = _established(vty)
        if (up and all(up.values()) and all(neigh.row(ip).get("state") == "Established" for ip in up)
                and ports.row(port).get("netdev_oper_status") == "up"):
            time.sleep(1.0)
            return True
        time.sleep(0.1)
    return False


def _oper(status: str) -> Callable[[dict[str, Any]], bool]:
    return lambda row: row.get("netdev_oper_status") == status


def _ip_link(netns: str, dev: str, updown: str) -> float:
    t0 = time.monotonic()
    subprocess.run(["ip", "-n", netns, "link", "set", "dev", dev, updown], check=True)
    return time.monotonic() - t0


def bench_on_change(lab: str, rounds: int, leaf: str = "leaf1") -> dict[str, Any]:
    plan = _doc(lab, "plan.json")
    node = next(n for n in plan["nodes"] if n["name"] == leaf)
    netns = next(n["netns"] for n in _doc(lab, "state.json")["nodes"] if n["name"] == leaf)
    iface = next(i for i in node["interfaces"] if i["role"] == "fabric")
    neighbor = next(nb for nb in node["neighbors"] if nb["iface"] == iface["name"])
    port, kernel, peer = iface["name"], iface["kernel"], neighbor["ip"]
    status = Vty(RUN / lab / "nodes" / leaf, "bgpd")
    config = Vty(RUN / lab / "nodes" / leaf, "bgpd")
    down_ms: list[float | None] = []
    up_ms: list[float | None] = []
    neigh_ms: list[float | None] = []
    ip_exec_ms: list[float] = []
    unsettled = 0
    try:
        with watching(lab, [(leaf, PORT_TABLE), (leaf, NEIGH_TABLE)]) as (ports, neigh):
            if not settle(status, ports, neigh, port):
                raise RuntimeError(f"{leaf}: sessions not Established before the first round")
            for _ in range(rounds):
                # the kernel: the port down, then up again
                for updown, samples in (("down", down_ms), ("up", up_ms)):
                    t0 = time.monotonic()
                    ip_exec_ms.append(1000 * _ip_link(netns, kernel, updown))
                    samples.append(ms(t0, ports.wait(t0, port, _oper(updown))))
                    time.sleep(0.3)
                unsettled += not settle(status, ports, neigh, port)
                # FRR: leaf1 shuts the session that port carries, then lets it come back
                config.run("configure terminal")
                config.run(f"router bgp {node['asn']}")
                t0 = time.monotonic()
                config.run(f"neighbor {peer} shutdown")
                neigh_ms.append(ms(t0, neigh.wait(t0, peer, lambda r: r.get("state") != "Established")))
                config.run(f"no neighbor {peer} shutdown")
                config.run("end")
                unsettled += not settle(status, ports, neigh, port)
    finally:
        # put back whatever an error interrupted (best effort: the lab goes down anyway)
        subprocess.run(["ip", "-n", netns, "link", "set", "dev", kernel, "up"], capture_output=True)
        for cmd in ("end", "configure terminal", f"router bgp {node['asn']}", f"no neighbor {peer} shutdown", "end"):
            with contextlib.suppress(Exception):
                config.run(cmd)
        status.close()
        config.close()
    port_all = down_ms + up_ms
    return {
        "switch": leaf, "fabric_port": port, "peer": peer, "rounds": rounds, "rounds_not_settled": unsettled,
        "port": {**summary(port_all), "samples_down": down_ms, "samples_up": up_ms,
                 "ip_command_ms_median": round(statistics.median(ip_exec_ms), 1) if ip_exec_ms else None,
                 "from": "just before `ip -n NETNS link set dev PORT down|up` runs (its own run time included)",
                 "to": "first PORT_TABLE notification with the new netdev_oper_status"},
        "neighbor": {**summary(neigh_ms), "from": "just before `neighbor IP shutdown` is sent to leaf bgpd's vty",
                     "to": "first NEIGH_STATE_TABLE notification of that peer not Established"},
    }


# -- 4. agent CPU ---------------------------------------------------------------------------------

def cpu_percent(pid: int, window: float) -> float:
    c0, t0 = process_seconds(pid), time.monotonic()
    time.sleep(window)
    c1, t1 = process_seconds(pid), time.monotonic()
    return round(100 * (c1 - c0) / (t1 - t0), 2)


def bench_cpu(lab: str, window: float) -> dict[str, Any]:
    pid = agent_pid(lab)
    time.sleep(2.0)  # what came before (subscriptions closing, sessions settling) is over
    idle = cpu_percent(pid, window)
    subs = [(sw, path) for sw in ("leaf1", "leaf2") for path in (PORT_TABLE, NEIGH_TABLE)]
    with watching(lab, subs):
        time.sleep(1.0)
        busy = cpu_percent(pid, window)
    return {"idle": idle, "subscriptions_4": busy, "window_seconds": window, "pid": pid,
            "subscriptions": [f"{sw} {path}" for sw, path in subs],
            "agent_cwd": os.readlink(f"/proc/{pid}/cwd")}


# -- 5. load: concurrent clients, and Gets beside many STREAM subscriptions -----------------------

LOAD_GET = "/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR"
LOAD_SET_EVERY = 10  # one request in ten is a Set (a port description of the client's own)


def load_client(lab: str, node: str, port: str, index: int, seconds: float) -> dict[str, Any]:
    """One client process: Gets of BGP_NEIGHBOR with a Set of `port`'s description every tenth
    request, for `seconds`; latencies in ms per kind, and the errors."""
    os.environ["GRPC_VERBOSITY"] = "ERROR"
    gc = client(lab, node)
    lat: dict[str, list[float]] = {"get": [], "set": []}
    errors: list[str] = []
    deadline, n = time.monotonic() + seconds, 0
    last: tuple[float, str] | None = None  # (when acknowledged, value) of the last Set that got OK
    try:
        while time.monotonic() < deadline:
            n += 1
            kind = "set" if n % LOAD_SET_EVERY == 0 else "get"
            t0 = time.monotonic()
            try:
                if kind == "get":
                    gc.get(path=[LOAD_GET], encoding="json_ietf")
                else:
                    gc.set(update=[(f"/sonic-db:CONFIG_DB/localhost/PORT/{port}/description",
                                    json.dumps(f"load {index} {n}"))], encoding="json_ietf")
                    last = (time.time(), f"load {index} {n}")
            except Exception as exc:  # counted and reported: the bench's figure is errors = 0
                errors.append(f"{kind}: {str(exc)[:200]}")
                continue
            lat[kind].append(1000 * (time.monotonic() - t0))
    finally:
        gc.close()
    return {"lat": lat, "errors": errors, "port": port, "last": last}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def bench_load(lab: str, clients: list[int], seconds: float) -> dict[str, Any]:
    """Per client count: requests/s, p50/p99 of Gets and Sets, errors, and whether every client's
    last acknowledged Set is what CONFIG_DB holds (no lost update). Clients are processes, so
    the figure is the agent's, not one Python client's GIL."""
    import multiprocessing

    node = "leaf1"
    with SwitchClient(node, twin_target(lab, node), timeout=60) as sw:
        ports = list(sw.table("CONFIG_DB", "PORT"))
    out: dict[str, Any] = {"switch": node, "seconds": seconds, "mix": f"Get {LOAD_GET}, every "
                           f"{LOAD_SET_EVERY}th request a Set of the client's own PORT description"}
    ctx = multiprocessing.get_context("spawn")
    for count in clients:
        with ctx.Pool(count) as pool:
            t0 = time.monotonic()
            results = pool.starmap(load_client, [(lab, node, ports[i % len(ports)], i, seconds)
                                                  for i in range(count)])
            wall = time.monotonic() - t0
        gets = [x for r in results for x in r["lat"]["get"]]
        sets = [x for r in results for x in r["lat"]["set"]]
        errors = [e for r in results for e in r["errors"]]
        with SwitchClient(node, twin_target(lab, node), timeout=60) as sw:
            table = sw.table("CONFIG_DB", "PORT")
        newest: dict[str, tuple[float, str]] = {}  # per port, the last Set any client got OK for
        for r in results:
            if r["last"] is not None and (r["port"] not in newest or r["last"][0] > newest[r["port"]][0]):
                newest[r["port"]] = r["last"]
        kept = sum(1 for port, (_, value) in newest.items() if table[port].get("description") == value)
        out[str(count)] = {
            "requests_per_s": round((len(gets) + len(sets)) / min(wall, seconds + 5), 1),
            "get_ms": {"p50": _pct(gets, 0.5), "p99": _pct(gets, 0.99), "n": len(gets)},
            "set_ms": {"p50": _pct(sets, 0.5), "p99": _pct(sets, 0.99), "n": len(sets)},
            "all_p99_ms": _pct(gets + sets, 0.99), "errors": len(errors), "error_samples": errors[:3],
            "last_set_kept": f"{kept}/{len(newest)}",
        }
    return out


def bench_streams(lab: str, streams: int, gets: int) -> dict[str, Any]:
    """Get latency on leaf1 alone, then with `streams` STREAM ON_CHANGE subscriptions open on it
    (each its own RPC, as many tools open them): subscriptions must not starve other requests."""
    def get_ms() -> list[float]:
        gc = client(lab, "leaf1")
        try:
            out = []
            for _ in range(gets):
                t0 = time.monotonic()
                gc.get(path=[LOAD_GET], encoding="json_ietf")
                out.append(1000 * (time.monotonic() - t0))
            return out
        finally:
            gc.close()

    alone = get_ms()
    subs = [("leaf1", PORT_TABLE if i % 2 else NEIGH_TABLE) for i in range(streams)]
    with watching(lab, subs):
        beside = get_ms()
    return {"streams": streams, "gets": gets,
            "get_ms_alone": {"p50": _pct(alone, 0.5), "max": round(max(alone), 1)},
            "get_ms_with_streams": {"p50": _pct(beside, 0.5), "max": round(max(beside), 1)}}


# -- the run --------------------------------------------------------------------------------------

def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _quiet_cancelled(args: threading.ExceptHookArgs) -> None:
    """pygnmi's stream thread raises CANCELLED when a subscription is closed on purpose."""
    if "CANCELLED" in str(args.exc_value) or "Channel closed" in str(args.exc_value):
        return
    threading.__excepthook__(args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lab-file", default="labs/default.yaml", help="relative to the twin checkout")
    parser.add_argument("--rounds", type=int, default=10, help="ON_CHANGE rounds (each: port down/up, session)")
    parser.add_argument("--window", type=float, default=20.0, help="seconds of each agent CPU window")
    parser.add_argument("--keep", action="store_true", help="leave the lab up (`twin down --name` it yourself)")
    parser.add_argument("--twin-root", type=Path, default=REPO,
                        help="run `twin` (and so the lab's agent) from this checkout; default: this one")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    parser.add_argument("--clients", default="1,4,16", help="load: client counts, one run each")
    parser.add_argument("--seconds", type=float, default=60.0, help="load: seconds of each run")
    parser.add_argument("--streams", type=int, default=16, help="streams: STREAM subscriptions beside Gets")
    parser.add_argument("--lab", help="use this running lab instead of bringing one up (never taken down)")
    args = parser.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    if unknown := set(parts) - set(PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    signal.signal(signal.SIGTERM, _terminate)
    threading.excepthook = _quiet_cancelled
    twin = Twin(args.twin_root.resolve())
    lab = args.lab or f"bg{uuid.uuid4().hex[:5]}"
    doc: dict[str, Any] = {"lab": args.lab_file, "name": lab, "twin_root": str(twin.root)}
    try:
        if not args.lab:
            t0 = time.monotonic()
            up = twin.run("up", args.lab_file, "--name", lab, "--json", timeout=900)
            doc["seconds_up"] = round(time.monotonic() - t0, 1)
            if up.returncode != 0:
                raise RuntimeError(f"twin up exited {up.returncode}: {(up.stderr or up.stdout)[-2000:]}")
        doc["switches"] = len(switches(lab))
        if "push" in parts:
            doc["push"] = bench_push(twin, lab)
        if "get" in parts:
            doc["get_all_state"] = bench_get(lab)
        if "on_change" in parts:
            oc = bench_on_change(lab, args.rounds)
            doc["on_change_ms"] = {"port": oc.pop("port"), "neighbor": oc.pop("neighbor"), **oc}
        if "cpu" in parts:
            cpu = bench_cpu(lab, args.window)
            doc["agent_cpu_percent"] = {"idle": cpu.pop("idle"), "subscriptions_4": cpu.pop("subscriptions_4")}
            doc["agent_cpu"] = cpu
        if "load" in parts:
            doc["load"] = bench_load(lab, [int(c) for c in args.clients.split(",")], args.seconds)
        if "streams" in parts:
            doc["streams"] = bench_streams(lab, args.streams, 50)
    except KeyboardInterrupt:
        doc["error"] = "interrupted"
    except Exception as exc:  # reported in the document; the lab still goes down
        doc["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if args.keep or args.lab:
            doc["kept"] = f"twin down --name {lab}"
        else:
            down = twin.run("down", "--name", lab, timeout=300)
            doc["down_exit"] = down.returncode
        print(json.dumps(doc, indent=2))
    if "error" in doc:
        sys.exit(1)


if __name__ == "__main__":
    main()
