"""Wait until a change has taken effect before it is judged.

A Set returns once the switch's config daemon has programmed the kernel and FRR; what follows is
FRR's: bgpd applies a route-map or list change after its route-map delay-timer (5 s by default),
sessions reset or come up, updates travel to the neighbours, zebra installs what they decide. A
gate that judged at once passed a deny-all inbound policy that took leaf1's routes away 5 s later.

`Settling` follows every switch's FIB through the kernel's netlink events (twin.checks.fibwatch,
as the drills do) from before the change is applied. The change has taken effect when FRR's own
delay for it has passed and no FIB changed for a window since, and every switch's BGP sessions read
the same at both ends of that window. Bounded: what still changes when the bound is reached is named.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from twin.checks.fibwatch import FibWatch
from twin.checks.snapshot import bgp_sessions
from twin.host.rundir import node_dir
from twin.lab.running import RunningLab
from twin.model.results import Settle

# How long every switch's routes and sessions must stay unchanged. eBGP updates cross this fabric
# in milliseconds (no MRAI between the switches, as SONiC's templates set none): a second without
# one FIB change anywhere after FRR applied the change is a fabric that has decided.
WINDOW_S = 1.0
POLL_S = 0.05


def quiet_from(begun: float, changes: Iterable[float], not_before: float) -> float:
    """The moment from which nothing changed: the last change after `begun`, but no earlier than
    `not_before` (FRR applies some changes only then)."""
    return max([begun, not_before, *(t for t in changes if t > begun)])


def still_changing(history: Sequence[tuple[float, str]], since: float) -> list[str]:
    """The switches with a change after `since`."""
    return sorted({switch for t, switch in history if t > since})


class Settling:
    """`with Settling(lab, switches) as s:` apply the change, then `s.wait(...)`: the watch starts
    before the change, so its first effects are seen."""

    def __init__(self, lab: RunningLab, switches: Iterable[str]) -> None:
        self.lab = lab
        self.switches = list(switches)
        self.watch = FibWatch({s: lab.state.node(s).netns for s in self.switches})

    def __enter__(self) -> Settling:
        self.watch.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.watch.__exit__(*exc)

    def _sessions(self) -> dict[str, dict[str, str] | None]:
        return {s: bgp_sessions(node_dir(self.lab.state.lab, s)) for s in self.switches}

    def wait(self, begun: float, frr_delay_s: float = 0.0, timeout_s: float = 60.0,
             window_s: float = WINDOW_S) -> Settle:
        """Block until the change applied at `begun` (time.time()) has taken effect, or `timeout_s`
        after `begun`."""
        not_before = begun + frr_delay_s
        sessions = self._sessions()
        session_changes: list[tuple[float, str]] = []   # when a read found a switch's sessions changed
        while True:
            history = [(t, switch) for t, switch, _ in self.watch.history] + session_changes
            quiet = quiet_from(begun, [t for t, _ in history], not_before)
            now = time.time()
            if now - quiet >= window_s:   # the FIBs were quiet for a window: the sessions too?
                again = self._sessions()
                moved = [s for s in self.switches if again[s] != sessions[s]]
                if not moved:
                    return self._settle(True, begun, quiet, now, window_s, frr_delay_s, history, [])
                sessions = again
                session_changes += [(now, s) for s in moved]
                continue
            if now - begun >= timeout_s:
                return self._settle(False, begun, quiet, now, window_s, frr_delay_s, history,
                                    still_changing(history, now - window_s))
            time.sleep(POLL_S)

    @staticmethod
    def _settle(settled: bool, begun: float, quiet: float, now: float, window_s: float, frr_delay_s: float,
                history: Sequence[tuple[float, str]], moving: list[str]) -> Settle:
        return Settle(settled=settled, settle_ms=round((quiet - begun) * 1000), waited_ms=round((now - begun) * 1000),
                      window_ms=round(window_s * 1000), frr_delay_ms=round(frr_delay_s * 1000),
                      changes=sum(t > begun for t, _ in history), still_changing=moving)
