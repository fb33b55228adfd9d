"""`twin up` judges the lab, then tells the agent (which takes the normal CPU share back) and returns
once the agent has written every switch's state tables; the agent's share of the CPU is lowered and
given back as the kernel weighs it (twin.host.cpu_share)."""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from twin.flows import bringup
from twin.host import cpu_share
from twin.lab import agent as lab_agent
from twin.model.results import Health
from twin.switch import agent as switch_agent
from twin.switch.agent_progress import MGMT_LIMITED, SETTLED, STATE_WRITTEN

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _collector_given_back() -> Any:
    """The agent freezes its heap (gc.freeze) for good: in this test process, everything is given
    back to the collector after each test."""
    yield
    gc.unfreeze()


def _collected(obj: object) -> bool:
    """Whether the cyclic garbage collector traverses `obj` (False: frozen by gc.freeze)."""
    return any(o is obj for o in gc.get_objects())


class FakeLab:
    class health:
        timeout_s = 30.0


def _up(monkeypatch: pytest.MonkeyPatch, run_dir: Path, events: list[str], healthy: bool = True) -> Any:
    monkeypatch.setattr(lab_agent, "lab_dir", lambda lab: run_dir)
    monkeypatch.setattr(bringup, "start_lab", lambda *a, **k: events.append("started") or "running")

    def judged(*_: Any) -> Health:
        events.append("judged")
        assert not (run_dir / SETTLED).exists()   # the agent is told only once the lab is judged
        return Health(healthy=healthy, results=[], bgp={}, ecmp={}, seconds=1.0)

    monkeypatch.setattr(bringup, "wait_healthy", judged)
    return lambda: bringup.bring_up(FakeLab(), "lab", None, lambda *a: None, lambda h: None)  # type: ignore[arg-type]


