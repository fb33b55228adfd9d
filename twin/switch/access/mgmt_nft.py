"""Per-client connection limits on a switch's management ports, in its namespace's nftables.

A client address may open `RATE` new connections a second to the switch's gNMI and SSH ports after
a burst of `BURST`; further SYNs are dropped (TCP sends them again a second later). With the gRPC
server closing a connection that finishes no handshake within 10 s (twin.switch.access.grpc_guard) and
sshd's MaxStartups (twin.switch.cli.ssh_logins), one address holds at most about BURST + 10 x RATE
connections that never log in, so a flood from one GPU server leaves the switch's other clients
their share of its connections (grpc_guard.MAX_CONNECTIONS). The rules keep no connection state
(no conntrack): the switch's forwarding is not touched. Applied once the agent is ready, in the
background and at low priority; again, replacing the table, when the agent restarts.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Iterable

from twin.model.agent import AgentSwitch

TABLE = "twin_mgmt"
RATE, BURST = 32, 64  # new connections a second per client address, after a burst
log = logging.getLogger("twin.mgmt_nft")


def rules(ports: Iterable[int]) -> str:
    """The table, replacing one left by an earlier agent (add, delete, define: one transaction)."""
    dports = ", ".join(str(p) for p in sorted(set(ports)))
    limit = f"limit rate over {RATE}/second burst {BURST} packets"
    syn = f"tcp dport {{ {dports} }} tcp flags & (syn | ack) == syn"
    return (f"add table inet {TABLE}\n"
            f"delete table inet {TABLE}\n"
            f"table inet {TABLE} {{\n"
            "  set syn4 { type ipv4_addr; size 65535; flags dynamic,timeout; timeout 1m; }\n"
            "  set syn6 { type ipv6_addr; size 65535; flags dynamic,timeout; timeout 1m; }\n"
            "  chain input {\n"
            "    type filter hook input priority filter; policy accept;\n"
            f"    {syn} update @syn4 {{ ip saddr {limit} }} drop\n"
            f"    {syn} update @syn6 {{ ip6 saddr {limit} }} drop\n"
            "  }\n"
            "}\n")


def apply(switches: Iterable[AgentSwitch], ports: Iterable[int]) -> list[str]:
    """The table in every namespace twin runs a switch in (not a container's: its own business);
    the switches where it could not be set, each with the reason, also logged."""
    text = rules(ports)
    failed: list[str] = []
    if shutil.which("nft") is None:
        log.warning("nft is not installed: no per-client connection limits on the management ports")
        return ["nft is not installed"]
    for sw in switches:
        if sw.netns is None or sw.sonic:
            continue
        done = subprocess.run(["nice", "-n", "19", "ip", "netns", "exec", sw.netns, "nft", "-f", "-"], input=text,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            failed.append(f"{sw.name}: {done.stderr.strip()}")
            log.warning("%s: no per-client connection limits on the management ports: %s", sw.name,
                        done.stderr.strip())
    return failed
