"""gNOI System as sonic-gnmi answers it (gnmi_server/gnoi_system.go), on a local grpc server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest

from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc
from twin.switch.gnoi.gnoi_pb.types import types_pb2
from twin.switch.gnoi.system import add_system_servicer
from twin.switch.restart.reboot import RebootInProgress, RebootState, SwitchReboot

AUTH = (("username", "admin"), ("password", "YourPaSsWoRd"))


class FakeSwitch:
    """Records reboots; one at a time, as the backend allows."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.current = RebootState()

    def start(self, method: str, reason: str) -> None:
        if self.current.active:
            raise RebootInProgress("leaf1")
        self.started.append((method, reason))
        self.current = RebootState(active=True, when_ns=time.time_ns(), reason=reason,
                                   count=self.current.count + 1, method=method)

    def state(self) -> RebootState:
        return self.current


def _serve(switch: FakeSwitch | None) -> Iterator[system_pb2_grpc.SystemStub]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    add_system_servicer(server, switch, "admin", "YourPaSsWoRd")
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield system_pb2_grpc.SystemStub(channel)
    finally:
        channel.close()
        server.stop(grace=None)


@pytest.fixture
def switch() -> FakeSwitch:
    return FakeSwitch()


@pytest.fixture
def stub(switch: FakeSwitch) -> Iterator[system_pb2_grpc.SystemStub]:
    yield from _serve(switch)


@pytest.fixture
def sonic_vs_stub() -> Iterator[system_pb2_grpc.SystemStub]:
    yield from _serve(None)


def _error(call: Any, *args: Any, **kwargs: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        result = call(*args, **kwargs)
        if isinstance(result, Iterator):
            list(result)
    return info.value


def _reboot(method: int, **fields: Any) -> system_pb2.RebootRequest:
    return system_pb2.RebootRequest(method=method, message="drill", **fields)


def test_time_is_nanoseconds_since_the_epoch(stub: system_pb2_grpc.SystemStub) -> None:
    before = time.time_ns()
    answer = stub.Time(system_pb2.TimeRequest(), metadata=AUTH).time
    assert before <= answer <= time.time_ns()


@pytest.mark.parametrize("metadata", [(), (("username", "admin"),), (("username", "admin"), ("password", "no")),
                                      (("username", "root"), ("password", "YourPaSsWoRd"))])
def test_every_authentication_failure_is_unauthenticated(stub: system_pb2_grpc.SystemStub,
                                                         metadata: tuple[tuple[str, str], ...]) -> None:
    """server.go's authenticate drops BasicAuthenAndAuthor's own error for its own."""
    for call, request in ((stub.Time, system_pb2.TimeRequest()), (stub.Reboot, _reboot(system_pb2.COLD))):
        err = _error(call, request, metadata=metadata)
        assert (err.code(), err.details()) == (grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")


@pytest.mark.parametrize("method", [system_pb2.UNKNOWN, system_pb2.POWERUP])
def test_reboot_method_not_supported(stub: system_pb2_grpc.SystemStub, switch: FakeSwitch, method: int) -> None:
    err = _error(stub.Reboot, _reboot(method), metadata=AUTH)
    assert (err.code(), err.details()) == (grpc.StatusCode.INVALID_ARGUMENT,
                                           "Invalid request: reboot method is not supported.")
    assert switch.started == []


def test_reboot_must_be_immediate(stub: system_pb2_grpc.SystemStub) -> None:
    err = _error(stub.Reboot, _reboot(system_pb2.COLD, delay=1), metadata=AUTH)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details() == "Invalid request: reboot is not immediate."


def test_cold_reboot_is_started_and_answered_at_once(stub: system_pb2_grpc.SystemStub, switch: FakeSwitch) -> None:
    assert stub.Reboot(_reboot(system_pb2.COLD), metadata=AUTH) == system_pb2.RebootResponse()
    assert switch.started == [("COLD", "drill")]


def test_second_reboot_while_one_runs_is_refused_as_the_backend_refuses_it(
        stub: system_pb2_grpc.SystemStub, switch: FakeSwitch) -> None:
    stub.Reboot(_reboot(system_pb2.COLD), metadata=AUTH)
    err = _error(stub.Reboot, _reboot(system_pb2.COLD), metadata=AUTH)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details() == ("Response Notification returned SWSS Error code: InvalidArgument, error = "
                             "Reboot not allowed at this time. Reboot or post-warmboot NSF in progress")
    assert len(switch.started) == 1


@pytest.mark.parametrize("method", [system_pb2.POWERDOWN, system_pb2.NSF])
def test_methods_the_backend_refuses(stub: system_pb2_grpc.SystemStub, method: int) -> None:
    err = _error(stub.Reboot, _reboot(method), metadata=AUTH)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().endswith("error = RebootThread: Start rx'd unsupported method")


def test_halt_is_not_emulated(stub: system_pb2_grpc.SystemStub, switch: FakeSwitch) -> None:
    err = _error(stub.Reboot, _reboot(system_pb2.HALT), metadata=AUTH)
    assert err.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "use COLD" in err.details()
    assert switch.started == []


def test_warm_reboot_is_started(stub: system_pb2_grpc.SystemStub, switch: FakeSwitch) -> None:
    assert stub.Reboot(_reboot(system_pb2.WARM), metadata=AUTH) == system_pb2.RebootResponse()
    assert switch.started == [("WARM", "drill")]
    assert stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=AUTH).method == system_pb2.WARM


def test_subcomponent_reset_is_answered_and_does_nothing(stub: system_pb2_grpc.SystemStub,
                                                         switch: FakeSwitch) -> None:
    path = types_pb2.Path(origin="openconfig", elem=[types_pb2.PathElem(name="components")])
    stub.Reboot(_reboot(system_pb2.COLD, subcomponents=[path]), metadata=AUTH)
    assert switch.started == []


def test_sonic_vs_switch_answers_unimplemented(sonic_vs_stub: system_pb2_grpc.SystemStub) -> None:
    err = _error(sonic_vs_stub.Reboot, _reboot(system_pb2.COLD), metadata=AUTH)
    assert err.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "docker-sonic-vs" in err.details()
    assert sonic_vs_stub.Time(system_pb2.TimeRequest(), metadata=AUTH).time > 0


def test_reboot_status_reports_the_last_reboot(stub: system_pb2_grpc.SystemStub, switch: FakeSwitch) -> None:
    assert not stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=AUTH).active
    stub.Reboot(_reboot(system_pb2.COLD), metadata=AUTH)
    running = stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=AUTH)
    assert (running.active, running.reason, running.count, running.method) == (True, "drill", 1, system_pb2.COLD)
    switch.current = replace(switch.current, active=False, succeeded=True)
    done = stub.RebootStatus(system_pb2.RebootStatusRequest(), metadata=AUTH)
    assert not done.active and done.status.status == system_pb2.RebootStatus.STATUS_SUCCESS


