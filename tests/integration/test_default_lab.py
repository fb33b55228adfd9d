"""The default lab end to end: up healthy, status contract, exec, management, down leaves nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from labtools import leftovers, mgmt_limited, netns_exec, twin, twin_json, unique

from twin.host.cpu_share import NORMAL, cpu_share
from twin.host.rundir import lab_dir, load_state, node_dir
from twin.switch.access.mgmt_nft import TABLE as MGMT_TABLE
from twin.switch.agent import RESTARTED
from twin.switch.agent_progress import LAUNCHED, MGMT_LIMITED, SETTLED, STATE_WRITTEN
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis

UP: dict[str, Any] = {}   # what `twin up` answered, and when it returned


@pytest.fixture(scope="module")
def default_lab() -> Iterator[str]:
    name = unique("d")
    try:
        result = twin_json("up", "labs/default.yaml", "--name", name, timeout=300)
        UP.update(result=result, returned=time.time())
        assert result["healthy"], result
        yield name
    finally:
        twin("down", "--name", name, check=False)


def test_status_json_contract(default_lab: str) -> None:
    doc = twin_json("status", "--name", default_lab)
    assert doc["lab"] == default_lab
    assert doc["runtime"] == "netns"
    assert doc["healthy"] is True
    roles = sorted(n["role"] for n in doc["nodes"])
    assert roles.count("spine") == 4 and roles.count("leaf") == 8 and roles.count("server") == 16
    for node in doc["nodes"]:
        assert {"name", "role", "mgmt", "gnmi"} <= set(node)
        assert node["role"] in {"spine", "leaf", "server", "router", "host"}
    assert doc["bgp"] == {"established": 64, "total": 64}
    assert len(doc["ecmp"]) == 8
    assert all(v == {"min": 4, "max": 4} for v in doc["ecmp"].values())


def test_every_switch_has_a_reachable_management_address(default_lab: str) -> None:
    doc = twin_json("status", "--name", default_lab)
    switches = [n for n in doc["nodes"] if n["role"] in ("spine", "leaf")]
    assert len({n["mgmt"] for n in switches}) == 12
    addrs = [n["mgmt"] for n in switches]
    proc = subprocess.run(["fping", "-a", "-r", "1", "-t", "300", *addrs], capture_output=True, text=True)
    assert sorted(proc.stdout.split()) == sorted(addrs)


def test_switch_redis_runs_as_sonic_s_with_housekeeping_once_a_second(default_lab: str) -> None:
    sock = str(node_dir(default_lab, "leaf1") / "redis.sock")

    def config(name: str) -> str:
        return subprocess.run(["redis-cli", "-s", sock, "config", "get", name], capture_output=True, text=True,
                              check=True).stdout.split("\n", 1)[1].strip()

    assert "pubsub 0 0 0" in config("client-output-buffer-limit")  # docker-database's redis.conf
    assert config("hz") == "1"  # where SONiC's is 10: README's one list of differences


def test_the_agent_started_ahead_of_the_switches_serves_at_normal_priority(default_lab: str) -> None:
    """It was started before the switches at nice 19 (twin.lab.agent_preload, as `twin up` knew the
    lab's name) and took the normal priority back with its settings: every one of its threads runs at
    nice 0."""
    pid = int((lab_dir(default_lab) / "agent.pid").read_text())
    assert b"--preloaded" in Path(f"/proc/{pid}/cmdline").read_bytes()
    nices = {int(Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[16])
             for tid in os.listdir(f"/proc/{pid}/task")}
    assert nices == {0}


def test_an_up_refused_before_the_lab_existed_leaves_no_agent_behind(default_lab: str) -> None:
    """`twin up` of a name already up stops before anything of a lab is made: the agent it had
    started loading ends with it; the running lab's own agent stays."""
    proc = twin("up", "labs/default.yaml", "--name", default_lab, check=False)
    assert proc.returncode == 2 and "already up" in proc.stderr
    agent = int((lab_dir(default_lab) / "agent.pid").read_text())
    agents = subprocess.run(["pgrep", "-f", f"twin.switch.agent --run-dir {lab_dir(default_lab)} "],
                            capture_output=True, text=True).stdout.split()
    assert [int(p) for p in agents] == [agent]


def test_the_agent_is_set_up_while_frr_launches_and_produces_state_once_it_has(default_lab: str) -> None:
    """agent.json is written once every switch is prepared (CONFIG_DB loaded: programmed.json), while
    FRR launches (switches prepared early have launched already: twin.runtime.launch_order); the
    agent's state producers start once `twin up` said every FRR launched (nodes.launched), which is
    after the last bgpd started."""
    run = lab_dir(default_lab)
    state = load_state(default_lab)
    assert state is not None
    switches = [node_dir(default_lab, n.name) for n in state.nodes if n.kind == "switch"]

    def mtime(path: Path) -> float:
        return path.stat().st_mtime

    settings, launched = mtime(run / "agent.json"), mtime(run / LAUNCHED)
    assert max(mtime(d / "programmed.json") for d in switches) <= settings
    assert max(mtime(d / "bgpd.pid") for d in switches) <= launched
    log = (run / "agent.log").read_text()
    # started ahead of the switches, it programs them as a fresh switch's daemons do (it used to
    # decide by whether the lab was marked launched by the time it read its settings, and then
    # converged every switch again as after a crash, rewriting programmed.json)
    assert RESTARTED not in log, log
    assert log.index(f"config daemons of {len(switches)} switches started") < log.index(
        f"state producers of {len(switches)} switches started")


def test_up_returned_with_the_state_tables_written_and_the_agent_back_at_its_share(default_lab: str) -> None:
    """The agent ran at the lowest CPU share from its ready (written once the lab launched, before its
    gRPC servers and state producers start) until `twin up` judged the lab, then took the normal one
    back; `twin up` returned after its first pass: every switch's STATE_DB port and neighbour tables
    and APPL_DB routes were written before it returned."""
    run = lab_dir(default_lab)
    assert (run / SETTLED).exists()                                  # the agent was told the lab is judged
    assert (run / STATE_WRITTEN).stat().st_mtime <= UP["returned"]  # and had written before `twin up` returned
    assert "state_written" in UP["result"]["phases"]
    log = (run / "agent.log").read_text()
    lowered, written = log.index("at the lowest CPU share"), log.index("state tables of")
    # ready, then the lowest share, then the servers and the producers (twin.switch.agent._ready): started at
    # the normal share, the servers' start kept the agent there through a 64 x 128 convergence for up to 37 s
    assert lowered < log.index("gNMI servers started") < log.index("state producers of")
    assert (run / "agent.ready").stat().st_mtime <= (run / STATE_WRITTEN).stat().st_mtime
    assert lowered < log.index("the lab is judged: back at the normal CPU share")
    assert lowered < written
    assert cpu_share(int((run / "agent.pid").read_text())) == NORMAL
    state = load_state(default_lab)
    assert state is not None
    for node in (n for n in state.nodes if n.kind == "switch"):
        db = SonicRedis(unix_socket=socket_path(node_dir(default_lab, node.name)))
        peers = [k for k in db.client("CONFIG_DB").keys("BGP_NEIGHBOR|*")]
        neighbours = db.client("STATE_DB").keys("NEIGH_STATE_TABLE|*")
        assert len(neighbours) == len(peers) > 0, node.name
        assert all(db.client("STATE_DB").hget(k, "state") == "Established" for k in neighbours), node.name
        assert db.client("STATE_DB").keys("PORT_TABLE|Ethernet*"), node.name
        assert db.client("APPL_DB").keys("ROUTE_TABLE:*"), node.name


def test_the_management_limits_come_after_the_state_tables_on_every_switch(default_lab: str) -> None:
    """twin.switch.agent._limit_mgmt: the management ports' nftables limits are put in place once the
    state tables are written (their hooks see every packet: not while the fabric converges), then
    mgmt.limited is written; every switch's namespace holds the table by then."""
    assert mgmt_limited(default_lab)
    run = lab_dir(default_lab)
    assert (run / STATE_WRITTEN).stat().st_mtime <= (run / MGMT_LIMITED).stat().st_mtime
    log = (run / "agent.log").read_text()
    assert log.index("state tables of") < log.index("management ports' connection limits in place on 12 of 12")
    state = load_state(default_lab)
    assert state is not None
    for node in (n for n in state.nodes if n.kind == "switch"):
        listed = netns_exec(default_lab, node.name, "nft", "list", "tables")
        assert f"inet {MGMT_TABLE}" in listed.stdout, node.name


def test_spines_launch_before_leaves(default_lab: str) -> None:
    """twin.runtime.launch_order: every spine's bgpd runs before any leaf's FRR starts, so no spine
    and leaf bgpd started together connect to each other at the same moment (a connection collision,
    which FRR 8.4 sometimes resolves by resetting both)."""
    def started(switch: str, daemon: str) -> float:
        return _started_at(int((node_dir(default_lab, switch) / f"{daemon}.pid").read_text()))

    spines, leaves = [f"spine{i}" for i in range(1, 5)], [f"leaf{i}" for i in range(1, 9)]
    assert max(started(s, "bgpd") for s in spines) <= min(started(leaf, "zebra") for leaf in leaves)


def test_exec_runs_inside_a_node(default_lab: str) -> None:
    out = twin("exec", "--name", default_lab, "leaf1", "--", "vtysh", "-c", "show bgp summary").stdout
    assert "Total number of neighbors 4" in out
    ping = twin("exec", "--name", default_lab, "server1", "--", "ping", "-c", "1", "-W", "2", "10.2.3.131",
                check=False)
    assert ping.returncode == 0, ping.stdout + ping.stderr  # server16 behind leaf8


def test_exec_exit_code_is_the_command_s(default_lab: str) -> None:
    assert twin("exec", "--name", default_lab, "spine1", "--", "false", check=False).returncode == 1


def test_four_equal_cost_paths_in_the_kernel(default_lab: str) -> None:
    route = netns_exec(default_lab, "leaf1", "ip", "-4", "route", "show", "10.1.4.8/32").stdout
    assert route.count("nexthop via") == 4


def _started_at(pid: int) -> float:
    """A process's start as wall-clock time: the kernel counts it in clock ticks of CLOCK_BOOTTIME
    (/proc/stat's btime is whole seconds: too coarse)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _log_time(line: str) -> float:
    """The wall-clock time of an frr.log line (`2026/11/25 20:40:08.618591 BGP: ...`, local time)."""
    return datetime.strptime(" ".join(line.split()[:2]), "%Y/%m/%d %H:%M:%S.%f").timestamp()


def test_bfdd_started_once_bgp_was_up_and_no_bfd_session_flapped(default_lab: str) -> None:
    """The held start (twin.kinds.held_start): every switch's bfdd starts after its BGP sessions came
    up, so FRR never re-creates a BFD session under a live one; no BGP session went down for BFD."""
    for n in (s for s in json.loads((lab_dir(default_lab) / "state.json").read_text())["nodes"]
              if s["kind"] == "switch"):
        rundir = node_dir(default_lab, n["name"])
        log = (rundir / "frr.log").read_text().splitlines()
        assert not [line for line in log if "BFD Down" in line], f"{n['name']}: a BFD flap took BGP down"
        first_up: dict[str, float] = {}
        for line in log:
            if (m := re.search(r"%ADJCHANGE: neighbor (\S+) .* Up$", line.rstrip())):
                first_up.setdefault(m.group(1), _log_time(line))
        assert len(first_up) >= 4, f"{n['name']}: {len(first_up)} sessions came up"
        bfdd = _started_at(int((rundir / "bfdd.pid").read_text()))
        last = max(first_up.values())   # clock ticks are 10 ms: a start in the same tick reads earlier
        assert bfdd >= last - 0.02, f"{n['name']}: bfdd started {last - bfdd:.3f} s before BGP was up"


def test_no_frr_daemon_refused_a_line_of_its_config(default_lab: str) -> None:
    """Each daemon starts with its own part of the switch's frr.conf (twin.switch.frr.frr_split): a line
    given to a daemon that does not know it is logged as "No such command" (bgpd was given zebra's
    `set src`); vtysh, loading frr.conf on SONiC, sends each line only to the daemons that know it."""
    for rundir in sorted(p for p in (lab_dir(default_lab) / "nodes").iterdir() if (p / "bgpd.conf").exists()):
        refused = [line for log in rundir.glob("*.log") for line in log.read_text().splitlines()
                   if "No such command" in line or "Unknown command" in line]
        assert not refused, f"{rundir.name}: {refused[:3]}"


def test_down_removes_everything_and_is_idempotent(lab_name: str) -> None:
    twin_json("up", "tests/integration/data/mini.yaml", "--name", lab_name)
    assert leftovers(lab_name)
    first = twin("down", "--name", lab_name)
    assert "removed" in first.stderr
    assert leftovers(lab_name) == []
    second = twin("down", "--name", lab_name)
    assert "nothing to remove" in second.stderr
