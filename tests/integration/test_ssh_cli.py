"""SSH to a switch is the switch's CLI, never the host: netmiko's SONiC device types, CONFIG_DB-backed
`sudo config`, and nothing written to or read from the host's file system.

Every state change is polled for (no fixed sleeps)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
from labtools import running_lab, ssh_run, twin, twin_json, until

from twin.stages.configdb import ConfigDb
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis

MINI = "tests/integration/data/mini.yaml"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab(MINI, "hd") as name:
        yield twin_json("status", "--name", name)


def target(lab: dict[str, Any], node: str = "leaf1") -> dict[str, Any]:
    ssh: dict[str, Any] = next(n for n in lab["nodes"] if n["name"] == node)["ssh"]
    return ssh


def rundir(lab: dict[str, Any], node: str = "leaf1") -> Path:
    return Path(f"/run/twin/{lab['lab']}/nodes/{node}")


def config_db(lab: dict[str, Any], node: str = "leaf1") -> ConfigDb:
    return SonicRedis(unix_socket=socket_path(rundir(lab, node))).get_config()


def netns(lab: dict[str, Any], node: str = "leaf1") -> str:
    return f"tw.{lab['lab']}.{node}"


def link_up(lab: dict[str, Any], port: str) -> bool:
    proc = subprocess.run(["ip", "-n", netns(lab), "-j", "link", "show", port], capture_output=True, text=True,
                          check=True)
    return "UP" in json.loads(proc.stdout)[0]["flags"]


def bgp_state(lab: dict[str, Any], peer: str) -> str:
    proc = subprocess.run(["vtysh", "--vty_socket", str(rundir(lab)), "-c", f"show bgp neighbors {peer} json"],
                          capture_output=True, text=True, timeout=30)
    state: str = json.loads(proc.stdout or "{}").get(peer, {}).get("bgpState", "")
    return state


def fresh(prefix: str) -> Path:
    path = Path(f"/tmp/{prefix}-{uuid.uuid4().hex[:8]}")
    assert not path.exists()
    return path


# -- confinement -------------------------------------------------------------------------------------

def test_nothing_over_ssh_writes_a_host_file(lab: dict[str, Any]) -> None:
    paths = [fresh("twin-pwned") for _ in range(7)]
    attempts = [
        f"echo x > {paths[0]}",
        f"bash -c 'touch {paths[1]}'",
        f"vtysh -c 'conf t' -c 'log file {paths[2]}'",
        f"vtysh -c 'conf t' -c 'lo fi {paths[3]}'",
        f"sudo config save -y {paths[4]}",
        f"sudo config save -y ../../../..{paths[5]}",
        f"show version > {paths[6]}",
    ]
    for command in attempts:
        code, out, err = ssh_run(lab, command)
        assert code != 0, (command, out, err)
    code, out, err = ssh_run(lab, f"redis-cli config set dir {paths[0].parent}")
    assert code != 0 and "not available" in err
    code, out, _ = ssh_run(lab, "vtysh -c 'show running-config'")
    assert code == 0 and "router bgp" in out and "twin-pwned" not in out
    assert [p for p in paths if p.exists()] == []


def test_no_host_file_can_be_read(lab: dict[str, Any]) -> None:
    shadow_root = Path("/etc/shadow").read_text().splitlines()[0]
    for command in ("cat /etc/shadow", "vtysh -f /etc/shadow", "sudo config load -y /etc/passwd",
                    "sudo config load -y /etc/sonic/../../etc/passwd", "show ip route | grep root /etc/shadow",
                    "vtysh -c 'conf t' -c 'banner motd file /etc/shadow'", "redis-cli --eval /etc/shadow"):
        code, out, err = ssh_run(lab, command)
        assert code != 0, command
        assert shadow_root not in out + err and "root:x:0:0" not in out + err, command


def test_a_symlink_in_the_switch_directory_does_not_lead_out(lab: dict[str, Any]) -> None:
    link = rundir(lab) / "evil.json"
    link.symlink_to("/etc/passwd")
    try:
        code, out, err = ssh_run(lab, "sudo config load -y /etc/sonic/evil.json")
        assert code == 1 and "root:x:0:0" not in out + err
    finally:
        link.unlink()


# -- netmiko: SONiC's device types ------------------------------------------------------------------

def test_edgecore_sonic_reads_bgp_summary_with_established_peers(lab: dict[str, Any]) -> None:
    from netmiko import ConnectHandler

    with ConnectHandler(**{**target(lab), "device_type": "edgecore_sonic"}) as conn:
        assert conn.find_prompt() == "admin@leaf1:~$"
        summary = conn.send_command("show ip bgp summary")
        assert "IPv4 Unicast Summary:" in summary and "Total number of neighbors 2" in summary
        rows = [line.split() for line in summary.splitlines() if re.match(r"^\d+\.\d+\.\d+\.\d+\s", line)]
        assert len(rows) == 2
        assert all(row[9].isdigit() for row in rows), summary   # State/PfxRcd: a count once Established
        assert "FRRouting" in conn.send_command("vtysh -c 'show version'")
        # its config mode is `sudo -s`: a root prompt, and back
        out = conn.send_config_set(["config interface startup Ethernet0"])
        assert "root@leaf1:/home/admin#" in out
        assert conn.find_prompt() == "admin@leaf1:~$"


@pytest.mark.parametrize("device_type", ["linux", "dell_sonic"])
def test_linux_and_dell_sonic_connect_and_run_a_command(lab: dict[str, Any], device_type: str) -> None:
    from netmiko import ConnectHandler

    with ConnectHandler(**{**target(lab), "device_type": device_type}) as conn:
        prompt = conn.find_prompt()
        assert prompt == ("leaf1#" if device_type == "dell_sonic" else "admin@leaf1:~$")
        assert "SONiC Software Version" in conn.send_command("show version")
        assert "Total number of neighbors 2" in conn.send_command("show ip bgp summary")


def test_dell_sonic_config_set_goes_through_config_db(lab: dict[str, Any]) -> None:
    from netmiko import ConnectHandler

    with ConnectHandler(**{**target(lab), "device_type": "dell_sonic"}) as conn:
        conn.send_config_set(["interface Ethernet0", "description twin-ssh-test"])
        assert until(lambda: config_db(lab)["PORT"]["Ethernet0"].get("description") == "twin-ssh-test", 20)
        conn.send_config_set(["interface Ethernet0", "description server1:eth1"])
        assert until(lambda: config_db(lab)["PORT"]["Ethernet0"].get("description") == "server1:eth1", 20)


# -- sudo config: through CONFIG_DB, the config daemons act -----------------------------------------

def test_interface_shutdown_and_startup(lab: dict[str, Any]) -> None:
    port = "Ethernet128"
    assert link_up(lab, port)
    code, _, err = ssh_run(lab, f"sudo config interface shutdown {port}")
    assert code == 0, err
    try:
        assert config_db(lab)["PORT"][port]["admin_status"] == "down"
        assert until(lambda: not link_up(lab, port), 30)
        assert until(lambda: " down " in ssh_run(lab, f"show interfaces status {port}")[1], 30)
    finally:
        code, _, err = ssh_run(lab, f"sudo config interface startup {port}")
    assert code == 0, err
    assert config_db(lab)["PORT"][port]["admin_status"] == "up"
    assert until(lambda: link_up(lab, port), 30)
    assert until(lambda: bgp_state(lab, "10.0.0.64") == "Established", 60)


def test_bgp_shutdown_and_startup_of_a_neighbor(lab: dict[str, Any]) -> None:
    peer = "10.0.0.64"
    assert until(lambda: bgp_state(lab, peer) == "Established", 60)
    code, out, err = ssh_run(lab, f"sudo config bgp shutdown neighbor {peer}")
    assert code == 0 and out == f"Shutting down BGP session with neighbor {peer}...\n", err
    try:
        assert config_db(lab)["BGP_NEIGHBOR"][f"default|{peer}"]["admin_status"] == "down"
        assert until(lambda: bgp_state(lab, peer) == "Idle", 30)
        assert until(lambda: "Idle (Admin)" in ssh_run(lab, "show ip bgp summary")[1], 30)
    finally:
        code, out, err = ssh_run(lab, f"sudo config bgp startup neighbor {peer}")
    assert code == 0, err
    assert config_db(lab)["BGP_NEIGHBOR"][f"default|{peer}"]["admin_status"] == "up"
    assert until(lambda: bgp_state(lab, peer) == "Established", 60)


def test_config_save_asks_and_stays_in_the_switch_directory(lab: dict[str, Any]) -> None:
    saved = rundir(lab) / "ssh-backup.json"
    code, out, err = ssh_run(lab, "sudo config save /etc/sonic/ssh-backup.json", stdin="n\n")
    assert code == 1 and "Existing files will be overwritten, continue? [y/N]:" in out + err and not saved.exists()
    code, out, err = ssh_run(lab, "sudo config save /etc/sonic/ssh-backup.json", stdin="y\n")
    assert code == 0, err
    try:
        assert json.loads(saved.read_text())["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"
        code, out, err = ssh_run(lab, "sudo config load -y ssh-backup.json")
        assert code == 0 and "sonic-cfggen -j /etc/sonic/ssh-backup.json --write-to-db" in out, err
    finally:
        saved.unlink(missing_ok=True)


def test_vtysh_write_memory_lands_in_the_switch_directory(lab: dict[str, Any]) -> None:
    conf = rundir(lab) / "frr.conf"
    before = conf.stat().st_mtime_ns
    host_etc = {p: p.stat().st_mtime_ns for p in Path("/etc/frr").glob("*.conf")}
    code, out, err = ssh_run(lab, "sudo vtysh -c 'write memory'")
    assert code == 0, out + err
    assert conf.stat().st_mtime_ns != before and "router bgp" in conf.read_text()
    assert {p: p.stat().st_mtime_ns for p in Path("/etc/frr").glob("*.conf")} == host_etc


def test_the_password_file_is_private(lab: dict[str, Any]) -> None:
    run = Path(f"/run/twin/{lab['lab']}")
    for name in ("agent.json", "tls.key", "ssh_host_key"):
        assert (run / name).stat().st_mode & 0o077 == 0, name


def test_wrong_password_is_refused(lab: dict[str, Any]) -> None:
    t = target(lab)
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    with pytest.raises(paramiko.AuthenticationException):
        client.connect(t["host"], port=t["port"], username=t["username"], password="wrong", look_for_keys=False,
                       allow_agent=False, timeout=30)


def test_the_lab_files_credentials_are_the_ssh_login(tmp_path: Path) -> None:
    from labtools import REPO

    lab_file = tmp_path / "creds.yaml"
    lab_file.write_text(f"name: creds\ntopology: {REPO / MINI}\n"
                        "gnmi: {username: ops, password: n0t-the-default}\n")
    with running_lab(lab_file, "hd") as name:
        lab = twin_json("status", "--name", name)
        assert target(lab)["username"] == "ops" and target(lab)["password"] == "n0t-the-default"
        assert ssh_run(lab, "whoami; hostname")[0] == 1   # `;` is not the shell's
        code, out, err = ssh_run(lab, "hostname")
        assert (code, out) == (0, "leaf1\n"), err
        assert Path(f"/run/twin/{name}/agent.json").stat().st_mode & 0o777 == 0o600
        with pytest.raises(paramiko.AuthenticationException):
            ssh_run({**lab, "nodes": [{"name": "leaf1", "ssh": {**target(lab), "username": "admin",
                                                                   "password": "YourPaSsWoRd"}}]}, "hostname")


# -- docker runtime: a line outside the set runs inside the container -------------------------------

@pytest.mark.needs_docker
def test_docker_switch_shell_lines_run_in_the_container() -> None:
    built = twin("image", "build", "--json", check=False, timeout=1800)
    if built.returncode != 0:
        pytest.skip(f"the switch image could not be built here: {(built.stdout + built.stderr).strip()[-300:]}")
    with running_lab(MINI, "hd", "--runtime", "docker") as name:
        lab = twin_json("status", "--name", name)
        mark = fresh("twin-container")
        code, out, err = ssh_run(lab, f"bash -c 'touch {mark}' && cat /etc/hostname")
        assert code == 0 and out.strip() == "leaf1", err
        assert not mark.exists()
        inside = subprocess.run(["docker", "exec", f"tw-{name}-leaf1", "test", "-f", str(mark)], check=False)
        assert inside.returncode == 0
        code, out, err = ssh_run(lab, "show ip bgp summary")
        assert code == 0 and "Total number of neighbors 2" in out, err
        code, out, err = ssh_run(lab, f"vtysh -c 'conf t' -c 'log file {mark}.log'")
        assert code == 1 and not Path(f"{mark}.log").exists()
