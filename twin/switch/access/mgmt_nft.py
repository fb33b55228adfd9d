"""Per-client connection limits on a switch's management ports, in its namespace's nftables.

A client address may open `RATE` new connections a second to the switch's gNMI and SSH ports after
a burst of `BURST`; further SYNs are dropped (TCP sends them again a second later). And it may hold
at most `CONNS` of them at once: one more is refused with a TCP reset. Without that cap a client
that keeps a call going on each connection (the idle and handshake limits of
twin.switch.access.grpc_guard close only silent ones) reached the switch's 1,024 connections
(grpc_guard.MAX_CONNECTIONS) in about 30 s and locked the host out.

Counting connections needs connection tracking, for these connections only: every other packet,
forwarded or the switch's own (BGP, BFD), is marked `notrack` before conntrack sees it, so the
switch's forwarding keeps no state. Applied by the agent once it has written every switch's state
tables (after `twin up` has returned: twin.switch.agent._limit_mgmt), in the background and at low
priority; again, replacing the table, when the agent restarts. A namespace's first table costs the
kernel about 17 ms (nf_tables and connection tracking set up in it), the `nft` process a few more.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field

from twin.host.netns_thread import run_in_netns
from twin.model.agent import AgentSwitch

TABLE = "twin_mgmt"
RATE, BURST = 32, 64  # new connections a second per client address, after a burst
CONNS = 128           # connections one client address holds at once to a switch's management ports
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
            "  chain untracked_in {\n"
            "    type filter hook prerouting priority raw; policy accept;\n"
            f"    tcp dport {{ {dports} }} fib daddr type local return\n"
            "    notrack\n"
            "  }\n"
            "  chain untracked_out {\n"
            "    type filter hook output priority raw; policy accept;\n"
            f"    tcp sport {{ {dports} }} return\n"
            "    notrack\n"
            "  }\n"
            "  chain input {\n"
            "    type filter hook input priority filter; policy accept;\n"
            f"    {syn} update @syn4 {{ ip saddr {limit} }} drop\n"
            f"    {syn} update @syn6 {{ ip6 saddr {limit} }} drop\n"
            f"    tcp dport {{ {dports} }} ct state new meter conns4 size 65535 {{ ip saddr ct count over {CONNS} }} "
            "reject with tcp reset\n"
            f"    tcp dport {{ {dports} }} ct state new meter conns6 size 65535 {{ ip6 saddr ct count over {CONNS} }} "
            "reject with tcp reset\n"
            "  }\n"
            "}\n")


@dataclass(frozen=True)
class Applied:
    """What `apply` did: the switches given the table, and those where it could not be set, each
    with the reason."""

    limited: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def own(self) -> int:
        """The switches in namespaces twin runs: those `apply` set the table in, or tried to."""
        return len(self.limited) + len(self.failed)


def apply(switches: Iterable[AgentSwitch], ports: Iterable[int]) -> Applied:
    """The table in every namespace twin runs a switch in (not a container's: its own business);
    the switches where it could not be set are logged with the reason."""
    text = rules(ports)
    limited: list[str] = []
    failed: list[str] = []
    own = [(sw.name, sw.netns) for sw in switches if sw.netns is not None and not sw.sonic]
    if shutil.which("nft") is None:
        log.warning("nft is not installed: no per-client connection limits on the management ports")
        return Applied(failed=[f"{name}: nft is not installed" for name, _ in own])
    for name, netns in own:
        try:
            done = run_in_netns(netns, functools.partial(_nft, text))
            reason = done.stderr.strip() if done.returncode != 0 else None
        except OSError as exc:   # its namespace is gone (the lab going down): the others still get theirs
            reason = str(exc)
        if reason is None:
            limited.append(name)
        else:
            failed.append(f"{name}: {reason}")
            log.warning("%s: no per-client connection limits on the management ports: %s", name, reason)
    return Applied(limited, failed)


def _nft(text: str) -> subprocess.CompletedProcess[str]:
    """`nft -f -` at the lowest priority, in the namespace of the thread that runs it (run_in_netns):
    `ip netns exec` around it, which also makes a mount namespace and mounts /sys in it, doubled
    its CPU (10 ms against 5 a switch on an idle machine; 18 ms under a 64 x 128 bring-up)."""
    return subprocess.run(["nice", "-n", "19", "nft", "-f", "-"], input=text, capture_output=True, text=True,
                          check=False)
