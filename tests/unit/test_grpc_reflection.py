"""gRPC server reflection on a switch's server as sonic-gnmi serves it (gnmi_server/server.go:
reflection.Register, v1 and v1alpha, no credentials), listing exactly what the switch serves, and
usable as grpcurl uses it: services listed, a service's file resolved, a method called with messages
built from the descriptors alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from twin.model.agent import AgentSettings
from twin.switch.access.call_gate import CallGate, Outcome
from twin.switch.access.grpc_guard import guarded_server
from twin.switch.access.login_throttle import LoginThrottle
from twin.switch.agent import add_services
from twin.switch.sonic_gnmi.reflection import REFLECTION_METHODS, V1, V1ALPHA

AUTH = (("username", "admin"), ("password", "pw"))
SERVED = ["gnmi.gNMI", "gnoi.file.File", "gnoi.system.System", "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection"]
# Services sonic-gnmi registers that a twin switch does not serve: they must not be there.
NOT_SERVED = ["/gnoi.os.OS/Verify", "/gnoi.healthz.Healthz/Get", "/gnoi.containerz.Containerz/ListContainer",
              "/gnoi.factory_reset.FactoryReset/Start", "/gnoi.sonic.SonicService/ShowTechsupport",
              "/gnoi.certz.v1.Certz/GetProfileList", "/grpc.health.v1.Health/Check"]


class _Endpoint:
    workdir = None


class _Daemon:
    netns = None


class _Reboot:
    """What add_services reads of a switch's reboot (its config daemon, launcher and run directory)."""

    def __init__(self, rundir: Path) -> None:
        self.rundir, self.daemon = rundir, _Daemon()

    def launch(self, argv: list[str]) -> None:
        raise AssertionError("nothing is started here")


@pytest.fixture
def switch(tmp_path: Path) -> Iterator[tuple[grpc.Channel, Any, list[str]]]:
    (tmp_path / "config_db.json").write_text("{}\n")
    settings = AgentSettings(port=0, username="admin", password="pw", tls=False)
    fast = CallGate(LoginThrottle(base=0.001, cap=0.001, horizon=0.01))  # failed logins not slowed here
    server, gate = guarded_server("leaf1", "admin", "pw", gate=fast, open_methods=REFLECTION_METHODS)
    listed = add_services(server, settings, _Endpoint(), _Reboot(tmp_path), None)  # type: ignore[arg-type]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield channel, gate, listed
    finally:
        channel.close()
        server.stop(grace=None)


def _reflect(channel: grpc.Channel, service: str, request: Any, metadata: Any = None) -> Any:
    """One request on `service`'s ServerReflectionInfo (v1's messages are v1alpha's on the wire)."""
    call = channel.stream_stream(f"/{service}/ServerReflectionInfo",
                                 request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                                 response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    (answer,) = list(call(iter([request]), metadata=metadata, timeout=10))
    return answer


def test_both_versions_list_exactly_the_served_services_without_credentials(switch: Any) -> None:
    channel, _, listed = switch
    assert listed == SERVED
    for service in (V1, V1ALPHA):
        answer = _reflect(channel, service, reflection_pb2.ServerReflectionRequest(list_services=""))
        assert [s.name for s in answer.list_services_response.service] == SERVED
    assert list(ProtoReflectionDescriptorDatabase(channel).get_services()) == SERVED


def test_every_listed_service_is_served_and_nothing_else(switch: Any) -> None:
    """A listed method is answered by the switch (the guard asks for credentials); one of a service
    sonic-gnmi has and twin does not is not there."""
    channel, _, _ = switch
    pool = descriptor_pool.Default()
    for name in SERVED[:3]:
        for method in pool.FindServiceByName(name).methods:
            call = channel.unary_unary(f"/{name}/{method.name}", request_serializer=lambda m: b"",
                                       response_deserializer=lambda b: b)
            with pytest.raises(grpc.RpcError) as raised:
                call(b"", timeout=10)
            assert raised.value.code() in (grpc.StatusCode.UNAUTHENTICATED,  # SetPackage: PERMISSION_DENIED
                                           grpc.StatusCode.PERMISSION_DENIED), f"{name}/{method.name}"
    for path in NOT_SERVED:
        with pytest.raises(grpc.RpcError) as raised:
            channel.unary_unary(path)(b"", metadata=AUTH, timeout=10)
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED, path


def test_a_method_is_called_as_grpcurl_calls_it(switch: Any) -> None:
    """grpcurl's way: the service's file and its imports learnt by reflection, the request built from
    those descriptors, the answer read with them."""
    channel, _, _ = switch
    pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
    stat = pool.FindServiceByName("gnoi.file.File").FindMethodByName("Stat")
    request_class = message_factory.GetMessageClass(stat.input_type)
    response_class = message_factory.GetMessageClass(stat.output_type)
    call = channel.unary_unary("/gnoi.file.File/Stat", request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response_class.FromString)
    answer = call(request_class(path="/etc/sonic"), metadata=AUTH, timeout=10)
    assert [s.path for s in answer.stats] == ["/etc/sonic/config_db.json"]
    assert pool.FindServiceByName(V1).FindMethodByName("ServerReflectionInfo").input_type.full_name == \
        "grpc.reflection.v1.ServerReflectionRequest"
    assert pool.FindMessageTypeByName("gnmi.GetRequest").fields_by_name["path"].message_type.full_name == "gnmi.Path"


def test_a_symbol_the_switch_does_not_know_is_not_found(switch: Any) -> None:
    channel, _, _ = switch
    answer = _reflect(channel, V1, reflection_pb2.ServerReflectionRequest(file_containing_symbol="gnoi.os.OS"))
    assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_reflection_with_a_wrong_password_is_no_failed_login(switch: Any) -> None:
    """sonic-gnmi never looks at a reflection call's credentials: a client that sent wrong ones there
    is not slowed down on its next gNMI or gNOI call."""
    channel, gate, _ = switch
    wrong = (("username", "admin"), ("password", "nope"))
    for _ in range(5):
        _reflect(channel, V1ALPHA, reflection_pb2.ServerReflectionRequest(list_services=""), metadata=wrong)
    assert len(gate.throttle) == 0 and gate.running() == 0   # no address remembered for a failure
    call = channel.unary_unary("/gnoi.file.File/Stat", request_serializer=lambda m: m,
                               response_deserializer=lambda b: b)
    with pytest.raises(grpc.RpcError):
        call(b"\n\x01/", metadata=wrong, timeout=2)
    assert len(gate.throttle) == 1                          # where a gNOI call's wrong password is one


def test_calls_without_credentials_still_count_against_the_switchs_calls() -> None:
    gate = CallGate(max_calls=2, peer_calls=1)
    first = gate.arrive_open("10.0.0.1", 0.0)
    assert (first.outcome, first.at) == (Outcome.RUN, 0.0)
    assert gate.arrive_open("10.0.0.1", 0.0).outcome is Outcome.PEER_BUSY
    second = gate.arrive("10.0.0.2", True, 0.0)
    assert gate.arrive_open("10.0.0.3", 0.0).outcome is Outcome.BUSY
    gate.finished(first)
    gate.finished(second)
    assert gate.running() == 0 and len(gate.throttle) == 0
