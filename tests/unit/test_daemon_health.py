"""The process checks (twin.checks.daemons) on fake pid files, a fake /proc and real short-lived processes:
a dead bgpd, redis-server or agent is named with its pid; nothing running is not a failure."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from twin.checks.base import Outputs
from twin.checks.collect_processes import agent_facts, daemon_facts
from twin.checks.daemons import (
    AgentInput,
    AgentServing,
    DaemonsInput,
    SwitchDaemonsRunning,
    daemon_status,
    expected_processes,
    process_checks,
)
from twin.checks.health import evaluate
from twin.host.processes import ProcessTable, netns_processes, read_proc
from twin.host.rundir import lab_dir, node_dir
from twin.lab.running import RunningLab, load_agent_settings
from twin.model.plan import Plan
from twin.model.state import LabState, NodeState
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

MINI = Path(__file__).resolve().parents[1] / "integration" / "data" / "mini.yaml"
LEAF = ["zebra", "bgpd", "staticd", "bfdd", "redis-server"]


def _proc(ns_pid: int, name: str, state: str = "S", pid: int | None = None) -> dict[str, Any]:
    return {"pid": pid or ns_pid, "ns_pid": ns_pid, "name": name, "state": state}


HEALTHY = {"pidfiles": {"zebra": 11, "bgpd": 12, "bfdd": 13, "staticd": 14, "redis": 10},
           "processes": [_proc(10, "redis-server"), _proc(11, "zebra"), _proc(12, "bgpd"), _proc(13, "bfdd"),
                         _proc(14, "staticd")]}


def _without(facts: dict[str, Any], name: str) -> dict[str, Any]:
    return {**facts, "processes": [p for p in facts["processes"] if p["name"] != name]}


# -- judging one process --------------------------------------------------------------------------

@pytest.mark.parametrize(("facts", "name", "running", "why"), [
    pytest.param(HEALTHY, "bgpd", True, "bgpd running (pid 12)", id="running"),
    pytest.param(_without(HEALTHY, "bgpd"), "bgpd", False, "bgpd not running (pid 12 gone)", id="killed"),
    pytest.param(_without(HEALTHY, "redis-server"), "redis-server", False, "redis-server not running (pid 10 gone)",
                 id="redis-killed"),
    pytest.param({**HEALTHY, "processes": [*_without(HEALTHY, "bgpd")["processes"], _proc(12, "bgpd", "Z")]},
                 "bgpd", False, "bgpd not running (pid 12 exited, not reaped)", id="zombie"),
    pytest.param({**HEALTHY, "processes": [*_without(HEALTHY, "bgpd")["processes"], _proc(12, "sleep")]},
                 "bgpd", False, "bgpd not running (pid 12 gone)", id="pid-reused-by-another-program"),
    pytest.param({"pidfiles": {}, "processes": [_proc(40, "bgpd")]}, "bgpd", True, "bgpd running (pid 40)",
                 id="no-pid-file-sonic-vs"),
    pytest.param({"pidfiles": {}, "processes": []}, "bgpd", False, "bgpd not running (no pid file, no such process)",
                 id="terminated-cleanly"),
    pytest.param({"pidfiles": {"bgpd": 12}, "processes": [_proc(77, "bgpd")]}, "bgpd", True,
                 "bgpd running (pid 77; its pid file says 12)", id="restarted-stale-pid-file"),
    pytest.param({"pidfiles": {"bgpd": 7}, "processes": [_proc(7, "bgpd", pid=31337)]}, "bgpd", True,
                 "bgpd running (pid 7)", id="container-pid-namespace"),
])
def test_daemon_status(facts: dict[str, Any], name: str, running: bool, why: str) -> None:
    assert daemon_status(facts, name)[0::2] == (running, why)


def _daemons_check() -> SwitchDaemonsRunning:
    return SwitchDaemonsRunning(DaemonsInput(lab="lab1", daemons={"leaf1": LEAF, "spine1": LEAF}))


def test_a_killed_bgpd_is_named_and_makes_the_lab_unhealthy() -> None:
    check = _daemons_check()
    outputs: Outputs = {"leaf1": {"daemons": _without(HEALTHY, "bgpd")}, "spine1": {"daemons": HEALTHY}}
    result = check.evaluate(outputs)
    assert result.status == "failure"
    assert [(i.subject, i.message) for i in result.failures] == [
        ("leaf1", "bgpd not running (pid 12 gone); 'twin frr restart leaf1 --name lab1' starts its FRR again")]
    assert check.summary(outputs)["leaf1"]["bgpd"] == {"pid": 12, "running": False}
    assert check.summary(outputs)["spine1"]["bgpd"] == {"pid": 12, "running": True}


def test_every_daemon_running_is_healthy_and_unread_processes_are_an_error() -> None:
    check = _daemons_check()
    assert check.evaluate({"leaf1": {"daemons": HEALTHY}, "spine1": {"daemons": HEALTHY}}).status == "success"
    assert check.evaluate({"leaf1": {"daemons": HEALTHY}}).status == "error"


# -- the agent ------------------------------------------------------------------------------------

def _agent(pid: int | None, ready: int | None, ours: bool = True, state: str = "S",
           listening: bool = True) -> dict[str, Any]:
    """Agent facts as twin.checks.collect_processes.agent_facts reads them."""
    return {"pid": pid, "ready": ready, "process": {"name": "python3", "state": state, "ours": ours},
            "gnmi": "172.20.9.2:8080", "listening": listening}


def _agent_check() -> AgentServing:
    return AgentServing(AgentInput(lab="lab1", switches=["leaf1", "spine1"]))


@pytest.mark.parametrize(("facts", "message"), [
    pytest.param({"pid": 4321, "ready": 4321, "process": None, "gnmi": "a:1", "listening": False},
                 "gNMI agent not running (pid 4321 gone)", id="killed"),
    pytest.param(_agent(4321, 4321, ours=False), "gNMI agent not running (pid 4321 gone)", id="pid-reused"),
    pytest.param(_agent(4321, 4321, state="Z"), "gNMI agent not running (pid 4321 gone)", id="zombie"),
    pytest.param(_agent(4321, 999), "gNMI agent (pid 4321) not serving yet (no agent.ready of its own)",
                 id="stale-ready-file"),
    pytest.param(_agent(None, None), "gNMI agent not running (no agent.pid: it was never started)", id="never"),
])
def test_a_dead_agent_is_named(facts: dict[str, Any], message: str) -> None:
    result = _agent_check().evaluate({"leaf1": {"agent": facts}, "spine1": {"agent": facts}})
    assert result.status == "failure"
    assert [(i.subject, i.message) for i in result.failures] == [
        ("lab1", f"{message}; 'twin agent restart --name lab1' starts it again")]
    assert _agent_check().summary({"leaf1": {"agent": facts}})["serving"] is False


def test_agent_serving_and_a_closed_gnmi_port() -> None:
    ok = _agent(4321, 4321)
    assert _agent_check().evaluate({"leaf1": {"agent": ok}, "spine1": {"agent": ok}}).status == "success"
    closed = _agent(4321, 4321, listening=False)
    result = _agent_check().evaluate({"leaf1": {"agent": ok}, "spine1": {"agent": closed}})
    assert [(i.subject, i.message) for i in result.failures] == [
        ("spine1", "gNMI at 172.20.9.2:8080 refuses connections")]
    assert _agent_check().summary({"leaf1": {"agent": ok}, "spine1": {"agent": closed}}) == {
        "pid": 4321, "running": True, "serving": False}


# -- what is expected of a plan -------------------------------------------------------------------

@pytest.fixture(scope="module")
def mini() -> Plan:
    return plan_topology(load_topology(MINI))



def _state(plan: Plan, runtime: str = "netns", image: str | None = None, lab: str = "lab1") -> LabState:
    return LabState(lab=lab, runtime=runtime, phase="up", topology="mini", created=0.0, image=image,
                    nodes=[NodeState(name=n.name, role=n.role, kind=n.kind, netns=f"tw.{lab}.{n.name}",
                                     mgmt="127.0.0.1" if n.kind == "switch" else None) for n in plan.nodes])


def test_expected_processes_per_runtime(mini: Plan, fake_frr: Path) -> None:
    netns = expected_processes(_state(mini), mini)
    assert sorted(netns) == ["leaf1", "leaf2", "spine1", "spine2"]   # servers run no daemons
    assert netns["leaf1"] == LEAF
    assert expected_processes(_state(mini, "clab"), mini)["leaf1"] == ["zebra", "bgpd", "staticd", "bfdd"]  # no redis
    sonic = expected_processes(_state(mini, "docker", "docker-sonic-vs:latest"), mini)
    assert sonic["leaf1"] == ["zebra", "bgpd", "redis-server"]
    (fake_frr / "bfdd").unlink()
    assert expected_processes(_state(mini), mini)["leaf1"] == ["zebra", "bgpd", "staticd", "redis-server"]


# -- collection from fake pid files and a fake /proc ----------------------------------------------

def _fake_proc(root: Path, netns_file: Path, pid: int, name: str, ns_pid: int, state: str = "S (sleeping)",
               netns: bool = True) -> None:
    d = root / str(pid)
    (d / "ns").mkdir(parents=True)
    (d / "status").write_text(f"Name:\t{name}\nState:\t{state}\nPid:\t{pid}\nNSpid:\t{pid}\t{ns_pid}\n")
    if netns:
        os.link(netns_file, d / "ns" / "net")   # the same inode: the same network namespace
    else:
        (d / "ns" / "net").write_text("")


def test_netns_processes_reads_a_fake_proc(tmp_path: Path) -> None:
    proc, run = tmp_path / "proc", tmp_path / "netns"
    run.mkdir()
    (run / "tw.lab1.leaf1").write_text("")
    _fake_proc(proc, run / "tw.lab1.leaf1", 5001, "bgpd", 12)
    _fake_proc(proc, run / "tw.lab1.leaf1", 5002, "zebra", 11, state="Z (zombie)")
    _fake_proc(proc, run / "tw.lab1.leaf1", 5003, "bgpd", 99, netns=False)   # another namespace
    found = sorted(netns_processes("tw.lab1.leaf1", proc, run), key=lambda p: p.pid)
    assert [(p.pid, p.ns_pid, p.name, p.state, p.alive) for p in found] == [
        (5001, 12, "bgpd", "S", True), (5002, 11, "zebra", "Z", False)]
    assert netns_processes("tw.gone", proc, run) == []


def test_one_reading_of_proc_serves_every_namespace(tmp_path: Path) -> None:
    proc, run = tmp_path / "proc", tmp_path / "netns"
    run.mkdir()
    for ns in ("tw.lab1.leaf1", "tw.lab1.spine1"):
        (run / ns).write_text("")
    _fake_proc(proc, run / "tw.lab1.leaf1", 5001, "bgpd", 5001)
    _fake_proc(proc, run / "tw.lab1.spine1", 5002, "bgpd", 5002)
    _fake_proc(proc, run / "tw.lab1.spine1", 5003, "zebra", 5003)
    table = ProcessTable(proc, run)
    _fake_proc(proc, run / "tw.lab1.leaf1", 5004, "zebra", 5004)   # after the reading: not in it
    assert [p.pid for p in table.netns_processes("tw.lab1.leaf1")] == [5001]
    assert [p.name for p in table.netns_processes("tw.lab1.spine1")] == ["bgpd", "zebra"]
    assert table.netns_processes("tw.gone") == []
    assert [p.pid for p in netns_processes("tw.lab1.leaf1", proc, run)] == [5001, 5004]


def test_daemon_facts_from_fake_pid_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mini: Plan,
                                          fake_frr: Path) -> None:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path / "run"))
    proc, run = tmp_path / "proc", tmp_path / "netns"
    run.mkdir()
    (run / "tw.lab1.leaf1").write_text("")
    _fake_proc(proc, run / "tw.lab1.leaf1", 6000, "redis-server", 6000)
    _fake_proc(proc, run / "tw.lab1.leaf1", 6001, "zebra", 6001)
    _fake_proc(proc, run / "tw.lab1.leaf1", 6003, "bfdd", 6003)
    _fake_proc(proc, run / "tw.lab1.leaf1", 6004, "staticd", 6004)
    monkeypatch.setattr("twin.checks.collect_processes.netns_processes",
                        lambda ns: netns_processes(ns, proc, run))
    rundir = node_dir("lab1", "leaf1")
    rundir.mkdir(parents=True)
    for name, pid in (("zebra", 6001), ("bgpd", 6002), ("bfdd", 6003), ("staticd", 6004), ("redis", 6000)):
        (rundir / f"{name}.pid").write_text(f"{pid}\n")
    (rundir / "broken.pid").write_text("not a pid")
    state = _state(mini)
    facts = daemon_facts(state, "leaf1")
    assert facts["pidfiles"] == {"bfdd": 6003, "bgpd": 6002, "redis": 6000, "staticd": 6004, "zebra": 6001}
    check = SwitchDaemonsRunning(DaemonsInput(lab="lab1", daemons={"leaf1": LEAF}))
    assert [i.message.split(";")[0] for i in check.evaluate({"leaf1": {"daemons": facts}}).failures] == [
        "bgpd not running (pid 6002 gone)"]


# -- the agent's facts from a real process -------------------------------------------------------

@pytest.fixture
def lab_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, socket.socket]]:
    """A lab run directory with agent.json naming leaf1 at 127.0.0.1 and a port that listens."""
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path / "run"))
    run_dir = lab_dir("lab1")
    run_dir.mkdir(parents=True)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    (run_dir / "agent.json").write_text(json.dumps({
        "port": server.getsockname()[1], "username": "u", "password": "p", "tls": False,
        "switches": [{"name": "leaf1"}]}))
    yield run_dir, server
    server.close()


def _running(state: LabState, plan: Plan) -> RunningLab:
    """The lab as the readers get it: state, plan and the agent settings in its run directory."""
    return RunningLab(state=state, plan=plan, agent=load_agent_settings(state.lab))


def _until(cond: Callable[[], bool]) -> None:
    """Poll until `cond` holds (bounded, so a broken test fails rather than hangs)."""
    deadline = time.monotonic() + 30
    while not cond():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.005)


def _sleeper(run_dir: Path) -> subprocess.Popen[bytes]:
    """A process whose command line names the run directory, as the agent's does (once it has exec'd)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--run-dir", str(run_dir)])
    _until(lambda: str(run_dir) in Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(errors="replace"))
    return proc


