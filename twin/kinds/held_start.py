"""What `twin up` holds back until every node has started: bfdd, started once its switch's BGP
sessions are Established (or BGP_SETTLE_S has passed).

FRR 8.4's bgpd registers a session's BFD peer before the BGP session is up, without an interface,
and registers it again with the interface when the session comes up: bfdd deletes the first BFD
session and makes a new one with a new discriminator. When the two BFD ends had already exchanged
packets, the far end keeps answering the deleted discriminator, is dropped ("no session found") and
waits out the detection time (3 s at BFD's 1 s rate before Up); when it was already Up, it goes
Down and takes BGP down with it (Cease/BFD Down). Which of those happened varied from run to run:
the default lab was healthy after 4.5 s or after 6.5 s, about half the time each. Started once BGP
is up, bfdd is asked for every peer once, with its interface. Where a BGP session is not up in
time, bfdd starts anyway, and that session's BFD peer is registered twice, as on SONiC.

Holding the switches' ports down until every node ran was tried as well (SONiC's syncd brings ports
up after the routing stack): it did not shorten the default lab's bring-up, and at 64 x 128, with
8,192 sessions opening at once, the load average reached 700 and the lab was not healthy after 30
minutes (started 8 nodes at a time, it is healthy in about 6).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from twin.model import phases

HELD_DAEMONS = ("bfdd",)  # started once their switch's BGP sessions are up (see above)
BGP_SETTLE_S = 3.0  # at most this long from every node's start to a held bfdd's
MAX_WAITING = 64    # switches waiting for their BGP sessions at once


@dataclass
class HeldStart:
    """Filled in as nodes start (node -> what starts its held daemons), released once all have."""

    daemons: dict[str, Callable[[], None]] = field(default_factory=dict)

    def release(self) -> None:
        """Every held daemon started, each as its switch's BGP sessions come up; RuntimeBackendError
        when one does not start."""
        if not self.daemons:
            return
        recorder = phases.current()

        def start(node: str) -> None:
            with phases.recording(recorder):
                self.daemons[node]()
                phases.reach("daemon_launch")

        with ThreadPoolExecutor(max_workers=min(len(self.daemons), MAX_WAITING)) as pool:
            list(pool.map(start, sorted(self.daemons)))
