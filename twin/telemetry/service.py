"""`twin telemetry up|down|status`: a lab's collector and Prometheus, started, stopped and read.

Both live in the lab's run directory's `telemetry/` folder (config, Prometheus's data, logs,
telemetry.json with their ports and pids) and name it on their command lines, so `twin down` ends
them with the lab. Both listen on 127.0.0.1 only, on ports the kernel picked free."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from twin.host.poll import wait_until
from twin.host.processes import stop_processes
from twin.host.rundir import lab_dir
from twin.lab.running import RunningLab
from twin.model.errors import TwinError
from twin.telemetry import prometheus
from twin.telemetry.collector import READY, TELEMETRY

STATE = "telemetry.json"
START_S = 60.0


def folder(lab: str) -> Path:
    return lab_dir(lab) / TELEMETRY


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def read_state(lab: str) -> dict[str, Any] | None:
    try:
        doc = json.loads((folder(lab) / STATE).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def telemetry_up(lab: str, sample_s: float = 5.0, scrape_s: float = prometheus.SCRAPE_S) -> dict[str, Any]:
    """Start the lab's collector and Prometheus (once: a second call returns what runs); what
    telemetry.json says. Whatever fails half-way is stopped and removed."""
    running = RunningLab.load(lab)
    if running.agent is None:
        raise TwinError(f"lab '{lab}' has no gNMI agent to subscribe to")
    state = read_state(lab)
    if state is not None and all(_alive(p) for p in state["pids"].values()):
        return state
    here = folder(lab)
    shutil.rmtree(here, ignore_errors=True)
    here.mkdir(parents=True)
    pids: dict[str, int] = {}
    try:
        collector_port, prometheus_port = free_port(), free_port()
        (here / "prometheus.yml").write_text(prometheus.config_text(lab, collector_port, scrape_s))
        pids["collector"] = _start([sys.executable, "-m", "twin.telemetry.collector", str(lab_dir(lab)), "--port",
                                    str(collector_port), "--sample-s", f"{sample_s:g}"], here / "collector.log")
        wait_until(lambda: (here / READY).exists() or not _alive(pids["collector"]), START_S, 0.1,
                   lambda: TwinError(f"the telemetry collector did not start in {START_S:.0f} s"))
        if not _alive(pids["collector"]):
            raise TwinError(f"the telemetry collector exited: {_tail(here / 'collector.log')}")
        pids["prometheus"] = _start(prometheus.argv(here, prometheus_port), here / "prometheus.log")
        base = f"http://127.0.0.1:{prometheus_port}"
        wait_until(lambda: prometheus.ready(base) or not _alive(pids["prometheus"]), START_S, 0.2,
                   lambda: TwinError(f"Prometheus did not become ready in {START_S:.0f} s"))
        if not _alive(pids["prometheus"]):
            raise TwinError(f"Prometheus exited: {_tail(here / 'prometheus.log')}")
    except BaseException:
        stop_processes(list(pids.values()))
        shutil.rmtree(here, ignore_errors=True)
        raise
    doc = {"lab": lab, "prometheus": base, "collector": f"http://127.0.0.1:{collector_port}/metrics",
           "sample_s": sample_s, "scrape_s": scrape_s, "pids": pids, "folder": str(here)}
    (here / STATE).write_text(json.dumps(doc, indent=1))
    return doc


def _start(argv: list[str], log: Path) -> int:
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    return proc.pid


def _tail(log: Path) -> str:
    try:
        return log.read_text()[-800:].strip()
    except OSError:
        return "(no log)"


def telemetry_down(lab: str) -> bool:
    """Stop the lab's collector and Prometheus and remove their folder; whether anything ran."""
    state = read_state(lab)
    here = folder(lab)
    existed = here.exists()
    if state is not None:
        stop_processes([int(p) for p in state.get("pids", {}).values()])
    shutil.rmtree(here, ignore_errors=True)
    return existed


def telemetry_status(lab: str) -> dict[str, Any]:
    """What runs, whether Prometheus is ready and how its scrape of the collector goes."""
    state = read_state(lab)
    if state is None:
        return {"lab": lab, "up": False}
    alive = {name: _alive(int(pid)) for name, pid in state["pids"].items()}
    doc: dict[str, Any] = {**state, "up": all(alive.values()), "alive": alive}
    if alive.get("prometheus") and prometheus.ready(state["prometheus"]):
        targets = prometheus.get(f"{state['prometheus']}/api/v1/targets").get("activeTargets", [])
        doc["targets"] = [{"url": t.get("scrapeUrl"), "health": t.get("health"), "error": t.get("lastError", "")}
                          for t in targets]
        switches = prometheus.query(state["prometheus"], "twin_telemetry_switch_up")
        doc["switches_up"] = sum(1 for s in switches if s["value"][1] == "1")
        doc["switches"] = len(switches)
    return doc
