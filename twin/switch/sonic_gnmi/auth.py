"""Password authentication as sonic-gnmi's server.go `authenticate` does it, for gNMI and gNOI.

gRPC metadata `username` and `password`. With password the only method enabled, authenticate
drops BasicAuthenAndAuthor's own errors (No Username Provided, PERMISSION_DENIED "Invalid
Password", ...) and every failure is UNAUTHENTICATED "Unauthenticated".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc


@dataclass(frozen=True)
class PasswordAuth:
    """The lab's one user."""

    username: str
    password: str

    def authentic(self, context: grpc.ServicerContext) -> bool:
        """Whether the call carries this user's name and password."""
        meta: dict[str, Any] = {}
        for key, value in context.invocation_metadata():
            meta.setdefault(key, value)
        return bool(meta.get("username") == self.username and meta.get("password") == self.password)

    def require(self, context: grpc.ServicerContext) -> None:
        """End the call with UNAUTHENTICATED "Unauthenticated" unless it is authentic."""
        if not self.authentic(context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")
