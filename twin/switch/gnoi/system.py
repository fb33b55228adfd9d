"""gNOI System on a twin switch, answering as sonic-gnmi answers (gnmi_server/gnoi_system.go).

sonic-gnmi registers gnoi.system.System beside gNMI (gnmi_server/server.go: registerAllServices,
when native or translib writes are enabled) on the same port. Its RPCs and twin's answers:
- Time: nanoseconds since the epoch.
- Reboot: validated as ValidateRebootRequest does, then handed to the reboot backend
  (sonic-framework rebootbackend), which answers at once and reboots in the background. COLD and
  WARM reboot the twin switch (twin.switch.restart.reboot): its management address goes silent,
  COLD boots from the saved config, WARM restarts the control plane while the kernel keeps
  forwarding. POWERDOWN and NSF are refused as the backend refuses them; HALT, which the backend
  accepts, is UNIMPLEMENTED here (twin cannot power a halted switch up again). A switch twin only
  fronts (docker-sonic-vs) answers UNIMPLEMENTED.
- RebootStatus: the backend's status of the last reboot; CancelReboot: the backend's
  "not supported", wrapped as sonic-gnmi wraps it.
- SwitchControlProcessor: an empty answer; Ping, Traceroute: UNIMPLEMENTED, as sonic-gnmi.
- SetPackage (sonic-installer): validated as sonic-gnmi does, then UNIMPLEMENTED: a twin switch
  has no SONiC image.
- KillProcess: validated as sonic-gnmi does (no pid, SIGNAL_TERM only), then the service is
  stopped or restarted as sonic-host-services' systemd module does it over D-Bus
  (twin.switch.restart.services: `bgp` is FRR, restarted as `twin frr restart` restarts it; any
  other name is refused in the module's words, which sonic-gnmi returns as an UNKNOWN error).
  A switch twin only fronts answers UNIMPLEMENTED.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import NoReturn, Protocol

import grpc

from twin.switch.access.auth import PasswordAuth
from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc
from twin.switch.restart.reboot import RebootInProgress, RebootState

SONIC_VS_REBOOT = ("twin fronts this docker-sonic-vs switch over its redis; rebooting it is the container's "
                   "own business (docker restart), not twin's")
NOT_EMULATED = {
    system_pb2.HALT: "twin cannot power a halted switch up again (gNOI POWERUP is refused); use COLD",
}
BACKEND_METHODS = (system_pb2.COLD, system_pb2.HALT, system_pb2.WARM)  # RebootThread::Start accepts these
BACKEND_BUSY = "Reboot not allowed at this time. Reboot or post-warmboot NSF in progress"
BACKEND_METHOD = "RebootThread: Start rx'd unsupported method"
SONIC_VS_SERVICES = ("twin fronts this docker-sonic-vs switch over its redis; its services are the container's "
                     "own business (supervisorctl), not twin's")
NO_CANCEL = ("rpc error: code = Unimplemented desc = Response Notification returned SWSS Error code: "
             "Unimplemented, error = Cancel reboot isn't supported")


class Rebooter(Protocol):
    """What the servicer needs of a switch's reboot (twin.switch.restart.reboot.SwitchReboot)."""

    def start(self, method: str, reason: str) -> None: ...

    def state(self) -> RebootState: ...


class Services(Protocol):
    """What KillProcess needs of a switch's services (twin.switch.restart.services.SwitchServices):
    None, or the host module's error."""

    def stop_service(self, service: str) -> str | None: ...

    def restart_service(self, service: str) -> str | None: ...


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    context.abort(code, message)
    raise AssertionError("context.abort returns only by raising")


def _backend_error(code: grpc.StatusCode, message: str) -> tuple[grpc.StatusCode, str]:
    """sonic-gnmi's sendRebootReqOnNotifCh: a backend error code and its MESSAGE field, worded
    with Go's name of the code (SwssToErrorCode: SWSS_RC_IN_USE and _INVALID_PARAM are
    InvalidArgument)."""
    go_name = "".join(part.capitalize() for part in code.name.split("_"))
    return code, f"Response Notification returned SWSS Error code: {go_name}, error = {message}"


def validate_reboot(request: system_pb2.RebootRequest) -> str | None:
    """gnoi_system.go: ValidateRebootRequest; the problem, or None."""
    if request.method in (system_pb2.UNKNOWN, system_pb2.POWERUP):
        return "Invalid request: reboot method is not supported."
    if request.delay > 0:
        return "Invalid request: reboot is not immediate."
    return None


def reboot_status(state: RebootState) -> system_pb2.RebootStatusResponse:
    """sonic-framework rebootbackend's RebootStatusResponse for the last reboot."""
    response = system_pb2.RebootStatusResponse(active=state.active, when=state.when_ns, reason=state.reason,
                                               count=state.count)
    if state.method:
        response.method = system_pb2.RebootMethod.Value(state.method)
    if state.succeeded is not None:
        response.status.status = (system_pb2.RebootStatus.STATUS_SUCCESS if state.succeeded
                                  else system_pb2.RebootStatus.STATUS_FAILURE)
        response.status.message = state.message
    return response


