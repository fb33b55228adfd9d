"""gNOI System on a real lab: Time; Reboot COLD of leaf1, silent on its management address, booting it
from its saved config; Reboot WARM, silent too, restarting FRR while the kernel keeps forwarding.

SONiC's warm reboot keeps a ToR's routes in its neighbours through BGP graceful restart: the warm test
turns it on in leaf1's BGP_GLOBALS first (twin's generated configs leave it off) and resets the sessions
so that the capability is exchanged. The lab has no BFD, whose sessions going down would end the
graceful restart (FRR tears the BGP session down at once)."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from labtools import clos_lab_file, netns_exec, running_lab, twin, twin_json, until

from twin.host.rundir import node_dir
from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc

SAVED, UNSAVED = "10.98.98.1", "10.99.99.1"
SHUTDOWN_S, BOOT_S = 2, 6   # the lab file's reboot phases, short for the test


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Any]]]:
    lab_file = clos_lab_file(tmp_path_factory.mktemp("reboot"), "spines: 2, leaves: 2, servers_per_leaf: 1",
                             f"reboot: {{shutdown_s: {SHUTDOWN_S}, boot_s: {BOOT_S}}}\n")
    with running_lab(lab_file, "r") as name:
        yield name, twin_json("status", "--name", name)


def _answers(status: dict[str, Any], node: str, port_of: str) -> bool:
    """Whether `node`'s management address accepts a TCP connection on its SSH or gNMI port."""
    target = next(n for n in status["nodes"] if n["name"] == node)[port_of]
    try:
        with socket.create_connection((target["host"], target["port"]), timeout=0.5):
            return True
    except OSError:
        return False


def _silent_then_back(status: dict[str, Any], node: str) -> tuple[float, float]:
    """When (s after now) SSH and gNMI both stopped answering, and when both answered again."""
    start = time.monotonic()
    assert until(lambda: not _answers(status, node, "ssh") and not _answers(status, node, "gnmi"),
                 timeout=SHUTDOWN_S + 10, every=0.1), "the management address kept answering"
    down = time.monotonic() - start
    assert until(lambda: _answers(status, node, "ssh") and _answers(status, node, "gnmi"),
                 timeout=BOOT_S + 60, every=0.2), "the management address never answered again"
    return down, time.monotonic() - start


def _system(status: dict[str, Any], node: str) -> tuple[system_pb2_grpc.SystemStub, tuple[tuple[str, str], ...]]:
    """A gNOI client for `node` as for any SONiC switch: TLS, trusting the certificate it shows
    (pygnmi's skip_verify does the same), username/password metadata."""
    target = next(n for n in status["nodes"] if n["name"] == node)["gnmi"]
    address = f"{target['host']}:{target['port']}"
    if target.get("insecure"):
        channel = grpc.insecure_channel(address)
    else:
        cert = ssl.get_server_certificate((target["host"], target["port"])).encode()
        channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=cert))
    return system_pb2_grpc.SystemStub(channel), (("username", target["username"]), ("password", target["password"]))


def _db_cli(lab: str, *args: str) -> str:
    return twin("exec", "--name", lab, "leaf1", "--", "sonic-db-cli", "CONFIG_DB", *args).stdout.strip()


def _lo_addresses(lab: str) -> str:
    return netns_exec(lab, "leaf1", "ip", "-4", "address", "show", "dev", "lo").stdout


def _sessions_to_leaf1(lab: str) -> list[dict[str, Any]]:
    out = twin("exec", "--name", lab, "spine1", "--", "vtysh", "-c", "show bgp neighbors json").stdout
    peers = json.loads(out)
    return [p for p in peers.values() if isinstance(p, dict) and p.get("nbrDesc") == "leaf1"]


def _dropped(lab: str) -> int:
    return sum(int(p.get("connectionsDropped", 0)) for p in _sessions_to_leaf1(lab))


def _all_established(lab: str) -> bool:
    sessions = _sessions_to_leaf1(lab)
    return bool(sessions) and all(p.get("bgpState") == "Established" for p in sessions)


def test_time(lab: tuple[str, dict[str, Any]]) -> None:
    stub, auth = _system(lab[1], "leaf1")
    assert stub.Time(system_pb2.TimeRequest(), metadata=auth).time > 1_600_000_000 * 10**9


def test_cold_reboot_boots_from_the_saved_config(lab: tuple[str, dict[str, Any]]) -> None:
    name, status = lab
    stub, auth = _system(status, "leaf1")
    _db_cli(name, "hset", f"LOOPBACK_INTERFACE|Loopback0|{SAVED}/32", "NULL", "NULL")
    twin("exec", "--name", name, "leaf1", "--", "config", "save", "-y")
    _db_cli(name, "hset", f"LOOPBACK_INTERFACE|Loopback0|{UNSAVED}/32", "NULL", "NULL")
    assert until(lambda: SAVED in _lo_addresses(name) and UNSAVED in _lo_addresses(name))
    assert until(lambda: _all_established(name), timeout=60)
    dropped = _dropped(name)

    stub.Reboot(system_pb2.RebootRequest(method=system_pb2.COLD, message="gnoi test"), metadata=auth)
    # sonic-mgmt's test_gnoi_system_reboot_cold reads the status at once: the switch answers while it shuts down
    assert stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=auth).active
    assert until(lambda: _dropped(name) > dropped, timeout=60), "spine1 never saw its sessions to leaf1 drop"
    down, back = _silent_then_back(status, "leaf1")
    assert down < SHUTDOWN_S + 2 and back >= BOOT_S
    assert until(lambda: _all_established(name), timeout=120), _sessions_to_leaf1(name)
    done = stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=auth)
    assert not done.active and done.status.status == system_pb2.RebootStatus.STATUS_SUCCESS, done
    assert (done.reason, done.method, done.count) == ("gnoi test", system_pb2.COLD, 1)
    assert _db_cli(name, "exists", f"LOOPBACK_INTERFACE|Loopback0|{SAVED}/32") == "1"
    assert _db_cli(name, "exists", f"LOOPBACK_INTERFACE|Loopback0|{UNSAVED}/32") == "0"
    lo = _lo_addresses(name)
    assert SAVED in lo and UNSAVED not in lo


