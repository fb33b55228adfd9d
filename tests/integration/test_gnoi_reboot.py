"""gNOI System on a real lab: Time, and Reboot COLD of leaf1 booting it from its saved config."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from labtools import netns_exec, running_lab, twin, twin_json, until

from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc

SAVED, UNSAVED = "10.98.98.1", "10.99.99.1"


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[str, dict[str, Any]]]:
    with running_lab("tests/integration/data/mini.yaml", "r") as name:
        yield name, twin_json("status", "--name", name)


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

    assert until(lambda: _dropped(name) > dropped, timeout=60), "spine1 never saw its sessions to leaf1 drop"
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
