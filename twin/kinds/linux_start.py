"""What starting a Linux node shares across kinds (twin's switch, an FRR router, a server): its links
brought up, errors that name the node, and under containerlab the same set-up as `exec:` lines
(containerlab runs them without a shell) with FRR started by Debian's init script."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan

FRR_INIT = "/usr/lib/frr/frrinit.sh"   # starts watchfrr, which applies /etc/frr/frr.conf with `vtysh -b`


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


def sysctl_commands(values: Mapping[str, str]) -> list[str]:
    """One `sysctl -w` per setting, so containerlab's log names the one that failed."""
    return [f"sysctl -w {key}={value}" for key, value in values.items()]


def ip_commands(batch: list[str]) -> list[str]:
    """`ip -b` batch lines as separate `ip` commands (containerlab runs exec lines without a shell)."""
    return [f"ip {line}" for line in batch]
