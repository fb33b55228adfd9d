"""A gRPC channel to a switch's gNMI/gNOI port as a SONiC client opens one: TLS trusting the certificate
the switch shows (pygnmi's skip_verify does the same), or plaintext where the lab says so, and the
username/password metadata every call carries (sonic-gnmi's authenticate)."""

from __future__ import annotations

import ssl
from typing import Any

import grpc

from twin.model.errors import GnmiError

Metadata = tuple[tuple[str, str], ...]


def credentials(target: dict[str, Any]) -> Metadata:
    """The call metadata for `target` (what `twin status` lists as a node's `gnmi`)."""
    return (("username", str(target["username"])), ("password", str(target["password"])))


def open_channel(name: str, target: dict[str, Any], timeout: float = 3.0) -> grpc.Channel:
    """A channel to `target`; GnmiError when the switch does not answer within `timeout` (TLS only:
    the certificate is read first)."""
    address = f"{target['host']}:{target['port']}"
    if target.get("insecure"):
        return grpc.insecure_channel(address)
    try:
        cert = ssl.get_server_certificate((str(target["host"]), int(target["port"])), timeout=timeout).encode()
    except OSError as exc:
        raise GnmiError(f"{name}: cannot reach {address}: {exc}") from None
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=cert))
