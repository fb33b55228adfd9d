"""What starting a Linux node shares across kinds (twin's switch, an FRR router, a server): its links
brought up, and errors that name the node."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan


def links_up(node: NodePlan) -> list[str]:
    """`ip -b` lines: the loopback and every interface of the node up, addresses left to others."""
    return ["link set dev lo up", *(f"link set dev {i.kernel} up" for i in node.interfaces)]


@contextmanager
def named(node: str) -> Iterator[None]:
    """A RuntimeBackendError raised inside names the node."""
    try:
        yield
    except RuntimeBackendError as exc:
        raise RuntimeBackendError(f"{node}: {exc}") from None
