"""What `twin up` holds back until every node has started: the switches' ports, and bfdd.

A SONiC switch boots its routing stack first and syncd brings its ports up afterwards; twin does
the same across the lab: every switch's ports stay down until every node's FRR runs, then all come
up at once. Each BGP session then opens as its link comes up (bgpd tracks its peer's reachability)
to a peer that is already listening.

bfdd starts once its switch's BGP sessions are Established (or BGP_SETTLE_S has passed). FRR 8.4's
bgpd registers a session's BFD peer before the BGP session is up, without an interface, and
registers it again with the interface when the session comes up: bfdd deletes the first BFD
session and makes a new one with a new discriminator. When the two BFD ends had already
exchanged packets, the far end keeps answering the deleted discriminator, is dropped ("no session
found") and waits out the detection time (3 s at BFD's 1 s pre-Up rate), or, when it was Up, it
goes Down and takes BGP down with it (Cease/BFD Down). Measured on the default lab, that was the
difference between a bring-up of 4.5 s and one of 6.5 s, most runs. Started once BGP is up, bfdd
is registered every peer with its interface from the start. Where a BGP session does not come up
in time, bfdd starts anyway: that session's BFD peer is then registered twice, as on SONiC.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from twin.host.shell import ip_batch
from twin.model import phases
from twin.runtime.wiring import WORKERS, node_netns

BGP_SETTLE_S = 3.0  # at most this long from the ports' coming up to bfdd's start
MAX_WAITING = 64    # switches waiting for their BGP sessions at once


@dataclass
class HeldStart:
    """Filled in as nodes start (node -> what is left), released once all have."""

    ports: dict[str, list[str]] = field(default_factory=dict)     # `ip -b` lines bringing ports up
    daemons: dict[str, Callable[[], None]] = field(default_factory=dict)  # starts what was held

    def release(self, lab: str) -> None:
        """Every held port up at once, then every held daemon started, each as its switch's BGP
        sessions come up; RuntimeBackendError when one does not start."""
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            list(pool.map(lambda node: ip_batch(self.ports[node], netns=node_netns(lab, node)),
                          sorted(n for n, lines in self.ports.items() if lines)))
        if not self.daemons:
            return
        recorder = phases.current()

        def start(node: str) -> None:
            with phases.recording(recorder):
                self.daemons[node]()
                phases.reach("daemon_launch")

        with ThreadPoolExecutor(max_workers=min(len(self.daemons), MAX_WAITING)) as pool:
            list(pool.map(start, sorted(self.daemons)))