def test_up_returns_once_the_agent_has_written_the_state_tables(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    events: list[str] = []
    up = _up(monkeypatch, tmp_path, events)

    def agent() -> None:   # what the agent does: waits to be told, then writes its tables
        while not (tmp_path / SETTLED).exists():
            time.sleep(0.01)
        events.append("settled")
        time.sleep(0.2)
        events.append("written")
        (tmp_path / STATE_WRITTEN).write_text("1")

    threading.Thread(target=agent, daemon=True).start()
    _, health = up()
    events.append("returned")
    assert events == ["started", "judged", "settled", "written", "returned"]
    assert health.healthy


def test_tables_not_written_in_time_make_the_lab_unhealthy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    events: list[str] = []
    up = _up(monkeypatch, tmp_path, events)
    monkeypatch.setattr(bringup, "STATE_WAIT_MIN_S", 0.2)
    monkeypatch.setattr(FakeLab.health, "timeout_s", 0.5)
    _, health = up()
    assert (tmp_path / SETTLED).exists()
    assert not health.healthy
    assert [r.name for r in health.results if r.status == "failure"] == ["state-tables"]


def test_an_unhealthy_lab_tells_the_agent_and_does_not_wait(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    events: list[str] = []
    up = _up(monkeypatch, tmp_path, events, healthy=False)
    began = time.monotonic()
    _, health = up()
    assert time.monotonic() - began < 5.0   # not the 60 s a healthy lab's agent is given
    assert (tmp_path / SETTLED).exists()
    assert not health.healthy and not [r for r in health.results if r.name == "state-tables"]


def _idle_session() -> subprocess.Popen[bytes]:
    """A process in a session (an autogroup) of its own, as the agent is."""
    return subprocess.Popen(["sleep", "30"], start_new_session=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a process its normal CPU share back needs root")
def test_a_process_s_share_is_lowered_and_given_back() -> None:
    proc = _idle_session()
    mine = cpu_share.cpu_share()
    try:
        how = cpu_share.set_cpu_share(cpu_share.LOWEST, proc.pid)
        assert how == ("autogroup" if cpu_share.autogroup_enabled() else "threads")
        assert cpu_share.cpu_share(proc.pid) == cpu_share.LOWEST
        assert cpu_share.cpu_share() == mine   # this process (another session) untouched
        cpu_share.set_cpu_share(cpu_share.NORMAL, proc.pid)
        assert cpu_share.cpu_share(proc.pid) == cpu_share.NORMAL
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a process its normal CPU share back needs root")
def test_without_autogroup_every_thread_s_nice_value_is_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    flag = tmp_path / "sched_autogroup_enabled"
    flag.write_text("0\n")
    monkeypatch.setattr(cpu_share, "AUTOGROUP_ENABLED", flag)
    monkeypatch.setattr(cpu_share, "autogroup_enabled", lambda flag=flag: flag.read_text().strip() == "1")
    proc = _idle_session()
    try:
        assert cpu_share.set_cpu_share(cpu_share.LOWEST, proc.pid) == "threads"
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == cpu_share.LOWEST
        cpu_share.set_cpu_share(cpu_share.NORMAL, proc.pid)
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == cpu_share.NORMAL
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a process its normal CPU share back needs root")
def test_a_process_in_the_root_group_has_its_threads_niced(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A process still in init's session (as a CI job's may be) has no autogroup of its own: the kernel
    shows an empty /proc/<pid>/autogroup and will not reweigh the root group, so its threads are niced."""
    proc = _idle_session()
    try:
        fake = tmp_path / str(proc.pid)
        (fake / "task" / str(proc.pid)).mkdir(parents=True)
        (fake / "autogroup").write_text("")
        flag = tmp_path / "sched_autogroup_enabled"
        flag.write_text("1\n")
        monkeypatch.setattr(cpu_share, "PROC", tmp_path)
        monkeypatch.setattr(cpu_share, "autogroup_enabled", lambda flag=flag: flag.read_text().strip() == "1")
        assert cpu_share.set_cpu_share(cpu_share.LOWEST, proc.pid) == "threads"
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == cpu_share.LOWEST
        assert cpu_share.cpu_share(proc.pid) == cpu_share.LOWEST
        assert (fake / "autogroup").read_text() == ""     # the root group's weight is not written
        cpu_share.set_cpu_share(cpu_share.NORMAL, proc.pid)
        assert cpu_share.cpu_share(proc.pid) == cpu_share.NORMAL
    finally:
        proc.kill()
        proc.wait()


def test_the_agent_takes_its_share_back_once_the_lab_is_judged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shares: list[int] = []
    monkeypatch.setattr(switch_agent, "set_cpu_share", lambda nice: shares.append(nice) or "autogroup")
    settle = threading.Thread(target=switch_agent._settle_when_judged, args=(tmp_path,))
    settle.start()
    time.sleep(0.2)
    assert shares == []            # not judged yet: still at the lowest share
    (tmp_path / SETTLED).touch()
    settle.join(timeout=5)
    assert shares == [cpu_share.NORMAL]


def test_the_agent_is_ready_then_lowers_its_share_before_it_starts_servers_and_producers(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`twin up` polls health only once agent.ready exists: written after the share was lowered, it
    waited for FRR to leave the agent a moment (up to 21 s at 64 x 128). Lowered only after the servers
    started, the agent kept the normal share through their start (15-37 s at 64 x 128, beside the
    first pass's workers), taken from the converging fabric."""
    events: list[str] = []

    def lowered(nice: int) -> str:
        events.append(f"share {nice}, ready {(tmp_path / 'agent.ready').exists()}")
        return "autogroup"

    monkeypatch.setattr(switch_agent, "set_cpu_share", lowered)
    monkeypatch.setattr(switch_agent, "_settle_when_judged", lambda run_dir: events.append("settling"))
    switch_agent._ready(tmp_path, lambda: events.append("producers started"),
                        lambda: events.append(f"servers started, ready {(tmp_path / 'agent.ready').exists()}"),
                        3, started_ahead=True)
    time.sleep(0.1)  # the settling thread has run
    assert events[0] == f"share {cpu_share.LOWEST}, ready True"
    assert [e for e in events if e != "settling"] == [f"share {cpu_share.LOWEST}, ready True",
                                                       "servers started, ready True", "producers started"]
    assert "settling" in events
    assert (tmp_path / "agent.ready").read_text() == str(os.getpid())


def test_an_agent_not_started_ahead_keeps_its_share_and_serves_before_it_is_ready(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`twin agent restart` returns on agent.ready: its clients are answered from then on."""
    shares: list[int] = []
    events: list[str] = []
    monkeypatch.setattr(switch_agent, "set_cpu_share", lambda nice: shares.append(nice) or "autogroup")
    switch_agent._ready(tmp_path, lambda: events.append("producers started"),
                        lambda: events.append(f"servers started, ready {(tmp_path / 'agent.ready').exists()}"),
                        3, started_ahead=False)
    assert shares == [] and (tmp_path / "agent.ready").exists()
    assert events == ["servers started, ready False", "producers started"]


def test_the_state_is_marked_written_only_once_the_servers_serve(tmp_path: Path) -> None:
    """`twin up` returns on STATE_WRITTEN, and what it reports is served over gNMI by then."""
    serving, written = threading.Event(), threading.Event()
    writer = threading.Thread(target=switch_agent._written, args=(tmp_path, 3, serving, written), daemon=True)
    writer.start()
    writer.join(timeout=0.3)
    assert writer.is_alive() and not (tmp_path / STATE_WRITTEN).exists() and not written.is_set()
    switch_agent._start_servers([], serving)
    writer.join(timeout=5)
    assert (tmp_path / STATE_WRITTEN).exists() and written.is_set()


def test_the_agent_s_run_files_of_an_earlier_start_are_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (SETTLED, STATE_WRITTEN, MGMT_LIMITED, "agent.ready"):
        (tmp_path / name).write_text("old")
    monkeypatch.setattr(lab_agent, "lab_dir", lambda lab: tmp_path)
    lab_agent._fresh_run_files("lab")
    assert not [p for p in (SETTLED, STATE_WRITTEN, MGMT_LIMITED, "agent.ready") if (tmp_path / p).exists()]


def test_the_agent_s_set_up_is_out_of_the_collector_s_reach_before_the_first_pass(tmp_path: Path) -> None:
    """Every full collection traversed what the set-up made (192 switches' servers, daemons and
    producers at 64 x 128): gc_collect_main was half the agent's CPU while the fabric converged.
    Frozen before the producers start; the first pass's rows frozen once written."""
    set_up = {"switch": ["producers"]}
    seen: list[bool] = []
    switch_agent._ready(tmp_path, lambda: seen.append(_collected(set_up)), lambda: None, 3, started_ahead=False)
    assert seen == [False]
    rows = {"ROUTE_TABLE": ["row"]}
    assert _collected(rows)
    serving = threading.Event()
    serving.set()
    written = threading.Event()
    switch_agent._written(tmp_path, 3, serving, written)
    assert not _collected(rows)
    assert written.is_set() and (tmp_path / STATE_WRITTEN).exists()


def test_up_holds_the_plan_out_of_the_collector_s_reach_and_gives_it_back(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    """`twin up`'s health poll allocates enough to run many full collections; each traversed the
    plan and the lab's state (a third of the poll's CPU at 64 x 128). Frozen from the start of the
    bring-up (the plan) and after the lab started (its state); given back when it returns, so a
    caller that brings labs up in one process (the pytest plugin) keeps its garbage collected."""
    events: list[str] = []
    up = _up(monkeypatch, tmp_path, events)
    plan = {"nodes": ["spine1"]}
    states: list[dict[str, list[str]]] = []

    def started(*_: Any) -> str:
        assert not _collected(plan)
        states.append({"state": ["up"]})
        return "running"

    def judged(*_: Any) -> Health:
        assert not _collected(plan) and not _collected(states[0])
        return Health(healthy=False, results=[], bgp={}, ecmp={}, seconds=1.0)

    monkeypatch.setattr(bringup, "start_lab", started)
    monkeypatch.setattr(bringup, "wait_healthy", judged)
    up()
    assert _collected(plan) and _collected(states[0])



def test_the_management_limits_wait_for_the_state_tables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """twin.switch.agent._limit_mgmt: the nftables limits' hooks see every packet, so they are put in
    place once the state tables are written (after the convergence `twin up` waits for), then
    mgmt.limited is written."""
    written = threading.Event()
    applied: list[bool] = []
    done = switch_agent.mgmt_nft.Applied(limited=["leaf1"], failed=["leaf2: its namespace is gone"])
    monkeypatch.setattr(switch_agent.mgmt_nft, "apply",
                        lambda switches, ports: applied.append(written.is_set()) or done)
    limiter = threading.Thread(target=switch_agent._limit_mgmt, args=(tmp_path, [], [8080, 22], written))
    limiter.start()
    time.sleep(0.3)
    assert applied == [] and not (tmp_path / MGMT_LIMITED).exists()
    with caplog.at_level(logging.INFO, logger=switch_agent.log.name):
        written.set()
        limiter.join(timeout=5)
    assert applied == [True] and (tmp_path / MGMT_LIMITED).exists()
    assert "connection limits in place on 1 of 2 switches" in caplog.text


def test_the_management_limits_wait_for_the_tables_no_longer_than_their_bound(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    """A switch whose redis never takes the first pass does not keep every switch's limits away."""
    applied: list[float] = []
    monkeypatch.setattr(switch_agent.mgmt_nft, "apply", lambda switches, ports: applied.append(time.monotonic())
                        or switch_agent.mgmt_nft.Applied())
    began = time.monotonic()
    switch_agent._limit_mgmt(tmp_path, [], [8080], threading.Event(), wait=0.2)
    assert len(applied) == 1 and applied[0] - began >= 0.2
    assert (tmp_path / MGMT_LIMITED).exists()
