"""Helpers for integration tests: run the CLI, find what a lab left behind."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
TWIN = [sys.executable, "-m", "twin"]


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:5]}"


def twin(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*TWIN, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)
    if check and proc.returncode != 0:
        raise AssertionError(f"twin {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def twin_json(*args: str, check: bool = True, timeout: float = 300) -> Any:
    proc = twin(*args, "--json", check=check, timeout=timeout)
    return json.loads(proc.stdout)


def leftovers(lab: str) -> list[str]:
    """Everything of `lab` still on the machine: namespaces, interfaces, processes, files."""
    found = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    found += [line.split()[0] for line in netns if line.startswith((f"tw.{lab}.", f"tw.{lab} "))
              or line.strip() == f"tw.{lab}"]
    if subprocess.run(["ip", "link", "show", f"tw-{lab}"], capture_output=True).returncode == 0:
        found.append(f"interface tw-{lab}")
    # the daemons name a file in the run directory; the gNMI agent the run directory itself
    procs = subprocess.run(["pgrep", "-af", f"/run/twin/{lab}(/| |$)"], capture_output=True, text=True).stdout
    found += [p for p in procs.splitlines() if "pgrep" not in p]
    found += [f"process {pid} working in {cwd}" for pid, cwd in _working_in(f"/run/twin/{lab}/")]
    if Path(f"/run/twin/{lab}").exists():
        found.append(f"/run/twin/{lab}")
    return found


def _working_in(prefix: str) -> list[tuple[str, str]]:
    """Processes whose working directory is under `prefix` (redis-server renames its process
    title, so its command line does not name its run directory)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = str((proc / "cwd").readlink())
        except OSError:
            continue
        if cwd.startswith(prefix):
            out.append((proc.name, cwd))
    return out


def until(cond: Callable[[], object], timeout: float = 30, every: float = 0.05) -> bool:
    """True as soon as `cond()` is true; False when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(every)
    return False


def mgmt_limited(lab: str, timeout: float = 30) -> bool:
    """True once the lab's agent has put the management ports' connection limits in place on its
    switches, which it does after `twin up` has returned (twin.switch.agent._limit_mgmt)."""
    from twin.host.rundir import lab_dir
    from twin.switch.agent_progress import MGMT_LIMITED

    return until(lambda: (lab_dir(lab) / MGMT_LIMITED).exists(), timeout)


CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                    "(scripts/install-deps.sh installs it; apt-get install chromium)")


def chromium(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Headless Chromium as root, with a fresh profile and nothing that reaches the network."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory(prefix="dz-chromium-") as profile:
        return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)


def netns_exec(lab: str, node: str, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", f"tw.{lab}.{node}", *cmd], capture_output=True, text=True,
                          timeout=timeout)


@contextmanager
def running_lab(target: str | Path, prefix: str, *up_args: str, check_clean: bool = False) -> Iterator[str]:
    """A lab brought up healthy under a unique name, removed afterwards whatever happened."""
    name = unique(prefix)
    try:
        assert twin_json("up", str(target), "--name", name, *up_args)["healthy"]
        yield name
    finally:
        twin("down", "--name", name, check=False)
        if check_clean:
            assert leftovers(name) == []


def ssh_run(lab: dict[str, Any], command: str, node: str = "leaf1", stdin: str = "",
            timeout: float = 60) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `ssh admin@switch COMMAND`, fed `stdin`; `lab` is `twin status
    --json`'s document."""
    import paramiko

    t = next(n for n in lab["nodes"] if n["name"] == node)["ssh"]
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(t["host"], port=t["port"], username=t["username"], password=t["password"], look_for_keys=False,
                   allow_agent=False, timeout=30)
    try:
        chan_in, out, err = client.exec_command(command, timeout=timeout)
        if stdin:
            chan_in.write(stdin)
        chan_in.channel.shutdown_write()
        text, errors = out.read().decode(), err.read().decode()
        return out.channel.recv_exit_status(), text, errors
    finally:
        client.close()


