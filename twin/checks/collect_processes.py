"""Read what the process checks judge (twin.checks.daemons): pid files, the processes in a node's
namespace, the lab's agent and whether each switch's gNMI port takes connections. I/O only."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from twin.host.processes import ProcessTable, netns_processes, read_proc
from twin.host.rundir import lab_dir, node_dir
from twin.lab.running import RunningLab
from twin.model.state import LabState

CONNECT_TIMEOUT_S = 1.0


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def daemon_facts(state: LabState, node: str, table: ProcessTable | None = None) -> dict[str, Any]:
    """The node's pid files (`zebra.pid` -> "zebra": pid) and every process in its namespace (from
    `table` when given: one reading of /proc for many nodes)."""
    rundir = node_dir(state.lab, node)
    pidfiles = {p.stem: pid for p in sorted(rundir.glob("*.pid")) if (pid := read_pid(p)) is not None}
    ns = state.node(node).netns
    processes = [{"pid": p.pid, "ns_pid": p.ns_pid, "name": p.name, "state": p.state}
                 for p in (table.netns_processes(ns) if table is not None else netns_processes(ns))]
    return {"pidfiles": pidfiles, "processes": processes}


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def agent_facts(lab: RunningLab, node: str) -> dict[str, Any]:
    """The lab's agent as `node` depends on it: agent.pid, that process (and whether its command
    line is this lab's agent), agent.ready's pid, and whether `node`'s gNMI port takes connections."""
    run_dir = lab_dir(lab.name)
    pid = read_pid(run_dir / "agent.pid")
    process = read_proc(pid) if pid is not None else None
    ours = False
    if process is not None:
        try:
            ours = str(run_dir) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            ours = False
    target = lab.gnmi_target(node)
    facts: dict[str, Any] = {
        "pid": pid, "ready": read_pid(run_dir / "agent.ready"),
        "process": None if process is None else {"name": process.name, "state": process.state, "ours": ours},
        "gnmi": None, "listening": None}
    if target is not None:
        facts["gnmi"] = f"{target['host']}:{target['port']}"
        facts["listening"] = _listening(str(target["host"]), int(target["port"]))
    return facts