def test_agent_facts_alive_killed_and_zombie(lab_run: tuple[Path, socket.socket], mini: Plan) -> None:
    run_dir, _ = lab_run
    state = _state(mini)
    agent = _sleeper(run_dir)
    try:
        (run_dir / "agent.pid").write_text(str(agent.pid))
        (run_dir / "agent.ready").write_text(str(agent.pid))
        check = AgentServing(AgentInput(lab="lab1", switches=["leaf1"]))
        alive = {"leaf1": {"agent": agent_facts(_running(state, mini), "leaf1")}}
        assert check.evaluate(alive).status == "success"
        assert check.summary(alive) == {"pid": agent.pid, "running": True, "serving": True}
        agent.kill()   # not reaped yet: a zombie
        _until(lambda: (p := read_proc(agent.pid)) is not None and p.state == "Z")
        zombie = {"leaf1": {"agent": agent_facts(_running(state, mini), "leaf1")}}
        assert [i.message.split(";")[0] for i in check.evaluate(zombie).failures] == [
            f"gNMI agent not running (pid {agent.pid} gone)"]
        agent.wait()
        gone = {"leaf1": {"agent": agent_facts(_running(state, mini), "leaf1")}}
        assert [i.message.split(";")[0] for i in check.evaluate(gone).failures] == [
            f"gNMI agent not running (pid {agent.pid} gone)"]
    finally:
        agent.kill()
        agent.wait()


