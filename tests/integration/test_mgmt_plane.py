"""A switch's management plane that a GPU server cannot lock (issue 36), on the mini lab.

The floods come from the servers' namespaces (bench/mgmt_flood_client.py run with `ip netns exec`),
the checks from the host, as the tester did it:
- 300 Subscribes without credentials from server1 to leaf1: authenticated Gets on leaf1 keep
  working, and none of the 300 is answered other than UNAUTHENTICATED;
- wrong passwords from server2 to leaf2, over gNMI and over SSH, are answered far slower than the
  2,100 (gNMI) and ~200 (SSH) a second the tester saw, while the host's logins are answered at once;
- 2,000 TCP connections that never send a byte, opened at once from server1 to leaf1's gNMI port:
  at most 128 are let in (new connections are rate-limited, and capped, per client address), the host
  still connects meanwhile, and the agent closes them within its handshake timeout: its open files
  come back to where they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
from labtools import REPO, mgmt_limited, running_lab, twin_json, until
from pygnmi.client import gNMIclient

from twin.switch.access.call_gate import PEER_WAITING
from twin.switch.access.mgmt_nft import CONNS

pytestmark = pytest.mark.needs_root

CLIENT = REPO / "bench" / "mgmt_flood_client.py"
DEVICE_METADATA = "/sonic-db:CONFIG_DB/localhost/DEVICE_METADATA"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "mp") as name:
        assert mgmt_limited(name)   # the per-client limits come moments after `twin up` returned
        status = twin_json("status", "--name", name)
        yield {"name": name, "gnmi": {n["name"]: n["gnmi"] for n in status["nodes"] if n.get("gnmi")}}


def flood(lab: dict[str, Any], server: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(["ip", "netns", "exec", f"tw.{lab['name']}.{server}", sys.executable, str(CLIENT),
                             *args], stdout=subprocess.PIPE, text=True)


def first_line(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    line: dict[str, Any] = json.loads(proc.stdout.readline())
    return line


def result(proc: subprocess.Popen[str], timeout: float = 120) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0
    last: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return last


def gnmi_target(lab: dict[str, Any], node: str) -> list[str]:
    g = lab["gnmi"][node]
    return ["--target", f"{g['host']}:{g['port']}", "--cert", f"/run/twin/{lab['name']}/tls.crt"]


def client(lab: dict[str, Any], node: str) -> gNMIclient:
    target = dict(lab["gnmi"][node])
    return gNMIclient(**target, gnmi_timeout=10)


def agent_files(lab: dict[str, Any]) -> int:
    pid = int(Path(f"/run/twin/{lab['name']}/agent.pid").read_text().split()[0])
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_unauthenticated_subscribes_from_a_server_leave_authenticated_gets_working(lab: dict[str, Any]) -> None:
    proc = flood(lab, "server1", "subscribe", *gnmi_target(lab, "leaf1"), "--count", "300", "--hold", "15")
    assert first_line(proc) == {"opened": 300}
    time.sleep(1)  # the 300 reached the switch
    with client(lab, "leaf1") as gc:
        for _ in range(20):  # gnmi_timeout=10: a Get refused or starved fails here
            got = gc.get(path=[DEVICE_METADATA], encoding="json_ietf")
            assert "localhost" in got["notification"][0]["update"][0]["val"]
    codes = result(proc)["codes"]
    # never let in; past the PEER_WAITING refusals an address may have waiting, its calls are refused
    # at once with RESOURCE_EXHAUSTED, before their password is looked at (twin.switch.access.call_gate)
    assert set(codes) <= {"UNAUTHENTICATED", "PENDING", "RESOURCE_EXHAUSTED"}, codes
    assert codes.get("RESOURCE_EXHAUSTED", 0) <= 300 - PEER_WAITING, codes
    assert codes.get("UNAUTHENTICATED", 0) > 0


def test_wrong_gnmi_passwords_are_slowed_and_the_host_still_logs_in(lab: dict[str, Any]) -> None:
    proc = flood(lab, "server2", "wrong", *gnmi_target(lab, "leaf2"), "--threads", "16", "--seconds", "8")
    time.sleep(2)
    started = time.monotonic()
    with client(lab, "leaf2") as gc:  # another address: not held back by server2's failures
        gc.get(path=[DEVICE_METADATA], encoding="json_ietf")
    assert time.monotonic() - started < 8
    report = result(proc)
    assert report["codes"].get("OK", 0) == 0
    assert report["answered"] > 0
    assert report["per_second"] < 50, report  # the tester saw 2,100 a second


def test_wrong_ssh_passwords_are_slowed_and_the_host_still_logs_in(lab: dict[str, Any]) -> None:
    host = lab["gnmi"]["leaf2"]["host"]
    proc = flood(lab, "server2", "ssh-wrong", "--host", host, "--threads", "8", "--seconds", "8")
    time.sleep(2)
    ssh = paramiko.SSHClient()
    ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    ssh.connect(host, port=22, username=lab["gnmi"]["leaf2"]["username"],
                password=lab["gnmi"]["leaf2"]["password"], look_for_keys=False, allow_agent=False, timeout=30)
    ssh.close()
    report = result(proc)
    assert report["codes"].get("OK", 0) == 0
    assert report["per_second"] < 50, report  # the tester saw ~200 a second


def test_a_connection_flood_from_a_server_is_limited_and_closed(lab: dict[str, Any]) -> None:
    before = agent_files(lab)
    g = lab["gnmi"]["leaf1"]
    proc = flood(lab, "server1", "halfopen", "--host", g["host"], "--port", str(g["port"]), "--count", "2000",
                 "--hold", "25")
    opened = first_line(proc)["opened"]
    # one address's new connections are rate-limited, and it holds at most CONNS (twin.switch.access.mgmt_nft):
    # without the cap, a client keeping a call on each connection reached the switch's 1,024 in ~30 s
    assert 0 < opened <= CONNS, opened
    with client(lab, "leaf1") as gc:  # the host's own connection still gets in, and answers
        gc.get(path=[DEVICE_METADATA], encoding="json_ietf")
    assert until(lambda: agent_files(lab) < before + 20, timeout=20), agent_files(lab)  # 10 s handshake limit
    report = result(proc)
    assert report["closed_by_server"] >= opened - 5, report


def test_silent_ssh_connections_from_a_server_leave_the_hosts_logins_working(lab: dict[str, Any]) -> None:
    """100 connections that never send a byte, from one server to leaf2's SSH port (they filled sshd's
    MaxStartups 10:30:100 for their 120 s login grace, dropping everyone else's): the host logs in,
    every time, while they are held."""
    g = lab["gnmi"]["leaf2"]
    proc = flood(lab, "server1", "halfopen", "--host", g["host"], "--port", "22", "--count", "100", "--hold", "15")
    assert first_line(proc)["opened"] > 10   # more than the switch lets one address hold
    for _ in range(5):                        # a random early drop would fail some of these
        ssh = paramiko.SSHClient()
        ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        ssh.connect(g["host"], port=22, username=g["username"], password=g["password"], look_for_keys=False,
                    allow_agent=False, timeout=30, banner_timeout=30)
        ssh.close()
    result(proc)
