"""gNOI System.KillProcess as sonic-gnmi answers it (gnmi_server/gnoi_system.go: KillProcess, then
sonic-host-services' host_modules/systemd_service.py over D-Bus), on a local grpc server: `bgp` is
a twin switch's FRR, every other service is refused in the host module's words."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from twin.model.errors import RuntimeBackendError
from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc
from twin.switch.gnoi.system import add_system_servicer
from twin.switch.restart import services as services_module
from twin.switch.restart.frr_restart import FrrRestart
from twin.switch.restart.services import SwitchServices, refusal

AUTH = (("username", "admin"), ("password", "YourPaSsWoRd"))
TERM = system_pb2.KillProcessRequest.SIGNAL_TERM


class _Daemon:
    """What SwitchServices reads of a config daemon."""

    def __init__(self, rundir: Path) -> None:
        self.name, self.netns, self.rundir = "leaf1", "tw.x.leaf1", rundir
        self.templates = Path("/templates")
        self.lock = threading.RLock()


class Frr:
    """Records FRR's stops and restarts (frr_restart's), and whether the config daemon's lock was held."""

    def __init__(self, daemon: _Daemon, fail: bool = False) -> None:
        self.daemon, self.fail = daemon, fail
        self.calls: list[tuple[Any, ...]] = []

    def _locked(self) -> bool:
        return bool(self.daemon.lock._is_owned())  # type: ignore[attr-defined]

    def stop(self, rundir: Path, netns: str) -> list[str]:
        self.calls.append(("stop", rundir, netns, self._locked()))
        for pidfile in rundir.glob("*.pid"):  # a stopped daemon takes its pid file along
            pidfile.unlink()
        return ["zebra (pid 10)", "bgpd (pid 11)"]

    def restart(self, name: str, netns: str, rundir: Path, daemons: list[str], launch: Any,
                templates: Path | None) -> FrrRestart:
        self.calls.append(("restart", name, netns, rundir, daemons, templates, self._locked()))
        if self.fail:
            raise RuntimeBackendError("FRR rejected frr.conf: line 3")
        return FrrRestart(switch=name, started=daemons)


@pytest.fixture
def daemon(tmp_path: Path) -> _Daemon:
    for name in ("zebra", "bgpd", "bfdd"):
        (tmp_path / f"{name}.pid").write_text("1\n")
    return _Daemon(tmp_path)


@pytest.fixture
def frr(daemon: _Daemon, monkeypatch: pytest.MonkeyPatch) -> Frr:
    recorder = Frr(daemon)
    monkeypatch.setattr(services_module, "stop_frr", recorder.stop)
    monkeypatch.setattr(services_module, "restart_frr", recorder.restart)
    return recorder


def _serve(services: SwitchServices | None) -> Iterator[system_pb2_grpc.SystemStub]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    add_system_servicer(server, None, "admin", "YourPaSsWoRd", services)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield system_pb2_grpc.SystemStub(channel)
    finally:
        channel.close()
        server.stop(grace=None)


@pytest.fixture
def stub(daemon: _Daemon, frr: Frr) -> Iterator[system_pb2_grpc.SystemStub]:
    yield from _serve(SwitchServices(daemon, lambda argv: None))  # type: ignore[arg-type]


def _kill(stub: system_pb2_grpc.SystemStub, name: str, restart: bool, **fields: Any) -> grpc.RpcError | None:
    request = system_pb2.KillProcessRequest(name=name, restart=restart, **{"signal": TERM, **fields})
    try:
        assert stub.KillProcess(request, metadata=AUTH) == system_pb2.KillProcessResponse()
    except grpc.RpcError as error:
        return error
    return None


