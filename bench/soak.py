#!/usr/bin/env python3
"""Soak: memory across many link flaps, and recovery from killed processes. Prints one JSON document.

    python bench/soak.py [--lab labs/default.yaml] [--name soak] [--running] [--flaps 200] [--warmup 50]
                         [--link leaf1:spine1] [--kill-on leaf2]

Brings the lab up under --name (or, with --running, uses the running lab of that name and leaves it
up), then:

- memory (sonic-mgmt's link-flap memory check, tests/platform_tests/link_flap): the RSS and PSS
  (/proc/PID/smaps_rollup) of bgpd, zebra and bfdd on both ends of one leaf-spine link and of the
  lab's gNMI agent, before and after --flaps flaps of that link. A flap is the drills' own link
  fault (twin.drills.faults.link_flap: the leaf's end administratively down, then up), each waiting until
  the leaf's bgpd has seen the session go down and come back Established, so every flap is a full
  session teardown and re-establishment (sessions_dropped counts them from bgpd). Growth in percent
  per process (sonic-mgmt's bound: 5 %), and over the second half of the flaps alone: memory that
  grew while caches warmed up stops growing, a leak keeps growing. --warmup flaps come first, as a
  switch under sonic-mgmt has run for a while before the test. RSS is the figure to judge the agent
  by: its PSS also moves with how many other Python processes (twin's CLI, this script) share its
  libraries at the moment it is read.
- recovery: bgpd of --kill-on SIGKILLed; seconds until `twin status --json` names it, then
  `twin frr restart`, seconds until status is healthy again. The same for the agent with
  `twin agent restart`. Status is polled back to back, so a figure is at most one status run late
  (status_run_s says how long one takes).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from twin.drills.faults.injector import Injector  # noqa: E402
from twin.drills.targets import resolve  # noqa: E402
from twin.host.processes import memory_kib, netns_processes  # noqa: E402
from twin.host.rundir import lab_dir, load_plan, load_state, node_dir  # noqa: E402
from twin.lab.running import RunningLab  # noqa: E402
from twin.model.drill import Step  # noqa: E402
from twin.model.state import LabState  # noqa: E402
from twin.runtime.registry import runtime_of  # noqa: E402
from twin.switch.frr.frr_daemons import vtysh  # noqa: E402

TWIN = [sys.executable, "-m", "twin"]
FRR = ("bgpd", "zebra", "bfdd")
TARGET_GROWTH_PCT = 5.0
WAIT_S = 120.0   # a bound on every wait, so a broken lab ends the run instead of hanging it


def twin(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TWIN, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout)


def status(lab: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(twin("status", "--name", lab, "--json").stdout)
    return doc


def wait(cond: Any, what: str, bound: float = WAIT_S, every: float = 0.05) -> float:
    """Poll `cond` until true; the seconds it took. SystemExit when `bound` passes first."""
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > bound:
            raise SystemExit(f"soak: {what} did not happen within {bound:.0f} s")
        time.sleep(every)
    return time.monotonic() - start


def healthy(lab: str) -> bool:
    doc = status(lab)
    return bool(doc["healthy"])


# -- memory ---------------------------------------------------------------------------------------

def processes(state: LabState, switches: list[str]) -> dict[str, int]:
    """`switch/daemon` and `agent` -> host pid."""
    out = {}
    for sw in switches:
        for p in netns_processes(state.node(sw).netns):
            if p.name in FRR and p.alive:
                out[f"{sw}/{p.name}"] = p.pid
    out["agent"] = int((lab_dir(state.lab) / "agent.pid").read_text())
    return out


def memory(pids: dict[str, int]) -> dict[str, dict[str, int]]:
    return {name: memory_kib(pid) for name, pid in pids.items()}


def neighbor(state: LabState, node: str, peer_ip: str) -> dict[str, Any]:
    """bgpd's `show bgp neighbors PEER json` for one peer ({} when bgpd does not answer)."""
    proc = subprocess.run(vtysh(node_dir(state.lab, node), "-c", f"show bgp neighbors {peer_ip} json"),
                          capture_output=True, text=True, timeout=30)
    try:
        doc = json.loads(proc.stdout).get(peer_ip, {})
    except json.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


def session_state(state: LabState, node: str, peer_ip: str) -> str:
    return str(neighbor(state, node, peer_ip).get("bgpState", "?"))


