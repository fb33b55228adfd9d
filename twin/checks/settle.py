"""Wait until a change has taken effect before it is judged.

A Set returns once the switch's config daemon has programmed the kernel and FRR; what follows is
FRR's: bgpd applies a route-map or list change after its route-map delay-timer (5 s by default),
sessions reset or come up, updates travel to the neighbours, zebra installs what they decide. A
gate that judged at once passed a deny-all inbound policy that took leaf1's routes away 5 s later.

`Settling` follows every switch's FIB through the kernel's netlink events (twin.checks.fibwatch,
as the drills do) from before the change is applied. The change has taken effect when FRR's own
delay for it has passed and no FIB changed for a window since (longer by a connect-retry while a
session is down: one coming back shows only at its next attempt), and every switch's BGP sessions
read the same (up or not) at both ends of that window. Bounded: what still changes when the bound is
reached is named.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from twin.checks.fibwatch import FibWatch
from twin.checks.snapshot import bgp_summary_rows
from twin.host.rundir import node_dir
from twin.lab.running import RunningLab
from twin.model.results import Settle
from twin.switch.frr.frr_vty import ask_json

# How long every switch's routes and sessions must stay unchanged. eBGP updates cross this fabric
# in milliseconds (no MRAI between the switches, as SONiC's templates set none): a second without
# one FIB change anywhere after FRR applied the change is a fabric that has decided.
WINDOW_S = 1.0
POLL_S = 0.05


def quiet_from(begun: float, changes: Iterable[float], not_before: float) -> float:
    """The moment from which nothing changed: the last change after `begun`, but no earlier than
    `not_before` (FRR applies some changes only then)."""
    return max([begun, not_before, *(t for t in changes if t >= begun)])


# A session Established this recently that has not received a prefix yet is still exchanging its routes:
# FRR sends a new session's first updates after its update-group coalesce time (1 s by default).
FRESH_MS = 3000
Phase = tuple[str, int]   # ("up" | "fresh" | "down", times it was established)


def session_phase(row: dict[str, Any]) -> Phase:
    """A session as settling sees it: down (a broken one cycling through Connect and Active is down all
    the same), fresh (just Established, no prefix received yet) or up; with its count of
    establishments, so a reset between two reads is seen."""
    established = int(row.get("connectionsEstablished") or 0)
    if row.get("state") != "Established":
        return ("down", established)
    fresh = not row.get("pfxRcd") and int(row.get("peerUptimeMsec") or 0) < FRESH_MS
    return ("fresh" if fresh else "up", established)


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
        self.before = self._sessions()   # what the sessions were before the change
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.watch.__exit__(exc_type, *exc)

    def _sessions(self) -> dict[str, dict[str, Phase] | None]:
        """Each switch's sessions by phase (session_phase), read from bgpd's summary."""
        out: dict[str, dict[str, Phase] | None] = {}
        for switch in self.switches:
            rows = bgp_summary_rows(node_dir(self.lab.state.lab, switch))
            out[switch] = None if rows is None else {peer: session_phase(row) for peer, row in rows.items()}
        return out

    def _retry_s(self, sessions: dict[str, dict[str, Phase] | None]) -> float:
        """The longest connect-retry timer among sessions that are down: a session coming back shows
        only at its next connect attempt, which the quiet window must then cover (a session that is
        still down a retry later stays down: settled, broken)."""
        longest = 0.0
        for switch, peers in sessions.items():
            if not peers or all(phase != "down" for phase, _ in peers.values()):
                continue
            neighbors = ask_json(node_dir(self.lab.state.lab, switch), "bgpd", "show bgp neighbors json")
            for peer, (phase, _) in peers.items():
                row = neighbors.get(peer) if isinstance(neighbors, dict) else None
                if phase == "down" and isinstance(row, dict) and isinstance(row.get("connectRetryTimer"), int | float):
                    longest = max(longest, float(row["connectRetryTimer"]))
        return longest

    def wait(self, begun: float, frr_delay_s: float = 0.0, timeout_s: float = 60.0,
             window_s: float = WINDOW_S, applied: float | None = None) -> Settle:
        """Block until the change begun at `begun` (time.time(), before its Sets) has taken effect, or
        `timeout_s` after `begun`. `applied`: when its Sets returned (FRR's delay counts from there;
        what moved while they ran, a port taken down, counts as the change's)."""
        not_before = (applied if applied is not None else begun) + frr_delay_s
        sessions = self._sessions()
        needed = window_s + self._retry_s(sessions)
        # when a read found a switch's sessions changed: first, what the Sets themselves did to them (a
        # session that came back Established during them still has its routes to exchange)
        session_changes = [(max(time.time(), applied or begun), s) for s in self.switches
                           if sessions[s] != self.before.get(s)]
        while True:
            self.watch.check()   # a watch that failed records nothing: that is no quiet
            history = [(t, switch) for t, switch, _ in self.watch.history] + session_changes
            quiet = quiet_from(begun, [t for t, _ in history], not_before)
            now = time.time()
            if now - quiet >= needed:   # the FIBs were quiet long enough: the sessions too?
                again = self._sessions()
                moved = [s for s in self.switches if again[s] != sessions[s]]
                fresh = any(phase == "fresh" for peers in again.values() if peers for phase, _ in peers.values())
                if not moved and not fresh:
                    return self._settle(True, begun, quiet, now, window_s, frr_delay_s, history, [])
                if not moved:   # a fresh session's routes are still to come: look again shortly
                    time.sleep(POLL_S * 4)
                    continue
                sessions = again
                needed = window_s + self._retry_s(sessions)
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
                      changes=sum(t >= begun for t, _ in history), still_changing=moving)
