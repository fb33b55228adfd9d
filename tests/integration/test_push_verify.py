"""twin push / twin verify over gNMI, and pygnmi's own command-line client as an outside client."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import REPO, running_lab, twin, twin_json


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "v") as name:
        yield twin_json("status", "--name", name)


def test_verify_passes_on_a_healthy_lab(lab: dict[str, Any], tmp_path: Path) -> None:
    doc = twin_json("verify", "--name", lab["lab"], "--junit", str(tmp_path / "v.xml"))
    assert doc["passed"] is True
    assert {c["name"] for c in doc["checks"]} >= {"bgp-sessions", "ecmp-width", "server-reachability",
                                                  "bfd-sessions", "link-mtu"}
    junit = ET.parse(tmp_path / "v.xml").getroot()
    assert junit.get("failures") == "0" and int(junit.get("tests", "0")) > len(doc["checks"])  # per node
    bgp = junit.find(f"testsuite[@name='twin.verify.{lab['lab']}.bgp-sessions']")
    assert bgp is not None and {c.get("name") for c in bgp.iter("testcase")} >= {"leaf1", "spine1"}


def test_push_reports_changes_and_verify_catches_mtu_mismatch(lab: dict[str, Any], tmp_path: Path) -> None:
    name = lab["lab"]
    configs = tmp_path / "configs"
    shutil.copytree(f"/run/twin/{name}/nodes", configs, ignore=shutil.ignore_patterns(
        "*.pid", "*.vty", "*.api", "*.sock", "*.log", "frr.conf"))
    db_path = configs / "leaf1" / "config_db.json"
    db = json.loads(db_path.read_text())
    db["PORT"]["Ethernet128"]["mtu"] = "1500"
    db_path.write_text(json.dumps(db))
    pushed = twin_json("push", "--name", name, "--configs", str(configs))
    by_switch = {s["switch"]: s for s in pushed["switches"]}
    assert by_switch["leaf1"]["changed"] == ["PORT|Ethernet128"]
    assert all(not s["changed"] for sw, s in by_switch.items() if sw != "leaf1")
    proc = twin("verify", "--name", name, "--json", "--junit", str(tmp_path / "v.xml"), check=False)
    assert proc.returncode == 1
    mtu = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "link-mtu")
    bad = [i for i in mtu["items"] if i["status"] == "failure"]
    assert len(bad) == 1 and "leaf1:Ethernet128" in bad[0]["subject"] and "1500 and 9100" in bad[0]["message"]
    link = ET.parse(tmp_path / "v.xml").getroot().find(
        f"testsuite[@name='twin.verify.{name}.link-mtu']/testcase[@name='{bad[0]['subject'].split()[0]}']/failure")
    assert link is not None and "expected equal MTUs, seen 1500 and 9100" in (link.text or "")
    # pushing the lab's own plan puts it back
    restored = twin_json("push", "--name", name)
    assert {s["switch"]: s["changed"] for s in restored["switches"]}["leaf1"] == ["PORT|Ethernet128"]
    assert twin_json("verify", "--name", name)["passed"] is True


def test_push_of_a_missing_file_fails_clearly(lab: dict[str, Any], tmp_path: Path) -> None:
    proc = twin("push", "--name", lab["lab"], "--configs", str(tmp_path), "--json", check=False)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert all("config_db.json does not exist" in s["error"] for s in doc["switches"])


def test_pygnmicli_as_an_outside_client(lab: dict[str, Any]) -> None:
    target = next(n for n in lab["nodes"] if n["name"] == "spine1")["gnmi"]
    cli = Path(sys.executable).parent / "pygnmicli"
    proc = subprocess.run([str(cli), "-t", f"{target['host']}:{target['port']}", "-u", target["username"],
                           "-p", target["password"], "--skip-verify", "-o", "get", "-e", "json_ietf",
                           "-x", "/sonic-db:CONFIG_DB/localhost/DEVICE_METADATA"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert '"hostname": "spine1"' in proc.stdout


def test_ssh_shell_with_netmiko(lab: dict[str, Any]) -> None:
    from netmiko import ConnectHandler

    target = next(n for n in lab["nodes"] if n["name"] == "leaf1")["ssh"]
    assert target["device_type"] == "linux"
    with ConnectHandler(**target) as conn:
        assert conn.find_prompt() == "admin@leaf1:~$"
        assert "Total number of neighbors 2" in conn.send_command("show ip bgp summary")
        route = conn.send_command("show ip route 10.1.4.2/32")
        assert route.count(", via Ethernet") == 2
        status = conn.send_command("show interfaces status")
        assert "Ethernet128" in status and "routed" in status
        assert "SONiC Software Version" in conn.send_command("show version")
        assert "Established" in conn.send_command("vtysh -c 'show bgp neighbors 10.0.0.64'")
        assert "10.1.4.1/32" in conn.send_command("ip -br addr show lo")


def test_ssh_wrong_password_is_refused(lab: dict[str, Any]) -> None:
    from netmiko import ConnectHandler
    from netmiko.exceptions import NetmikoAuthenticationException

    target = dict(next(n for n in lab["nodes"] if n["name"] == "spine1")["ssh"])
    target["password"] = "wrong"
    with pytest.raises(NetmikoAuthenticationException):
        ConnectHandler(**target)


def test_configs_generated_for_the_plan_push_as_no_change_the_second_time(lab: dict[str, Any]) -> None:
    """`twin plan -o` writes each switch's management address as the plan has it; the running lab's
    management subnet is its own (away from other labs'). A push keeps the address the switch is
    reached at, so CONFIG_DB goes on saying what eth0 has, and pushing the same configs again is no
    change (it reported '+1 -1 keys' per switch: MGMT_INTERFACE swapped every time)."""
    name = lab["lab"]
    with tempfile.TemporaryDirectory() as tmp:
        twin("plan", "tests/integration/data/mini.yaml", "-o", tmp, "--json")
        first = twin_json("push", "--name", name, "--configs", tmp)
        second = twin_json("push", "--name", name, "--configs", tmp)
    assert all(not s["added"] and not s["removed"] and not s["changed"] for s in second["switches"]), second
    assert all(not any(k.startswith("MGMT_INTERFACE") for k in s["added"] + s["removed"]) for s in first["switches"])
    mgmt = {n["name"]: n["mgmt"] for n in lab["nodes"] if n["kind"] == "switch"}
    sock = f"/run/twin/{name}/nodes/leaf1/redis.sock"
    keys = subprocess.run(["redis-cli", "-s", sock, "-n", "4", "keys", "MGMT_INTERFACE|*"], capture_output=True,
                          text=True, check=True).stdout.split()
    assert [k.split("|")[2].split("/")[0] for k in keys] == [mgmt["leaf1"]]
    assert twin_json("verify", "--name", name)["passed"] is True