def growth_pct(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    return {name: {key: round(100 * (after[name][key] - before[name][key]) / before[name][key], 2)
                   for key in ("rss", "pss") if before[name].get(key) and key in after.get(name, {})}
            for name in before}


def flap_link(lab: str, link: str, flaps: int, warmup: int) -> dict[str, Any]:
    state = load_state(lab)
    assert state is not None
    plan = load_plan(lab)
    step = Step(kind="link-flap", target=link)  # one flap at a time; the loop below counts them
    fault = resolve(plan, step)
    injector = Injector(runtime_of(state), RunningLab.load(lab))
    session = fault.sessions[0]
    ends = sorted({session.node, session.peer})
    pids = processes(state, ends)
    wait(lambda: session_state(state, session.node, session.peer_ip) == "Established", "the session up")

    def flap(k: int) -> None:
        injector.apply(fault, step, inject=True)
        wait(lambda: session_state(state, session.node, session.peer_ip) != "Established", f"flap {k} down")
        injector.apply(fault, step, inject=False)
        wait(lambda: session_state(state, session.node, session.peer_ip) == "Established", f"flap {k} up")

    for k in range(warmup):
        flap(k + 1)
    dropped = int(neighbor(state, session.node, session.peer_ip).get("connectionsDropped", 0))
    before = memory(pids)
    middle: dict[str, dict[str, int]] = {}
    start = time.monotonic()
    for k in range(flaps):
        flap(warmup + k + 1)
        if k + 1 == flaps // 2:
            middle = memory(pids)
    flapping_s = time.monotonic() - start
    dropped = int(neighbor(state, session.node, session.peer_ip).get("connectionsDropped", 0)) - dropped
    wait(lambda: healthy(lab), "the lab healthy after the flaps", every=0.5)
    after = memory(pids)
    same = processes(state, ends) == pids
    growth = growth_pct(before, after)
    worst = max((g for v in growth.values() for g in v.values()), default=0.0)
    return {"link": fault.target, "session": f"{session.node} -> {session.peer} ({session.peer_ip})",
            "warmup_flaps": warmup, "flaps": flaps, "sessions_dropped": dropped, "flapping_s": round(flapping_s, 1),
            "same_processes": same,
            "before_kib": before, "after_kib": after, "growth_pct": growth,
            "second_half_growth_pct": growth_pct(middle, after) if middle else {}, "worst_growth_pct": worst,
            "target_growth_pct": TARGET_GROWTH_PCT, "within_target": worst < TARGET_GROWTH_PCT}


# -- recovery -------------------------------------------------------------------------------------

def _named(doc: dict[str, Any], check: str, text: str) -> bool:
    return any(text in i["message"] for c in doc["checks"] if c["name"] == check for i in c["items"]
               if i["status"] != "success")


def recover(lab: str, pid: int, check: str, text: str, restore: list[str]) -> dict[str, Any]:
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    polls = 0

    def named() -> bool:
        nonlocal polls
        polls += 1
        return _named(status(lab), check, text)

    detect_s = wait(named, f"status naming {text}", every=0)
    start = time.monotonic()
    proc = twin(*restore, "--name", lab)
    if proc.returncode != 0:
        raise SystemExit(f"soak: twin {' '.join(restore)} failed: {proc.stderr.strip()[-500:]}")
    command_s = time.monotonic() - start
    healthy_s = wait(lambda: healthy(lab), "the lab healthy again", every=0)
    return {"killed_pid": pid, "named_after_s": round(detect_s, 2), "status_polls": polls,
            "restore": "twin " + " ".join(restore), "restore_command_s": round(command_s, 2),
            "healthy_after_restore_s": round(command_s + healthy_s, 2),
            "down_s": round(time.monotonic() - killed, 2)}


def recovery(lab: str, switch: str) -> dict[str, Any]:
    state = load_state(lab)
    assert state is not None
    start = time.monotonic()
    status(lab)
    one_status = time.monotonic() - start
    bgpd = next(p.pid for p in netns_processes(state.node(switch).netns) if p.name == "bgpd")
    out = {"status_run_s": round(one_status, 2)}
    frr = recover(lab, bgpd, "switch-daemons", "bgpd not running", ["frr", "restart", switch])
    agent_pid = status(lab)["agent"]["pid"]
    agent = recover(lab, agent_pid, "agent", "gNMI agent not running", ["agent", "restart"])
    return {**out, f"bgpd_{switch}": frr, "agent": agent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", default="labs/default.yaml")
    parser.add_argument("--name", default="soak")
    parser.add_argument("--running", action="store_true", help="use the running lab --name and leave it up")
    parser.add_argument("--flaps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=50, help="flaps before the first measurement, so memory a "
                        "process takes on its first flaps (caches, Python's first use of a code path) is not counted")
    parser.add_argument("--link", default="leaf1:spine1")
    parser.add_argument("--kill-on", default="leaf2", help="the switch whose bgpd is killed")
    args = parser.parse_args()
    result: dict[str, Any] = {"lab": args.lab if not args.running else args.name, "name": args.name}
    try:
        if not args.running:
            start = time.monotonic()
            proc = twin("up", str(REPO / args.lab), "--name", args.name, "--json")
            if proc.returncode != 0:
                raise SystemExit(f"soak: twin up failed: {proc.stderr.strip()[-800:]}")
            result["up_s"] = round(time.monotonic() - start, 1)
        wait(lambda: healthy(args.name), "the lab healthy", every=0.5)
        result["memory"] = flap_link(args.name, args.link, args.flaps, args.warmup)
        result["recovery"] = recovery(args.name, args.kill_on)
    finally:
        if not args.running:
            twin("down", "--name", args.name)
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
