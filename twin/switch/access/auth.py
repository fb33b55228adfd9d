"""Password authentication as sonic-gnmi's server.go `authenticate` does it, for gNMI and gNOI.

gRPC metadata `username` and `password`. With password the only method enabled, authenticate
drops BasicAuthenAndAuthor's own errors (No Username Provided, PERMISSION_DENIED "Invalid
Password", ...) and every failure is UNAUTHENTICATED "Unauthenticated".
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
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
        return self.authentic_metadata(meta)

    def authentic_metadata(self, meta: Mapping[str, Any]) -> bool:
        """Whether metadata (each key's first value) carries this user's name and password."""
        username, password = meta.get("username"), meta.get("password")
        return (isinstance(username, str) and isinstance(password, str)
                and hmac.compare_digest(username.encode(), self.username.encode())
                and hmac.compare_digest(password.encode(), self.password.encode()))

    def require(self, context: grpc.ServicerContext) -> None:
        """End the call with UNAUTHENTICATED "Unauthenticated" unless it is authentic."""
        if not self.authentic(context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")
