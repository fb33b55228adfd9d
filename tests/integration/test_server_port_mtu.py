"""Every link that carries RoCE is verified, server ports included: a leaf port facing a server lowered
below the server NIC's MTU (over gNMI, as `config interface mtu` would), or the server's NIC lowered
below the fabric's, fails `twin verify`, and both link-mtu and server-port-df-ping name that link."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import DATA, netns_exec, running_lab, twin, twin_json, until
from pygnmi.client import gNMIclient

pytestmark = pytest.mark.needs_root

LINK = "leaf1:Ethernet0 - server1:eth1"
PORT_MTU = "/sonic-db:CONFIG_DB/localhost/PORT/Ethernet0/mtu"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab(DATA / "mini.yaml", "smtu") as name:
        yield twin_json("status", "--name", name)


def _leaf1(status: dict[str, Any]) -> gNMIclient:
    return gNMIclient(**next(n for n in status["nodes"] if n["name"] == "leaf1")["gnmi"])


def _state_mtu(gc: gNMIclient) -> str:
    got = gc.get(path=["/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet0/mtu"], encoding="json_ietf")
    return str(got["notification"][0]["update"][0]["val"])


def _set_port_mtu(status: dict[str, Any], mtu: str) -> None:
    with _leaf1(status) as gc:
        gc.set(update=[(PORT_MTU, json.dumps(mtu))], encoding="json_ietf")
        assert until(lambda: _state_mtu(gc) == mtu, timeout=10)


def _failed(proc_stdout: str) -> dict[str, list[tuple[str, str]]]:
    """check name -> (subject, message) of its failed items, for the checks that failed"""
    doc = json.loads(proc_stdout)
    return {c["name"]: [(i["subject"], i["message"]) for i in c["items"] if i["status"] != "success"]
            for c in doc["checks"] if c["status"] not in ("success", "skipped")}


def test_a_leaf_port_lowered_below_its_servers_mtu_fails_verify(lab: dict[str, Any], tmp_path: Path) -> None:
    name, junit = lab["lab"], tmp_path / "v.xml"
    assert twin_json("verify", "--name", name)["passed"] is True
    _set_port_mtu(lab, "9000")
    try:
        proc = twin("verify", "--name", name, "--json", "--junit", str(junit), check=False)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        failed = _failed(proc.stdout)
        assert set(failed) == {"link-mtu", "server-port-df-ping"}, failed
        assert failed["link-mtu"] == [(LINK, "expected equal MTUs, seen 9000 and 9100")]
        [(subject, message)] = failed["server-port-df-ping"]
        assert subject == LINK
        assert "a 9100-byte ping with Don't Fragment (9072 bytes of ICMP data) from server1 eth1" in message
        case = ET.parse(junit).getroot().find(
            f"testsuite[@name='twin.verify.{name}.server-port-df-ping']/testcase[@name='leaf1:Ethernet0']/failure")
        assert case is not None and LINK in (case.text or "")
    finally:
        _set_port_mtu(lab, "9100")
    assert twin_json("verify", "--name", name)["passed"] is True


def test_a_server_nic_lowered_below_the_fabric_mtu_fails_verify(lab: dict[str, Any]) -> None:
    name = lab["lab"]
    assert netns_exec(name, "server1", "ip", "link", "set", "dev", "eth1", "mtu", "9000").returncode == 0
    try:
        proc = twin("verify", "--name", name, "--json", check=False)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        failed = _failed(proc.stdout)
        assert failed["link-mtu"] == [(LINK, "expected equal MTUs, seen 9100 and 9000")]
        assert [subject for subject, _ in failed["server-port-df-ping"]] == [LINK]
    finally:
        netns_exec(name, "server1", "ip", "link", "set", "dev", "eth1", "mtu", "9100")
    assert twin_json("verify", "--name", name)["passed"] is True
