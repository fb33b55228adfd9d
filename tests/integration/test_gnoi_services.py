"""A switch's gRPC server on a real lab as sonic-mgmt's gNOI tests reach it: gRPC reflection (as grpcurl
uses it, no credentials) listing exactly the services served, gNOI File over the switch's own files
(a missing path answered as sonic-gnmi answers it, a file of the switch fetched, a download made from
the switch), and KillProcess restarting bgp, after which BGP is Established again."""

from __future__ import annotations

import hashlib
import json
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from labtools import clos_lab_file, netns_exec, running_lab, twin, twin_json, until

from twin.host.rundir import node_dir
from twin.switch.gnoi.gnoi_pb.common import common_pb2
from twin.switch.gnoi.gnoi_pb.file import file_pb2, file_pb2_grpc
from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc

SERVED = ["gnmi.gNMI", "gnoi.file.File", "gnoi.system.System", "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection"]


@pytest.fixture(scope="module")
def leaf1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, grpc.Channel, Any]]:
    """A small lab; a channel to leaf1's gNMI/gNOI port as a client of a SONiC switch makes it (TLS,
    trusting the certificate the switch shows) and the credentials to send."""
    lab_file = clos_lab_file(tmp_path_factory.mktemp("gnoi"), "spines: 1, leaves: 2, servers_per_leaf: 1")
    with running_lab(lab_file, "gs") as name:
        status = twin_json("status", "--name", name)
        target = next(n for n in status["nodes"] if n["name"] == "leaf1")["gnmi"]
        address = f"{target['host']}:{target['port']}"
        if target.get("insecure"):
            channel = grpc.insecure_channel(address)
        else:
            cert = ssl.get_server_certificate((target["host"], target["port"])).encode()
            channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=cert))
        with channel:
            yield name, channel, (("username", target["username"]), ("password", target["password"]))


def test_reflection_lists_the_served_services_without_credentials(leaf1: tuple[str, grpc.Channel, Any]) -> None:
    _, channel, _ = leaf1
    assert list(ProtoReflectionDescriptorDatabase(channel).get_services()) == SERVED    # v1alpha
    v1 = channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                               request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                               response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    (answer,) = list(v1(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10))
    assert [s.name for s in answer.list_services_response.service] == SERVED


def test_file_stat_of_a_missing_path_answers_as_sonic_gnmi(leaf1: tuple[str, grpc.Channel, Any]) -> None:
    """sonic-mgmt test_gnoi_file_stat_not_found, the call built from reflection as grpcurl builds it."""
    _, channel, auth = leaf1
    pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
    stat = pool.FindServiceByName("gnoi.file.File").FindMethodByName("Stat")
    call = channel.unary_unary("/gnoi.file.File/Stat", request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=message_factory.GetMessageClass(stat.output_type).FromString)
    request = message_factory.GetMessageClass(stat.input_type)(path="/etc/this_path_does_not_exist_gnoi_test")
    with pytest.raises(grpc.RpcError) as raised:
        call(request, metadata=auth, timeout=10)
    assert (raised.value.code(), raised.value.details()) == (
        grpc.StatusCode.NOT_FOUND, "path not found: /etc/this_path_does_not_exist_gnoi_test")
    listing = call(message_factory.GetMessageClass(stat.input_type)(path="/etc/sonic"), metadata=auth, timeout=10)
    assert "/etc/sonic/config_db.json" in [s.path for s in listing.stats]


def test_file_get_returns_the_switchs_saved_config(leaf1: tuple[str, grpc.Channel, Any]) -> None:
    name, channel, auth = leaf1
    answers = list(file_pb2_grpc.FileStub(channel).Get(
        file_pb2.GetRequest(remote_file="/etc/sonic/config_db.json"), metadata=auth, timeout=10))
    data = b"".join(a.contents for a in answers[:-1])
    assert data == (node_dir(name, "leaf1") / "config_db.json").read_bytes()
    assert json.loads(data)["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"
    assert answers[-1].hash.hash == hashlib.md5(data).digest()


def test_file_transfer_to_remote_fetches_from_where_the_switch_reaches(leaf1: tuple[str, grpc.Channel, Any],
                                                                       tmp_path: Path) -> None:
    """sonic-mgmt test_file_transfer_to_remote, the web server on server1, which leaf1 reaches over
    its front-panel link: the download leaves from the switch."""
    name, channel, auth = leaf1
    (tmp_path / "test.txt").write_text("Hello from gNOI TransferToRemote test!\n")
    address = json.loads(netns_exec(name, "server1", "ip", "-4", "-j", "addr", "show", "eth1").stdout)[0][
        "addr_info"][0]["local"]
    web = subprocess.Popen(["ip", "netns", "exec", f"tw.{name}.server1", sys.executable, "-m", "http.server",
                            "--bind", address, "--directory", str(tmp_path), "8080"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert until(lambda: netns_exec(name, "server1", "ss", "-ltn", f"src {address}:8080").stdout.count("\n") > 1,
                     timeout=10)
        url, http = f"http://{address}:8080/test.txt", common_pb2.RemoteDownload.HTTP
        remote = common_pb2.RemoteDownload(path=url, protocol=http)
        request = file_pb2.TransferToRemoteRequest(local_path="/tmp/test.txt", remote_download=remote)
        answer = file_pb2_grpc.FileStub(channel).TransferToRemote(request, metadata=auth, timeout=60)
    finally:
        web.kill()
        web.wait()
    fetched = (node_dir(name, "leaf1") / "tmp" / "test.txt").read_bytes()
    assert fetched == b"Hello from gNOI TransferToRemote test!\n"
    assert answer.hash.hash == hashlib.md5(fetched).digest()


def _bgpd_pid(lab: str) -> str:
    return (node_dir(lab, "leaf1") / "bgpd.pid").read_text().strip()


def _leaf1_established(lab: str) -> bool:
    out = twin("exec", "--name", lab, "leaf1", "--", "vtysh", "-c", "show bgp summary json", check=False).stdout
    try:
        peers = json.loads(out)["ipv4Unicast"]["peers"]
    except (ValueError, KeyError):
        return False
    return bool(peers) and all(p.get("state") == "Established" for p in peers.values())


def test_kill_process_restart_bgp_brings_bgp_back(leaf1: tuple[str, grpc.Channel, Any]) -> None:
    name, channel, auth = leaf1
    stub = system_pb2_grpc.SystemStub(channel)
    assert until(lambda: _leaf1_established(name), timeout=120)
    term = system_pb2.KillProcessRequest.SIGNAL_TERM
    with pytest.raises(grpc.RpcError) as raised:     # a SONiC service a twin switch has no counterpart of
        stub.KillProcess(system_pb2.KillProcessRequest(name="snmp", restart=True, signal=term), metadata=auth)
    assert (raised.value.code(), raised.value.details()) == (grpc.StatusCode.UNKNOWN,
                                                             "Dbus does not support snmp service restart")
    before = _bgpd_pid(name)
    stub.KillProcess(system_pb2.KillProcessRequest(name="bgp", restart=True, signal=term), metadata=auth, timeout=120)
    assert _bgpd_pid(name) != before
    assert until(lambda: _leaf1_established(name), timeout=120)