def test_agent_facts_port_closed(lab_run: tuple[Path, socket.socket], mini: Plan) -> None:
    run_dir, server = lab_run
    state = _state(mini)
    agent = _sleeper(run_dir)
    try:
        (run_dir / "agent.pid").write_text(str(agent.pid))
        (run_dir / "agent.ready").write_text(str(agent.pid))
        server.close()
        facts = agent_facts(_running(state, mini), "leaf1")
        assert facts["listening"] is False
        result = AgentServing(AgentInput(lab="lab1", switches=["leaf1"])).evaluate({"leaf1": {"agent": facts}})
        assert [(i.subject, i.message) for i in result.failures] == [
            ("leaf1", f"gNMI at 127.0.0.1:{facts['gnmi'].split(':')[1]} refuses connections")]
    finally:
        agent.kill()
        agent.wait()


def test_process_checks_join_the_health_of_a_lab(lab_run: tuple[Path, socket.socket], mini: Plan,
                                                  fake_frr: Path) -> None:
    state = _state(mini)
    checks = process_checks(_running(state, mini))
    assert [c.name for c in checks] == ["agent", "switch-daemons"]
    outputs: Outputs = {n: {"daemons": HEALTHY} for n in ("leaf1", "leaf2", "spine1", "spine2")}
    outputs["leaf1"]["agent"] = _agent(4321, 4321)
    health = evaluate(mini, checks, outputs)
    assert health.healthy and health.agent == {"pid": 4321, "running": True, "serving": True}
    assert health.daemons["spine2"]["bgpd"] == {"pid": 12, "running": True}
    outputs["spine2"] = {"daemons": _without(HEALTHY, "bgpd")}
    assert not evaluate(mini, checks, outputs).healthy