def test_reboot_while_rebooting_is_refused(lab: tuple[str, dict[str, Any]]) -> None:
    name, status = lab
    stub, auth = _system(status, "leaf1")
    assert until(lambda: _all_established(name), timeout=120)
    request = system_pb2.RebootRequest(method=system_pb2.COLD, message="first")
    stub.Reboot(request, metadata=auth)
    with pytest.raises(grpc.RpcError) as err:
        stub.Reboot(request, metadata=auth)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert until(lambda: not stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=auth).active, timeout=120)
    assert until(lambda: _all_established(name), timeout=120)


def _address(lab: str, node: str) -> str:
    links = json.loads(netns_exec(lab, node, "ip", "-4", "-j", "addr", "show", "eth1").stdout)
    return str(links[0]["addr_info"][0]["local"])


def _bgpd_pid(lab: str) -> str:
    return (node_dir(lab, "leaf1") / "bgpd.pid").read_text().strip()


def _restarting_peer(lab: str) -> bool:
    """Whether spine1 has learnt that leaf1 is a graceful-restart speaker (a helper of it)."""
    sessions = _sessions_to_leaf1(lab)
    return bool(sessions) and all(p.get("bgpState") == "Established"
                                  and p.get("gracefulRestartInfo", {}).get("remoteGrMode") == "Restart"
                                  for p in sessions)


@pytest.fixture(scope="module")
def graceful_leaf1(lab: tuple[str, dict[str, Any]]) -> str:
    """leaf1 restarting gracefully, as SONiC's warm reboot needs, its neighbours knowing it."""
    name = lab[0]
    assert until(lambda: _all_established(name), timeout=120)
    _db_cli(name, "hset", "BGP_GLOBALS|default", "graceful_restart_enable", "true", "gr_preserve_fw_state", "true",
            "gr_restart_time", "240")
    assert until(lambda: "bgp graceful-restart preserve-fw-state" in twin(
        "exec", "--name", name, "leaf1", "--", "vtysh", "-c", "show running-config").stdout, timeout=30)
    twin("exec", "--name", name, "leaf1", "--", "vtysh", "-c", "clear bgp *")
    assert until(lambda: _restarting_peer(name), timeout=120), _sessions_to_leaf1(name)
    return name


def test_warm_reboot_restarts_the_control_plane_and_keeps_forwarding(lab: tuple[str, dict[str, Any]],
                                                                     graceful_leaf1: str) -> None:
    name, status = lab
    stub, auth = _system(status, "leaf1")
    before, dropped, server2 = _bgpd_pid(name), _dropped(name), _address(name, "server2")
    assert until(lambda: netns_exec(name, "server1", "ping", "-c1", "-W0.3", server2).returncode == 0, timeout=60)
    # server1 (behind leaf1) to server2 (behind leaf2), every 10 ms, through the whole reboot
    probe = subprocess.Popen(["ip", "netns", "exec", f"tw.{name}.server1", "ping", "-q", "-i", "0.01",
                              "-W", "1", "-w", str(SHUTDOWN_S + BOOT_S + 20), server2],
                             stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1)
        stub.Reboot(system_pb2.RebootRequest(method=system_pb2.WARM, message="warm test"), metadata=auth)
        assert stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=auth).method == system_pb2.WARM
        _silent_then_back(status, "leaf1")
        assert until(lambda: _dropped(name) > dropped, timeout=30), "spine1 never saw bgpd's sessions end"
        assert until(lambda: _all_established(name), timeout=120), _sessions_to_leaf1(name)
        out, _ = probe.communicate(timeout=SHUTDOWN_S + BOOT_S + 40)
    finally:
        probe.kill()
    assert _bgpd_pid(name) != before                        # FRR was restarted
    sent, received = (int(word) for word in out.split("packets transmitted, ")[0].split()[-1:]
                      + out.split("packets transmitted, ")[1].split()[:1])
    assert sent > 1000 and received == sent, out             # and forwarding never stopped
    done = stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=auth)
    assert not done.active and done.status.status == system_pb2.RebootStatus.STATUS_SUCCESS, done
    assert (done.method, done.reason) == (system_pb2.WARM, "warm test")


def test_warm_reboot_drill_passes_where_bgp_restarts_gracefully_and_fails_where_not(
        lab: tuple[str, dict[str, Any]], graceful_leaf1: str) -> None:
    name = lab[0]
    hitless = twin_json("drill", "warm-reboot", "--name", name, "--target", "leaf1", "--json", check=False)
    assert hitless["passed"] and hitless["probe"]["lost"] == 0, hitless["violations"]
    assert hitless["checks"]["warm_reboot_completed"] and hitless["checks"]["bgp_back_after_warm_reboot"]
    figures = hitless["figures"]
    assert figures["management_silent_ms"] >= BOOT_S * 1000 * 0.8
    assert figures["control_plane_down_ms"] > figures["management_silent_ms"]
    # leaf2 does not restart gracefully: its neighbours drop its routes while its bgpd restarts
    lossy = twin_json("drill", "warm-reboot", "--name", name, "--target", "leaf2", "--json", check=False)
    assert not lossy["passed"] and lossy["loss_ms"] > 1000, lossy
    assert any(v.startswith("loss_ms") for v in lossy["violations"])
