"""sonic-mgmt's helpers for tests/gnmi, re-expressed against one twin switch: tests/gnmi/helper.py's
gnmi_set, gnmi_get and subscribe functions (the py_gnmicli or gnmi_cli command they build, and how they
read its output), gnmi_utils.gnmi_capabilities, the pygnmi wrapper's bounded subscriptions
(tests/common/pygnmi_client.py), and the DUT as the tests reach it: its shell over SSH (ansible's
`duthost.shell`), its redis, its files (the switch's run directory is its /), and the waits they use.
"""

from __future__ import annotations

import datetime
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import paramiko
import redis
from pygnmi.client import gNMIclient
from sonic_mgmt_clients import GnmiCli, Grpcurl, PtfGnoi, PtfGrpc, PyGnmicli, Target

DBS = {"APPL_DB": 0, "COUNTERS_DB": 2, "CONFIG_DB": 4, "STATE_DB": 6}
SSH_BANNER = re.compile(rb"OpenSSH_[\w.]+ Debian")  # tests/common/reboot.py SONIC_SSH_REGEX


class Shell:
    """The DUT's shell over SSH, one connection kept open (opened again after it drops)."""

    def __init__(self, host: str, port: int, username: str, password: str) -> None:
        self.host, self.port, self.username, self.password = host, port, username, password
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    def _connect(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        client.connect(self.host, port=self.port, username=self.username, password=self.password,
                       look_for_keys=False, allow_agent=False, timeout=30)
        return client

    def run(self, command: str, timeout: float = 120) -> tuple[int, str, str]:
        with self._lock:
            for attempt in (1, 2):
                try:
                    if self._client is None:
                        self._client = self._connect()
                    _, out, err = self._client.exec_command(command, timeout=timeout)
                    text, errors = out.read().decode(), err.read().decode()
                    return out.channel.recv_exit_status(), text, errors
                except (paramiko.SSHException, OSError, EOFError):
                    self.close()
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    def shell(self, command: str, timeout: float = 120) -> str:
        """ansible's duthost.shell: the stdout, or an error when the command fails."""
        rc, out, err = self.run(command, timeout)
        if rc != 0:
            raise RuntimeError(f"`{command}` exited {rc}: {err.strip() or out.strip()}")
        return out

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class Dut:
    """One twin switch as sonic-mgmt's tests reach it (`rundir`: its run directory, which is its /), with
    the PTF's files in `ptf_root`."""

    def __init__(self, status: dict[str, Any], name: str, rundir: Path, ptf_root: Path) -> None:
        node = next(n for n in status["nodes"] if n["name"] == name)
        gnmi, ssh = node["gnmi"], node["ssh"]
        self.lab, self.name, self.rundir, self.ptf_root = str(status["lab"]), name, rundir, ptf_root
        self.mgmt_ip = str(gnmi["host"])
        self.target = Target(self.mgmt_ip, int(gnmi["port"]), str(gnmi["username"]), str(gnmi["password"]),
                             tls=not gnmi.get("insecure", False))
        self.pygnmi_target = dict(gnmi)
        self.shell = Shell(str(ssh["host"]), int(ssh["port"]), str(ssh["username"]), str(ssh["password"]))
        self.py_gnmicli = PyGnmicli(self.target, ptf_root)
        self.gnmi_cli = GnmiCli(self.target)
        self.gnoi = PtfGnoi(PtfGrpc(Grpcurl(self.target)))

    def redis(self, db: str) -> redis.Redis:
        return redis.Redis(unix_socket_path=str(self.rundir / "redis.sock"), db=DBS[db], decode_responses=True)

    def close(self) -> None:
        self.shell.close()


# -- tests/gnmi/helper.py -----------------------------------------------------------------------------------

def gnmi_set(dut: Dut, delete_list: list[str], update_list: list[str], replace_list: list[str]) -> None:
    """py_gnmicli -xo sonic-db -m set-replace|set-update|set-delete --xpath ... --value ...; raises as the
    helper does when py_gnmicli fails or prints a gRPC error."""
    if replace_list:
        mode = "set-replace"
    elif update_list:
        mode = "set-update"
    elif delete_list:
        mode = "set-delete"
    else:
        raise ValueError("SET operation must have at least one entry to modify")
    xpaths, values = [], []
    for path in delete_list:
        xpaths.append(path.replace("sonic-db:", ""))
        values.append("")
    for item in update_list:
        path, value = item.replace("sonic-db:", "").rsplit(":", 1)
        xpaths.append(path)
        values.append(value)
    for item in replace_list:
        path, value = item.replace("sonic-db:", "").rsplit(":", 1)
        xpaths.append(path)
        values.append("" if "#" in value else value)
    run = dut.py_gnmicli.set(mode, xpaths, values, origin="sonic-db")
    combined = f"{run.stdout}\n{run.stderr}"
    if run.rc != 0 or "GRPC error" in combined or "rpc error" in combined:
        raise RuntimeError(f"py_gnmicli failed rc={run.rc}\nSTDOUT:\n{run.stdout}\nSTDERR:\n{run.stderr}")


def gnmi_get(dut: Dut, path_list: list[str]) -> list[str]:
    """py_gnmicli -xo sonic-db --encoding 4 -m get --xpath ...: the printed values, or the helper's error."""
    run = dut.py_gnmicli.get([p.replace("sonic-db:", "") for p in path_list], origin="sonic-db", encoding=4)
    msg = run.stdout.replace("\\", "")
    error = "GRPC error\n"
    if error in msg:
        raise RuntimeError("GRPC error:" + msg.split(error, 1)[1])
    mark = "The GetResponse is below\n" + "-" * 25 + "\n"
    if mark not in msg:
        raise RuntimeError("error:" + msg)
    return [m.strip("\n") for m in msg.split(mark, 1)[1].split("-" * 25)[0:-1]]


def gnmi_subscribe_polling(dut: Dut, path_list: list[str], interval_ms: int, count: int) -> tuple[str, str]:
    """gnmi_cli -origin=sonic-db -query_type=polling -polling_interval Ns -count C -q PATH ..."""
    run = dut.gnmi_cli.poll([p.replace("sonic-db:", "") for p in path_list], "sonic-db", count,
                            int(interval_ms / 1000.0))
    return run.stdout, run.stderr


def gnmi_subscribe_streaming_sample(dut: Dut, path_list: list[str], interval_ms: int, count: int,
                                    origin: str | None = None, target: str | None = None) -> tuple[str, str]:
    """py_gnmicli --timeout 30 [-xo O] [-xt T] --encoding 4 -m subscribe --subscribe_mode 0 --submode 2
    --interval MS --update_count C --xpath ..."""
    run = dut.py_gnmicli.subscribe([p.replace("sonic-db:", "") for p in path_list], origin=origin, target=target,
                                   encoding=4, subscribe_mode=0, submode=2, interval_ms=interval_ms,
                                   update_count=count, timeout=30)
    return run.stdout.replace("\\", ""), run.stderr


def gnmi_subscribe_streaming_onchange(dut: Dut, path_list: list[str], count: int) -> tuple[str, str]:
    """py_gnmicli --timeout 120 -xo sonic-db --encoding 4 -m subscribe --subscribe_mode 0 --submode 1
    --update_count C --xpath ..."""
    run = dut.py_gnmicli.subscribe([p.replace("sonic-db:", "") for p in path_list], origin="sonic-db",
                                   encoding=4, subscribe_mode=0, submode=1, interval_ms=10000,
                                   update_count=count, timeout=120)
    return run.stdout.replace("\\", ""), run.stderr


def gnmi_capabilities(dut: Dut) -> tuple[int, str]:
    """gnmi_cli -capabilities: (-1, stderr) when it logged anything, else (0, stdout)."""
    run = dut.gnmi_cli.capabilities()
    return (-1, run.stderr) if run.stderr else (0, run.stdout)


# -- the DUT's facts as the tests read them -----------------------------------------------------------------

def first_admin_up_interface(dut: Dut, excluded: list[str]) -> str | None:
    """test_gnmi_configdb.get_first_interface: the first line of `show interface status` that is admin up
    and has lanes (not a PortChannel), skipping `excluded`."""
    lines = dut.shell.shell("show interface status").splitlines()
    if not lines or "Admin" not in lines[0] or "Lanes" not in lines[0]:
        return None
    admin, lanes = lines[0].split().index("Admin"), lines[0].split().index("Lanes")
    for line in lines:
        words = line.strip().split()
        assert words, "Failed to read interface properties"
        if len(words) <= max(admin, lanes) or words[lanes] == "N/A" or words[0] in excluded:
            continue
        if words[admin] == "up":
            return words[0]
    return None


def first_config_port(dut: Dut) -> str | None:
    """test_gnmi_stress.get_first_interface: the running config's first PORT with lanes and admin up, else
    the first with lanes."""
    ports = running_config(dut)["PORT"]
    for name, port in ports.items():
        if "lanes" in port and port.get("admin_status", "").lower() == "up":
            return str(name)
    return next((str(n) for n, p in ports.items() if "lanes" in p), None)


def running_config(dut: Dut) -> dict[str, Any]:
    """`sonic-cfggen -d --print-data`. The switch's shell has no sonic-cfggen; SONiC's `show
    runningconfiguration all` prints that same document with FRR's running config added as `bgpraw`."""
    config: dict[str, Any] = json.loads(dut.shell.shell("show runningconfiguration all"))
    config.pop("bgpraw", None)
    return config


def bgp_sessions(dut: Dut) -> dict[str, str]:
    """Every BGP session of the switch and its state (bgp facts, read through vtysh)."""
    rc, out, _ = dut.shell.run("vtysh -c 'show bgp summary json'")
    if rc != 0:
        return {}
    try:
        summary = json.loads(out)
    except ValueError:
        return {}
    return {peer: str(info.get("state")) for family in summary.values() if isinstance(family, dict)
            for peer, info in family.get("peers", {}).items()}


def all_established(dut: Dut) -> bool:
    try:
        sessions = bgp_sessions(dut)
    except (OSError, RuntimeError):
        return False
    return bool(sessions) and all(s == "Established" for s in sessions.values())


def wait_until(timeout: float, interval: float, delay: float, condition: Callable[[], bool]) -> bool:
    """tests/common/utilities.wait_until."""
    time.sleep(delay)
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def ssh_banner(host: str, port: int = 22, timeout: float = 2) -> bytes | None:
    """What the SSH port shows a new connection first (its version line), or None when it does not answer."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            return sock.recv(256)
    except OSError:
        return None


def get_up_time(command: Callable[[str], str]) -> datetime.datetime:
    """SonicHost.get_up_time(utc_timezone=True) (tests/common/devices/sonic.py): the DUT's UTC time now
    (get_now_time) less its /proc/uptime (get_uptime), each read by the command sonic-mgmt runs."""
    now = datetime.datetime.strptime(command('date +"%Y-%m-%d %H:%M:%S" -u').strip(), "%Y-%m-%d %H:%M:%S")
    uptime = datetime.timedelta(seconds=float(command("awk '{print $1}' /proc/uptime").strip()))
    return now - uptime


# -- tests/common/pygnmi_client.py's bounded subscriptions --------------------------------------------------

def pygnmi_client(dut: Dut) -> gNMIclient:
    return gNMIclient(**dut.pygnmi_target)


def pygnmi_subscribe(dut: Dut, paths: str | list[str], target: str | None = None, mode: str = "stream",
                     sample_interval: float | None = None, collect_seconds: float = 10, count: int | None = None,
                     poll_count: int = 1, poll_interval: float = 1.0, take: int | None = None) -> list[Any]:
    """PygnmiClient.subscribe as the tests call it: the request dict it builds for pygnmi's subscribe2,
    STREAM until `count` notifications or `collect_seconds`, POLL `poll_count` polls; `take` stops
    early as a caller's break does."""
    entries = []
    for path in [paths] if isinstance(paths, str) else paths:
        entry: dict[str, Any] = {"path": path}
        if mode == "stream":
            entry["mode"] = "sample"
            if sample_interval is not None:
                entry["sample_interval"] = int(float(sample_interval) * 1_000_000_000)
        entries.append(entry)
    request = {"subscription": entries, "mode": mode, "encoding": "json_ietf"}
    collected: list[Any] = []
    closing = threading.Event()
    with pygnmi_client(dut) as gc:
        subscriber = gc.subscribe2(subscribe=request, target=target)
        thread = getattr(subscriber, "_subscribe_thread", None)
        if thread is not None and hasattr(thread, "_invoke_excepthook"):
            thread._invoke_excepthook = _quiet_when_closing(thread._invoke_excepthook, closing)
        try:
            for notification in _bounded(subscriber, mode, collect_seconds, count, poll_count, poll_interval):
                collected.append(notification)
                if take is not None and len(collected) >= take:
                    break
        finally:
            closing.set()
            subscriber.close()
    if thread is not None:
        thread.join(30)
    return collected


def _quiet_when_closing(hook: Callable[[threading.Thread], None],
                        closing: threading.Event) -> Callable[[threading.Thread], None]:
    """The wrapper's _prepare_subscription_shutdown: pygnmi's receiving thread ends with CANCELLED
    'Channel closed!' (grpcio 1.85: 'Stream removed (Channel closed!)') or INVALID_ARGUMENT 'queue:
    disposed' when the caller closes the channel; only those, and only then, are not reported."""
    def invoke(thread: threading.Thread) -> None:
        error = sys.exc_info()[1]
        if closing.is_set() and isinstance(error, grpc.RpcError):
            code, details = error.code(), (error.details() or "").lower()
            if (code == grpc.StatusCode.CANCELLED and "channel closed!" in details) or (
                    code == grpc.StatusCode.INVALID_ARGUMENT and details == "queue: disposed"):
                return
        hook(thread)
    return invoke


def _bounded(subscriber: Any, mode: str, collect_seconds: float, count: int | None, poll_count: int,
             poll_interval: float) -> Iterator[Any]:
    if mode == "poll":
        for i in range(poll_count):
            yield subscriber.get_update(timeout=30)
            if poll_interval and i < poll_count - 1:
                time.sleep(poll_interval)
        return
    deadline = time.monotonic() + collect_seconds
    collected = 0
    while count is None or collected < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        try:
            yield subscriber.get_update(timeout=remaining)
        except TimeoutError:
            return
        collected += 1