@pytest.mark.parametrize(("name", "restart", "message"), [
    ("gnmi", False, "Dbus does not support gnmi service management"),        # sonic-mgmt's own cases
    ("nonexistent", False, "Dbus does not support nonexistent service management"),
    ("", False, "Dbus stop_service called with no service specified"),
    ("snmp", True, "Dbus does not support snmp service restart"),            # no counterpart on a twin switch
    ("swss", False, "Dbus does not support swss service management"),
    ("", True, "Dbus restart_service called with no service specified"),
])
def test_services_without_a_counterpart_are_refused_as_the_host_module_refuses_them(
        stub: system_pb2_grpc.SystemStub, frr: Frr, name: str, restart: bool, message: str) -> None:
    error = _kill(stub, name, restart)
    assert error is not None and (error.code(), error.details()) == (grpc.StatusCode.UNKNOWN, message)
    assert frr.calls == []


def test_restart_bgp_restarts_frr_as_twin_frr_restart_does(stub: system_pb2_grpc.SystemStub, frr: Frr,
                                                           daemon: _Daemon) -> None:
    assert _kill(stub, "bgp", restart=True) is None
    assert frr.calls == [("restart", "leaf1", "tw.x.leaf1", daemon.rundir, ["zebra", "bgpd", "bfdd"],
                          Path("/templates"), True)]


def test_stop_bgp_stops_frr_and_a_restart_starts_what_it_stopped(stub: system_pb2_grpc.SystemStub, frr: Frr,
                                                                 daemon: _Daemon) -> None:
    assert _kill(stub, "bgp", restart=False) is None
    assert frr.calls == [("stop", daemon.rundir, "tw.x.leaf1", True)]
    assert _kill(stub, "bgp", restart=True) is None  # the pid files went with the daemons
    assert frr.calls[-1][4] == ["zebra", "bgpd", "bfdd"]


def test_a_failed_restart_is_the_services_error(daemon: _Daemon, frr: Frr) -> None:
    frr.fail = True
    for stub in _serve(SwitchServices(daemon, lambda argv: None)):  # type: ignore[arg-type]
        error = _kill(stub, "bgp", restart=True)
        assert error is not None and (error.code(), error.details()) == (
            grpc.StatusCode.UNKNOWN, "Job for bgp.service failed: FRR rejected frr.conf: line 3")


def test_pid_and_signal_are_checked_first(stub: system_pb2_grpc.SystemStub, frr: Frr) -> None:
    error = _kill(stub, "bgp", restart=True, pid=3)
    assert error is not None and (error.code(), error.details()) == (grpc.StatusCode.UNIMPLEMENTED,
                                                                     "Pid option is not implemented")
    error = _kill(stub, "bgp", restart=True, signal=system_pb2.KillProcessRequest.SIGNAL_UNSPECIFIED)
    assert error is not None and error.code() == grpc.StatusCode.UNIMPLEMENTED   # sonic-mgmt test_invalid_signal
    assert error.details() == ("KillProcess only supports SIGNAL_TERM (option 1) for graceful process termination. "
                               "Please specify SIGNAL_TERM")
    error = _kill(stub, "bgp", restart=True, signal=system_pb2.KillProcessRequest.SIGNAL_KILL)
    assert error is not None and error.code() == grpc.StatusCode.UNIMPLEMENTED
    assert frr.calls == []


def test_a_fronted_switch_answers_unimplemented() -> None:
    for stub in _serve(None):
        error = _kill(stub, "bgp", restart=True)
        assert error is not None and error.code() == grpc.StatusCode.UNIMPLEMENTED
        assert "docker-sonic-vs" in error.details()


def test_kill_process_is_authenticated(stub: system_pb2_grpc.SystemStub, frr: Frr) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        stub.KillProcess(system_pb2.KillProcessRequest(name="bgp", restart=True, signal=TERM))
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert frr.calls == []


def test_only_bgp_has_a_counterpart() -> None:
    assert refusal("restart_service", "bgp") is None
    assert refusal("stop_service", "bgp") is None
    assert refusal("stop_service", "BGP") == "Dbus does not support BGP service management"
