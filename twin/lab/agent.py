"""Start and stop a lab's gNMI agent process; describe its endpoints the way pygnmi and netmiko want them
(from its settings, agent.json, as twin.lab.running.RunningLab holds them)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from twin.host.poll import poll_until
from twin.host.rundir import lab_dir, node_dir
from twin.kinds.registry import switch_kind
from twin.lab.agent_preload import PreloadedAgent, agent_argv
from twin.model.agent import AgentSettings, AgentSwitch
from twin.model.errors import RuntimeBackendError
from twin.model.lab import GnmiSettings, RebootSettings
from twin.model.plan import Plan
from twin.model.state import LabState
from twin.switch.access.tls import make_cert, write_private
from twin.switch.agent_progress import LAUNCHED, MGMT_LIMITED, PROGRESS, SETTLED, STATE_WRITTEN

# How long a starting agent may go without progress before it is judged stuck: progress is one more
# switch set up (agent.progress), or any CPU time spent (its imports alone take minutes when it starts
# beside 192 converging bgpds on 2 CPUs). START_LIMIT_S bounds the whole start all the same.
STALL_S = 30.0
START_LIMIT_S = 900.0


def prestart_agent(lab: str, preloaded: PreloadedAgent | None = None) -> subprocess.Popen[bytes]:
    """Start the lab's agent before its switches, idle: it imports its modules at nice 19, then
    waits for agent.json, which configure_agent writes once the switches are prepared. `preloaded`:
    an agent `twin up` started before the lab existed, its modules loaded or loading, handed the lab
    here (a new one is started when it is gone).

    Started after them instead, its imports (0.5 CPU-s) took 18 s at 64 x 128, where 192 bgpds
    converging leave a new process next to no CPU; started ahead, they are done while the switches
    are prepared. The agent returns to the normal priority when its settings arrive. Nice 19 yields
    to the daemons only where the kernel's autogroup scheduling is off: with it on (Debian's default),
    the agent's own session is a scheduling group of its own, as is each daemonized FRR daemon, and
    the nice value weighs only among the agent's own threads."""
    if preloaded is not None:
        run_dir = _fresh_run_files(lab)
        proc = preloaded.hand_over()
        if proc is not None:
            (run_dir / "agent.pid").write_text(str(proc.pid))
            return proc
    return _spawn(lab, ahead=True)


def configure_agent(state: LabState, plan: Plan, settings: GnmiSettings,
                    templates: Path | None = None, reboot: RebootSettings | None = None) -> AgentSettings:
    """Write the agent's settings (and TLS certificate), once every switch's databases serve and its
    management address is set: an agent started by prestart_agent sets every switch up from here,
    while their FRR launches (at 64 x 128 that is about 9 CPU-s of its own, which after the launch,
    beside the converging fabric, kept `twin up` waiting 22-56 s). `templates`: the SONiC release
    templates twin's switches render FRR with (None: twin's own)."""
    run_dir = lab_dir(state.lab)
    switches = [n for n in state.nodes if n.kind == "switch" and n.mgmt]
    if settings.tls:
        make_cert(run_dir, f"twin-{state.lab}", [n.mgmt for n in switches if n.mgmt])
    doc = AgentSettings(port=settings.port, username=settings.username, password=settings.password,
                        tls=settings.tls, ssh_port=settings.ssh_port,
                        sonic_templates=str(templates) if templates is not None else None,
                        reboot=reboot or RebootSettings(),
                        switches=[_switch_entry(state, plan, n.name) for n in switches])
    write_private(run_dir / "agent.json", doc.model_dump_json(indent=1).encode())  # it holds the password
    return doc


def await_agent(lab: str, started: subprocess.Popen[bytes] | None = None, stall: float = STALL_S) -> None:
    """Every switch's FRR has launched: tell the agent, whose state producers start then, and wait
    until it serves, or until it made no progress for `stall` seconds (RuntimeBackendError).
    `started`: the agent prestart_agent started (None: start it now)."""
    _mark_launched(lab)
    _await_ready(lab, started if started is not None else _spawn(lab), stall)


STATE_POLL_S = 0.05


def settle_agent(lab: str, timeout: float) -> bool:
    """The lab is judged: tell its agent (it takes the normal CPU share back, twin.switch.agent), and
    wait until it has written every switch's state tables (STATE_DB, APPL_DB, COUNTERS_DB) whole,
    so what `twin up` reports is what gNMI serves. False when that took longer than `timeout`."""
    run_dir = lab_dir(lab)
    (run_dir / SETTLED).touch()
    return poll_until(lambda: (run_dir / STATE_WRITTEN).exists(), timeout, STATE_POLL_S)


def _mark_launched(lab: str) -> None:
    (lab_dir(lab) / LAUNCHED).touch()


