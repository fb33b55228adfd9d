"""twin's gNOI System client for one switch (twin.gnmi.channel: as a SONiC gNOI client connects), and
the reboot calls twin makes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import grpc

from twin.gnmi.channel import credentials, open_channel
from twin.host.poll import poll_until
from twin.model.errors import GnmiError
from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc

CALL_TIMEOUT_S = 3.0


class SystemClient:
    """gnoi.system.System of one switch; `target` is what `twin status` lists as `gnmi`."""

    def __init__(self, name: str, target: dict[str, Any]) -> None:
        self.name = name
        self.target = target
        self.metadata = credentials(target)
        self._stub: system_pb2_grpc.SystemStub | None = None

    def _system(self, timeout: float = CALL_TIMEOUT_S) -> system_pb2_grpc.SystemStub:
        if self._stub is None:
            self._stub = system_pb2_grpc.SystemStub(open_channel(self.name, self.target, timeout))
        return self._stub

    def reset(self) -> None:
        """Forget the channel: the next call connects afresh."""
        self._stub = None

    def reboot(self, method: str, message: str) -> None:
        """System.Reboot with `method` (COLD, WARM, ...); GnmiError with the switch's answer when refused."""
        request = system_pb2.RebootRequest(method=system_pb2.RebootMethod.Value(method), message=message)
        try:
            self._system().Reboot(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as exc:
            raise GnmiError(f"{self.name}: gNOI Reboot {method} refused: {exc.code().name} {exc.details()}") from None

    def reboot_status(self, timeout: float = CALL_TIMEOUT_S) -> system_pb2.RebootStatusResponse | None:
        """System.RebootStatus; None when the switch does not answer (it is rebooting)."""
        try:
            status: system_pb2.RebootStatusResponse = self._system(timeout).RebootStatus(
                system_pb2.RebootStatusRequest(), metadata=self.metadata, timeout=timeout)
        except (grpc.RpcError, GnmiError):
            return None
        return status


@dataclass
class RebootWatch:
    """What await_reboot saw: when the switch stopped answering and answered again (time.time()), and
    when it first answered with its reboot over."""

    silent_from: float | None = None
    answered_again: float | None = None
    done_at: float | None = None

    @property
    def silent_s(self) -> float | None:
        if self.silent_from is None or self.answered_again is None:
            return None
        return self.answered_again - self.silent_from


def await_reboot(client: SystemClient, timeout: float, every: float = 0.2) -> RebootWatch:
    """Until the switch answers RebootStatus with no reboot active, at most `timeout` s."""
    watch = RebootWatch()

    def over() -> bool:
        asked = time.time()
        status = client.reboot_status(timeout=every * 2)
        now = time.time()
        if status is None:
            client.reset()  # a fresh channel once the switch answers again
            if watch.silent_from is None:
                watch.silent_from = asked
            return False
        if watch.silent_from is not None and watch.answered_again is None:
            watch.answered_again = now
        if status.active:
            return False
        watch.done_at = now
        return True

    poll_until(over, timeout, every)
    return watch