class SystemServicer(system_pb2_grpc.SystemServicer):
    """gnoi.system.System of one switch; `switch` None for a switch twin only fronts."""

    def __init__(self, switch: Rebooter | None, username: str, password: str,
                 services: Services | None = None) -> None:
        self.switch = switch
        self.services = services
        self.auth = PasswordAuth(username, password)

    def _authentic(self, context: grpc.ServicerContext) -> bool:
        return self.auth.authentic(context)

    def _auth(self, context: grpc.ServicerContext) -> None:
        """server.go authenticate (twin.switch.access.auth)."""
        self.auth.require(context)

    def _switch(self, context: grpc.ServicerContext) -> Rebooter:
        if self.switch is None:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED, SONIC_VS_REBOOT)
        return self.switch

    def Time(self, request: system_pb2.TimeRequest, context: grpc.ServicerContext) -> system_pb2.TimeResponse:
        """gnoi_system.go: Time."""
        self._auth(context)
        return system_pb2.TimeResponse(time=time.time_ns())

    def Reboot(self, request: system_pb2.RebootRequest, context: grpc.ServicerContext) -> system_pb2.RebootResponse:
        """gnoi_system.go: Reboot, then rebootbe.cpp: handle_reboot_request for a local reboot."""
        self._auth(context)
        problem = validate_reboot(request)
        if problem is not None:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, problem)
        switch = self._switch(context)
        if request.subcomponents:  # a module reset: sonic-gnmi answers it and does nothing
            return system_pb2.RebootResponse()
        if switch.state().active:
            _abort(context, *_backend_error(grpc.StatusCode.INVALID_ARGUMENT, BACKEND_BUSY))
        if request.method not in BACKEND_METHODS:
            _abort(context, *_backend_error(grpc.StatusCode.INVALID_ARGUMENT, BACKEND_METHOD))
        if request.method in NOT_EMULATED:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED, NOT_EMULATED[request.method])
        try:
            switch.start(system_pb2.RebootMethod.Name(request.method), request.message)
        except RebootInProgress:
            _abort(context, *_backend_error(grpc.StatusCode.INVALID_ARGUMENT, BACKEND_BUSY))
        return system_pb2.RebootResponse()

    def RebootStatus(self, request: system_pb2.RebootStatusRequest,
                     context: grpc.ServicerContext) -> system_pb2.RebootStatusResponse:
        """gnoi_system.go: RebootStatus; rebootbe.cpp: handle_status_request."""
        self._auth(context)
        return reboot_status(self._switch(context).state())

    def CancelReboot(self, request: system_pb2.CancelRebootRequest,
                     context: grpc.ServicerContext) -> system_pb2.CancelRebootResponse:
        """gnoi_system.go: CancelReboot wraps the backend's UNIMPLEMENTED (rebootbe.cpp:
        handle_cancel_request) in INTERNAL."""
        self._auth(context)
        self._switch(context)
        _abort(context, grpc.StatusCode.INTERNAL, NO_CANCEL)

    def Ping(self, request: system_pb2.PingRequest,
             context: grpc.ServicerContext) -> Iterator[system_pb2.PingResponse]:
        """gnoi_system.go: Ping."""
        self._auth(context)
        _abort(context, grpc.StatusCode.UNIMPLEMENTED, "Method system.Ping is unimplemented.")

    def Traceroute(self, request: system_pb2.TracerouteRequest,
                   context: grpc.ServicerContext) -> Iterator[system_pb2.TracerouteResponse]:
        """gnoi_system.go: Traceroute."""
        self._auth(context)
        _abort(context, grpc.StatusCode.UNIMPLEMENTED, "Method system.Traceroute is unimplemented.")

    def SwitchControlProcessor(self, request: system_pb2.SwitchControlProcessorRequest,
                               context: grpc.ServicerContext) -> system_pb2.SwitchControlProcessorResponse:
        """gnoi_system.go: SwitchControlProcessor answers empty."""
        self._auth(context)
        return system_pb2.SwitchControlProcessorResponse()

    def SetPackage(self, request_iterator: Iterator[system_pb2.SetPackageRequest],
                   context: grpc.ServicerContext) -> system_pb2.SetPackageResponse:
        """gnoi_system.go: SetPackage wraps an authentication failure in PERMISSION_DENIED; the
        install itself (sonic-installer) has nothing to install on a twin switch."""
        if not self._authentic(context):
            _abort(context, grpc.StatusCode.PERMISSION_DENIED,
                   "authentication failed: rpc error: code = Unauthenticated desc = Unauthenticated")
        _abort(context, grpc.StatusCode.UNIMPLEMENTED,
               "twin's switches run no SONiC image: there is nothing for sonic-installer to install")

    def KillProcess(self, request: system_pb2.KillProcessRequest,
                    context: grpc.ServicerContext) -> system_pb2.KillProcessResponse:
        """gnoi_system.go: KillProcess's checks, then KillOrRestartProcess: the service restarted or
        stopped (twin.switch.restart.services); a refusal is a plain Go error, so UNKNOWN."""
        self._auth(context)
        if request.pid != 0:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED, "Pid option is not implemented")
        if request.signal != system_pb2.KillProcessRequest.SIGNAL_TERM:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED,
                   "KillProcess only supports SIGNAL_TERM (option 1) for graceful process termination. "
                   "Please specify SIGNAL_TERM")
        if self.services is None:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED, SONIC_VS_SERVICES)
        act = self.services.restart_service if request.restart else self.services.stop_service
        error = act(request.name)
        if error is not None:
            _abort(context, grpc.StatusCode.UNKNOWN, error)
        return system_pb2.KillProcessResponse()


def add_system_servicer(server: grpc.Server, switch: Rebooter | None, username: str, password: str,
                        services: Services | None = None) -> None:
    """Serve gnoi.system.System on `server` (the switch's gNMI server, as sonic-gnmi does);
    `switch` and `services` None for a docker-sonic-vs switch."""
    system_pb2_grpc.add_SystemServicer_to_server(SystemServicer(switch, username, password, services), server)