def clos_lab_file(folder: Path, clos: str, settings: str = "") -> Path:
    """A lab file (and its topology) in `folder` for a Clos fabric of `clos`, e.g.
    "spines: 2, leaves: 2, servers_per_leaf: 1"; no drills; `settings`: more of the lab file's lines."""
    (folder / "fabric.yaml").write_text(f"name: fab\nkind: clos\nclos: {{{clos}}}\n")
    (folder / "lab.yaml").write_text(f"name: fab\ntopology: {folder / 'fabric.yaml'}\n{settings}")
    return folder / "lab.yaml"


@contextmanager
def private_redis(where: Path, *options: str) -> Iterator[Path]:
    """A redis-server of its own on a unix socket in `where` (no TCP, no persistence), with extra
    `options` (e.g. "--notify-keyspace-events", "AKE"); yields the socket, stops it at the end."""
    import shutil

    import redis

    sock = where / "redis.sock"
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    proc = subprocess.Popen([server, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
                             "--save", "", "--appendonly", "no", "--dir", str(where), *options],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if redis.Redis(unix_socket_path=str(sock)).ping():
                    break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"redis-server did not come up on {sock}") from None
                time.sleep(0.05)
        yield sock
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def without_yang() -> str | None:
    """Why the switches here judge Sets without SONiC's YANG models (None when the agent finds them):
    their verdicts then come from twin's built-in digest of the models, in words of its own."""
    from twin.host.reference import where
    from twin.stages.validate.yang import find_models

    if find_models() is not None:
        return None
    return (f"SONiC's YANG models are not on this machine ({where()}): the switches list no models in "
            "Capabilities and judge Sets with twin's built-in digest of them, whose messages are not libyang's")


ConfigDb = dict[str, dict[str, Any]]


def switch_configs(lab: str) -> dict[str, ConfigDb]:
    """Every switch's config_db.json as `twin up` wrote it (the nodes running bgpd)."""
    nodes = Path(f"/run/twin/{lab}/nodes")
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(nodes.glob("*/config_db.json"))
            if (p.parent / "bgpd.vty").exists()}


def classic(db: ConfigDb, routing_mode: str | None = None) -> ConfigDb:
    """The same switch in community SONiC's classic dialect: bgpcfgd, BGP_NEIGHBOR keyed by IP;
    `routing_mode`: DEVICE_METADATA's docker_routing_config_mode to set (e.g. separated)."""
    out = {t: rows for t, rows in copy.deepcopy(db).items() if not t.startswith(("BGP_", "ROUTE_MAP"))}
    meta = out["DEVICE_METADATA"]["localhost"]
    meta.pop("frr_mgmt_framework_config")
    if routing_mode is not None:
        meta["docker_routing_config_mode"] = routing_mode
    out["BGP_NEIGHBOR"] = {key.split("|", 1)[1]: {f: v for f, v in row.items()
                                                  if f in ("asn", "name", "local_addr", "admin_status")}
                           for key, row in db["BGP_NEIGHBOR"].items()}
    return out


def push_folder(lab: str, folder: Path, configs: dict[str, ConfigDb]) -> None:
    """Write `configs` as <switch>/config_db.json under `folder` and push them; every switch takes its own."""
    for name, db in configs.items():
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "config_db.json").write_text(json.dumps(db))
    pushed = twin_json("push", "--name", lab, "--configs", str(folder))
    assert all(s["ok"] for s in pushed["switches"]), pushed


def queue_maps_written(lab: str, timeout: float = 30) -> None:
    """Until every switch's COUNTERS_QUEUE_NAME_MAP is there: its agent writes the queues' maps with the
    switch's first counters poll, after `twin up` has returned (as SONiC's flex counters fill COUNTERS_DB
    after boot), so a test reading queues right after bring-up waits for them as a sonic-mgmt test would."""
    from twin.switch.redis.redis_server import socket_path
    from twin.switch.redis.sonic_redis import SonicRedis

    sockets = [socket_path(p.parent) for p in Path(f"/run/twin/{lab}/nodes").glob("*/config_db.json")]

    def written() -> bool:
        for path in sockets:
            client = SonicRedis(unix_socket=path).client("COUNTERS_DB")
            if not client.exists("COUNTERS_QUEUE_NAME_MAP"):
                return False
        return True

    assert until(written, timeout, 0.1), f"lab {lab}: COUNTERS_QUEUE_NAME_MAP not on every switch after {timeout} s"