def test_cancel_reboot_is_the_backends_unimplemented_wrapped_in_internal(stub: system_pb2_grpc.SystemStub) -> None:
    err = _error(stub.CancelReboot, system_pb2.CancelRebootRequest(message="no"), metadata=AUTH)
    assert err.code() == grpc.StatusCode.INTERNAL
    assert err.details().endswith("error = Cancel reboot isn't supported")


def test_ping_and_traceroute_are_unimplemented(stub: system_pb2_grpc.SystemStub) -> None:
    err = _error(stub.Ping, system_pb2.PingRequest(destination="10.0.0.1"), metadata=AUTH)
    assert (err.code(), err.details()) == (grpc.StatusCode.UNIMPLEMENTED, "Method system.Ping is unimplemented.")
    err = _error(stub.Traceroute, system_pb2.TracerouteRequest(destination="10.0.0.1"), metadata=AUTH)
    assert (err.code(), err.details()) == (grpc.StatusCode.UNIMPLEMENTED, "Method system.Traceroute is unimplemented.")


def test_switch_control_processor_answers_empty(stub: system_pb2_grpc.SystemStub) -> None:
    answer = stub.SwitchControlProcessor(system_pb2.SwitchControlProcessorRequest(), metadata=AUTH)
    assert answer == system_pb2.SwitchControlProcessorResponse()


def test_set_package(stub: system_pb2_grpc.SystemStub) -> None:
    request = system_pb2.SetPackageRequest(package=system_pb2.Package(filename="/tmp/sonic.bin"))
    err = _error(stub.SetPackage, iter([request]), metadata=())
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert err.details() == "authentication failed: rpc error: code = Unauthenticated desc = Unauthenticated"
    assert _error(stub.SetPackage, iter([request]), metadata=AUTH).code() == grpc.StatusCode.UNIMPLEMENTED


def test_kill_process_checks_then_unimplemented(stub: system_pb2_grpc.SystemStub) -> None:
    term = system_pb2.KillProcessRequest.SIGNAL_TERM
    err = _error(stub.KillProcess, system_pb2.KillProcessRequest(pid=3, name="bgp", signal=term), metadata=AUTH)
    assert (err.code(), err.details()) == (grpc.StatusCode.UNIMPLEMENTED, "Pid option is not implemented")
    err = _error(stub.KillProcess, system_pb2.KillProcessRequest(name="bgp"), metadata=AUTH)
    assert err.details().startswith("KillProcess only supports SIGNAL_TERM")
    err = _error(stub.KillProcess, system_pb2.KillProcessRequest(name="bgp", signal=term), metadata=AUTH)
    assert err.code() == grpc.StatusCode.UNIMPLEMENTED


def test_wire_names_are_gnois() -> None:
    service = system_pb2.DESCRIPTOR.services_by_name["System"]
    assert service.full_name == "gnoi.system.System"
    assert {"Time", "Reboot", "RebootStatus", "CancelReboot"} <= {m.name for m in service.methods}


class _Daemon:
    """What SwitchReboot reads of a config daemon before it reboots."""

    name, netns, rundir = "leaf1", "tw.x.leaf1", Path("/nonexistent")
    ifmap: ClassVar[dict[str, str]] = {"Ethernet0": "eth1"}


def test_switch_reboot_runs_one_at_a_time_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    reboot = SwitchReboot(_Daemon(), ["Ethernet0", "Ethernet4"], launch=lambda argv: None)  # type: ignore[arg-type]
    assert reboot.kernel_ports == ["eth1", "Ethernet4"]
    monkeypatch.setattr(reboot, "reboot", lambda method: release.wait(10))
    reboot.start("COLD", "drill")
    assert reboot.state().active
    with pytest.raises(RebootInProgress):
        reboot.start("COLD", "again")
    release.set()
    reboot.wait(10)
    state = reboot.state()
    assert (state.active, state.succeeded, state.count, state.reason) == (False, True, 1, "drill")


def test_a_failed_reboot_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    reboot = SwitchReboot(_Daemon(), [], launch=lambda argv: None)  # type: ignore[arg-type]

    def fail(method: str) -> None:
        raise OSError("config_db.json: no such file")

    monkeypatch.setattr(reboot, "reboot", fail)
    reboot.start("COLD", "drill")
    reboot.wait(10)
    assert reboot.state().succeeded is False and "config_db.json" in reboot.state().message