def _switch_entry(state: LabState, plan: Plan, node: str) -> AgentSwitch:
    """What the agent needs to serve one switch; SONiC-VS switches are fronted over their redis."""
    n = state.node(node)
    rundir = node_dir(state.lab, node)
    interfaces = plan.node(node).interfaces
    entry = AgentSwitch(name=node, netns=n.netns, mgmt=n.mgmt, rundir=str(rundir),
                        ports=[i.name for i in interfaces],
                        ifmap={i.name: i.kernel for i in interfaces if i.kernel != i.name},
                        container=_container(state, node),  # the SSH shell runs lines outside SONiC's set in it
                        queues=plan.fabric.egress_queues)
    backend = switch_kind(state.image).agent_backend(rundir)   # a SONiC-VS container: its redis
    return AgentSwitch.model_validate({**entry.model_dump(), **backend}) if backend else entry


def _container(state: LabState, node: str) -> str | None:
    """The node's container on the docker and clab runtimes (None on the netns runtime)."""
    from twin.runtime.protocol import Containers
    from twin.runtime.registry import runtime_of

    runtime = runtime_of(state)
    return runtime.container(state.lab, node) if isinstance(runtime, Containers) else None


def restart_agent(lab: str, stall: float = STALL_S) -> None:
    """Stop the agent if it runs and start it again with the settings it had."""
    if not (lab_dir(lab) / "agent.json").exists():
        raise RuntimeBackendError(f"lab '{lab}' has no gNMI agent settings; is it up?")
    stop_agent(lab)
    _mark_launched(lab)  # the lab is up (and may have been brought up before twin wrote this)
    _await_ready(lab, _spawn(lab), stall)


def _spawn(lab: str, ahead: bool = False) -> subprocess.Popen[bytes]:
    """The agent process; `ahead`: started before the switches (prestart_agent)."""
    run_dir = _fresh_run_files(lab)
    argv = agent_argv(run_dir, "--await-settings", idle=True) if ahead else agent_argv(run_dir)
    with (run_dir / "agent.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    (run_dir / "agent.pid").write_text(str(proc.pid))  # `nice` execs the agent: the pid is the agent's
    return proc


def _fresh_run_files(lab: str) -> Path:
    """The lab's run directory, without what an earlier agent left of its start."""
    run_dir = lab_dir(lab)
    for name in ("agent.ready", PROGRESS, SETTLED, STATE_WRITTEN, MGMT_LIMITED):
        (run_dir / name).unlink(missing_ok=True)
    return run_dir


def _await_ready(lab: str, proc: subprocess.Popen[bytes], stall: float) -> None:
    run_dir = lab_dir(lab)
    ready, progress = run_dir / "agent.ready", run_dir / PROGRESS
    limit = time.monotonic() + START_LIMIT_S
    deadline, seen = time.monotonic() + stall, ("", 0)
    while not ready.exists():
        now = (_read(progress), _cpu_ticks(proc.pid))
        if now != seen:
            deadline, seen = time.monotonic() + stall, now
        if proc.poll() is not None or time.monotonic() > min(deadline, limit):
            tail = (run_dir / "agent.log").read_text()[-1500:]
            why = ("exited" if proc.poll() is not None else
                   f"made no progress for {stall:.0f} s (at step {seen[0] or 0})" if time.monotonic() > deadline
                   else f"not serving after {START_LIMIT_S:.0f} s")
            raise RuntimeBackendError(f"the gNMI agent of lab '{lab}' did not start ({why}): {tail}")
        time.sleep(0.02)


def _cpu_ticks(pid: int) -> int:
    """utime + stime of `pid` (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def stop_agent(lab: str) -> None:
    pidfile = lab_dir(lab) / "agent.pid"
    try:
        pid = int(pidfile.read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (OSError, ValueError):
        return
    if str(lab_dir(lab)) in cmdline:
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            return
        poll_until(lambda: not os.path.exists(f"/proc/{pid}"), 2.0, 0.02)


def served(agent: AgentSettings | None, state: LabState, node: str) -> AgentSettings | None:
    """The agent's settings (agent.json) when `node` is one of the switches it serves."""
    if agent is None or not state.node(node).mgmt:
        return None
    return agent if agent.switch(node) is not None else None


def ssh_target(agent: AgentSettings | None, state: LabState, node: str) -> dict[str, Any] | None:
    """What netmiko's ConnectHandler needs (device_type linux), or None without an agent."""
    doc = served(agent, state, node)
    if doc is None or not doc.ssh_port:
        return None
    return {"device_type": "linux", "host": state.node(node).mgmt, "port": doc.ssh_port,
            "username": doc.username, "password": doc.password}


def gnmi_target(agent: AgentSettings | None, state: LabState, node: str) -> dict[str, Any] | None:
    """Keyword arguments for pygnmi's gNMIclient (`gNMIclient(**target)`: `target` is its (host, port)),
    with `host` and `port` on their own too (DESIGN §4); None for nodes without an agent."""
    doc = served(agent, state, node)
    if doc is None:
        return None
    host = state.node(node).mgmt
    target: dict[str, Any] = {"target": [host, doc.port], "host": host, "port": doc.port,
                              "username": doc.username, "password": doc.password}
    if doc.tls:
        target["skip_verify"] = True
    else:
        target["insecure"] = True
    return target
