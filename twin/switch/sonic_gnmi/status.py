"""The gRPC status a gNMI request ends with, as sonic-gnmi returns it.

sonic-gnmi returns `status.Error(code, msg)` where it chose a code and a plain Go error
elsewhere, which gRPC sends as UNKNOWN (most Set failures: GCU's refusal, a path that cannot
be patched). `GnmiStatus` carries both the code and the message, so handlers can raise it from
any depth and the servicer aborts the call with it.
"""

from __future__ import annotations

import grpc


class GnmiStatus(Exception):
    """A request refused with gRPC status `code` and `message`."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"


def unknown(message: str) -> GnmiStatus:
    """A plain Go error returned by sonic-gnmi: gRPC reports it as UNKNOWN."""
    return GnmiStatus(grpc.StatusCode.UNKNOWN, message)
