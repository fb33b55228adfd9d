"""A change judged once it has taken effect (twin.checks.settle) and by what it did (twin.checks.effect):
settle detection on recorded change times, the effect diff on canned FRR configs, routes, sessions and links."""

from __future__ import annotations

import pytest

from twin.checks import settle as settle_module
from twin.checks.effect import (
    Link,
    Session,
    SwitchSnapshot,
    causes,
    described,
    frr_delay_s,
    route_map_delay_s,
    switch_effect,
)
from twin.checks.settle import Settling, quiet_from, session_phase, still_changing

BGPD = """frr version 8.4
hostname leaf1
router bgp 65101
 bgp router-id 10.1.4.1
 neighbor 10.0.0.64 remote-as 65100
 timers bgp 3 9
 address-family ipv4 unicast
  neighbor 10.0.0.64 route-map FROM_BGP_PEER_V4 in
 exit-address-family
exit
!
route-map FROM_BGP_PEER_V4 permit 100
exit
"""


def test_quiet_from_is_the_last_change_after_the_change_was_applied() -> None:
    assert quiet_from(100.0, [99.5, 100.2, 100.9], not_before=100.0) == 100.9
    assert quiet_from(100.0, [98.0, 99.9], not_before=100.0) == 100.0   # earlier changes are not the change's


def test_quiet_from_waits_for_frr_s_own_delay_even_when_nothing_moved_yet() -> None:
    """A deny-all route-map moves nothing until bgpd's delay-timer fires: quiet is counted from then."""
    assert quiet_from(100.0, [], not_before=105.0) == 105.0
    assert quiet_from(100.0, [105.3], not_before=105.0) == 105.3


def test_still_changing_names_the_switches_that_moved_in_the_last_window() -> None:
    history = [(100.1, "leaf1"), (100.2, "spine1"), (104.0, "leaf1"), (104.5, "leaf2")]
    assert still_changing(history, since=103.5) == ["leaf1", "leaf2"]
    assert still_changing(history, since=105.0) == []


def snap(bgpd: str = BGPD, fib: dict[str, frozenset[str]] | None = None, state: str = "Established",
         established: int = 1, timers: str = "3/9 s", mtu: int = 9100) -> SwitchSnapshot:
    routes = fib if fib is not None else {"10.1.4.2/32": frozenset({"10.0.0.64", "10.0.0.66"})}
    return SwitchSnapshot(frr={"bgpd": bgpd}, rib=routes, fib=routes,
                          sessions={"10.0.0.64": Session(state, timers, established)},
                          links={"Ethernet0": Link(mtu=mtu, up=True, addresses=frozenset({"10.0.0.65/31"}))})


def test_a_policy_change_names_its_lines_and_the_routes_it_took() -> None:
    after = snap(BGPD.replace("permit 100", "deny 100"), fib={})
    effect = switch_effect("leaf1", snap(), after, ["ROUTE_MAP|FROM_BGP_PEER_V4|100 route_operation: permit -> deny"])
    assert effect.frr_added == ["bgpd: route-map FROM_BGP_PEER_V4 deny 100"]
    assert effect.frr_removed == ["bgpd: route-map FROM_BGP_PEER_V4 permit 100"]
    assert [(c.prefix, c.before, c.after) for c in effect.fib] == [("10.1.4.2/32", ["10.0.0.64", "10.0.0.66"], [])]
    assert not effect.no_effect
    text = described(effect)
    assert "FIB lost 1: 10.1.4.2/32" in text and "RIB lost 1: 10.1.4.2/32" in text


def test_a_path_change_a_session_reset_and_a_link_change_are_named() -> None:
    after = snap(fib={"10.1.4.2/32": frozenset({"10.0.0.66"})}, established=2, mtu=9000)
    effect = switch_effect("leaf1", snap(), after)
    assert [(c.before, c.after) for c in effect.fib] == [(["10.0.0.64", "10.0.0.66"], ["10.0.0.66"])]
    assert effect.sessions == ["10.0.0.64: reset 1 time(s) (Established again)"]
    assert effect.links == ["Ethernet0: mtu 9100 -> 9000"]
    assert switch_effect("leaf1", snap(), snap(state="Idle")).sessions == ["10.0.0.64: Established -> Idle"]


def test_a_change_frr_keeps_but_does_not_act_on_has_no_effect() -> None:
    """Global BGP timers every neighbor overrides: FRR's config changes, no session's timers do."""
    effect = switch_effect("leaf1", snap(), snap(BGPD.replace("timers bgp 3 9", "timers bgp 10 30")),
                           ["BGP_GLOBALS|default keepalive: 3 -> 10"])
    assert effect.no_effect and effect.frr_added == ["bgpd: router bgp 65101 > timers bgp 10 30"]
    assert described(effect)[0] == ("no effect (BGP_GLOBALS|default keepalive: 3 -> 10); FRR's config changed, "
                                    "but no route, session or link did")
    assert switch_effect("leaf1", snap(), snap(timers="10/30 s")).sessions == ["10.0.0.64: timers 3/9 s -> 10/30 s"]


def test_the_order_frr_shows_lines_in_is_no_effect() -> None:
    reordered = BGPD.replace(" bgp router-id 10.1.4.1\n neighbor 10.0.0.64 remote-as 65100\n",
                             " neighbor 10.0.0.64 remote-as 65100\n bgp router-id 10.1.4.1\n")
    effect = switch_effect("leaf1", snap(), snap(reordered))
    assert effect.frr_added == effect.frr_removed == [] and effect.no_effect


def test_frr_s_delay_applies_to_route_maps_and_lists_only() -> None:
    deny = {"bgpd": BGPD.replace("permit 100", "deny 100")}
    assert frr_delay_s({"bgpd": BGPD}, deny) == 5.0
    plist = {"bgpd": BGPD + "ip prefix-list PL seq 5 deny 10.2.0.0/31\n"}
    assert frr_delay_s({"bgpd": BGPD}, plist) == 5.0
    shutdown = {"bgpd": BGPD.replace(" timers bgp 3 9\n", " timers bgp 3 9\n neighbor 10.0.0.64 shutdown\n")}
    assert frr_delay_s({"bgpd": BGPD}, shutdown) == 0.0
    assert frr_delay_s(None, deny) == 0.0
    assert route_map_delay_s("bgp route-map delay-timer 0\n" + BGPD) == 0.0
    assert route_map_delay_s("bgp route-map delay-timer 12\n") == 12.0


class Clock:
    """time.time and time.sleep of twin.checks.settle, advanced by the sleeps alone."""

    def __init__(self, start: float) -> None:
        self.now = start

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class RecordedWatch:
    """A FIB watch replaying recorded change times: a change is in `history` once the clock passed it."""

    def __init__(self, clock: Clock, changes: list[tuple[float, str]]) -> None:
        self.clock, self.changes = clock, changes

    @property
    def history(self) -> list[tuple[float, str, dict[str, frozenset[str]]]]:
        return [(t, s, {}) for t, s in self.changes if t <= self.clock.now]

    def check(self) -> None:
        """The watch's thread never failed (FibWatch.check raises what it died of)."""


Sessions = dict[str, dict[str, tuple[str, int]] | None]
UP, DOWN, BACK, FRESH = ("up", 1), ("down", 1), ("up", 2), ("fresh", 2)


def settling(monkeypatch: pytest.MonkeyPatch, changes: list[tuple[float, str]],
             sessions: list[Sessions] | None = None) -> tuple[Settling, Clock]:
    clock = Clock(1000.0)
    monkeypatch.setattr(settle_module, "time", clock)
    s = Settling.__new__(Settling)
    s.switches = ["leaf1", "spine1"]
    s.watch = RecordedWatch(clock, changes)  # type: ignore[assignment]
    reads = iter(sessions or [])
    steady: Sessions = {"leaf1": {"10.0.0.64": UP}, "spine1": {"10.0.0.65": UP}}
    last = s.before = next(reads, steady)   # read as the watch began, before the change

    def read() -> Sessions:   # the recorded reads in turn, then the last one for good
        nonlocal last
        last = next(reads, last)
        return last

    s._sessions = read  # type: ignore[method-assign]
    s._retry_s = lambda sessions: 2.0 if any(  # type: ignore[method-assign]
        phase == "down" for peers in sessions.values() if peers for phase, _ in peers.values()) else 0.0
    return s, clock


def test_settle_waits_for_frr_s_delay_then_a_quiet_window(monkeypatch: pytest.MonkeyPatch) -> None:
    s, _ = settling(monkeypatch, [(999.0, "leaf1"), (1005.3, "leaf1"), (1005.31, "spine1")])
    result = s.wait(1000.0, frr_delay_s=5.0, timeout_s=60, window_s=1.0)
    assert result.settled and result.settle_ms == 5310 and result.changes == 2
    assert 6310 <= result.waited_ms <= 6400 and result.frr_delay_ms == 5000


def test_settle_starts_the_window_again_when_a_session_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    down: Sessions = {"leaf1": {"10.0.0.64": DOWN}, "spine1": {"10.0.0.65": UP}}
    up: Sessions = {"leaf1": {"10.0.0.64": BACK}, "spine1": {"10.0.0.65": UP}}
    s, _ = settling(monkeypatch, [], sessions=[steady_sessions(), steady_sessions(), down, up])
    result = s.wait(1000.0, timeout_s=60, window_s=1.0)
    assert result.settled and result.changes == 2 and result.waited_ms >= 5000  # down: a retry (2 s) longer


def test_settle_gives_up_naming_what_still_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    flapping = [(1000.0 + i * 0.5, "leaf1") for i in range(1, 40)]
    s, _ = settling(monkeypatch, flapping)
    result = s.wait(1000.0, timeout_s=10, window_s=1.0)
    assert not result.settled and result.still_changing == ["leaf1"] and 10000 <= result.waited_ms < 10200


def test_a_failure_is_traced_to_the_fields_the_change_set_and_what_they_became_in_frr() -> None:
    field = "ROUTE_MAP|FROM_BGP_PEER_V4|100 route_operation: permit -> deny"
    moved = switch_effect("leaf1", snap(), snap(BGPD.replace("permit 100", "deny 100"), fib={}), [field])
    inert = switch_effect("leaf2", snap(), snap(), ["PORT|Ethernet0 description: a -> b"])
    bystander = switch_effect("spine1", snap(), snap(fib={}))
    assert causes([moved, inert, bystander]) == [
        f"leaf1: {field}; FRR: + bgpd: route-map FROM_BGP_PEER_V4 deny 100, "
        "- bgpd: route-map FROM_BGP_PEER_V4 permit 100"]


def test_what_moved_while_the_sets_ran_is_the_change_s_and_frr_s_delay_counts_from_their_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A port taken down moves the FIB while its Set is still being programmed: that is the change's
    effect (counted, and the quiet window starts after it); FRR's route-map delay starts when the Sets
    returned, not when they began."""
    s, _ = settling(monkeypatch, [(1000.2, "leaf1")])
    result = s.wait(1000.0, timeout_s=60, window_s=1.0, applied=1000.5)
    assert result.settled and result.changes == 1 and result.settle_ms == 500   # not before the Sets returned
    s, _ = settling(monkeypatch, [])
    result = s.wait(1000.0, frr_delay_s=5.0, timeout_s=60, window_s=1.0, applied=1000.5)
    assert result.settle_ms == 5500 and result.waited_ms >= 6500


def test_a_session_down_is_given_a_connect_retry_to_come_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A port brought back: its session is down when the Set returns and comes back at its next connect
    attempt. The quiet window covers a retry, so the session coming back is seen, not judged too early."""
    down: Sessions = {"leaf1": {"10.0.0.64": DOWN}, "spine1": {"10.0.0.65": DOWN}}
    up: Sessions = {"leaf1": {"10.0.0.64": BACK}, "spine1": {"10.0.0.65": BACK}}
    s, _ = settling(monkeypatch, [], sessions=[down, down, up])
    result = s.wait(1000.0, timeout_s=60, window_s=1.0)
    assert result.settled and result.changes == 2 and 4000 <= result.waited_ms < 4200
    s, _ = settling(monkeypatch, [], sessions=[steady_sessions(), down, down])   # down a retry later: broken
    result = s.wait(1000.0, timeout_s=60, window_s=1.0)
    assert result.settled and result.changes == 2 and 3000 <= result.waited_ms < 3200


def test_a_session_the_sets_brought_back_is_given_a_window_for_its_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Down before the change, Established when its Sets returned: its routes are still to come, so the
    quiet window starts there, and the routes arriving later are waited for."""
    down: Sessions = {"leaf1": {"10.0.0.64": DOWN}, "spine1": {"10.0.0.65": DOWN}}
    fresh: Sessions = {"leaf1": {"10.0.0.64": FRESH}, "spine1": {"10.0.0.65": FRESH}}
    up: Sessions = {"leaf1": {"10.0.0.64": BACK}, "spine1": {"10.0.0.65": BACK}}
    s, _ = settling(monkeypatch, [(1001.8, "leaf1")], sessions=[down, fresh, fresh, fresh, up, up])
    result = s.wait(1000.0, timeout_s=60, window_s=1.0, applied=1000.2)
    assert result.settled and result.settle_ms >= 1800 and result.waited_ms >= 2800


def steady_sessions() -> Sessions:
    return {"leaf1": {"10.0.0.64": UP}, "spine1": {"10.0.0.65": UP}}


@pytest.mark.parametrize(("row", "phase"), [
    ({"state": "Established", "pfxRcd": 3, "peerUptimeMsec": 500, "connectionsEstablished": 2}, ("up", 2)),
    ({"state": "Established", "pfxRcd": 0, "peerUptimeMsec": 500, "connectionsEstablished": 2}, ("fresh", 2)),
    ({"state": "Established", "pfxRcd": 0, "peerUptimeMsec": 9000, "connectionsEstablished": 2}, ("up", 2)),
    ({"state": "Active", "connectionsEstablished": 1}, ("down", 1)),
    ({"state": "Connect", "connectionsEstablished": 1}, ("down", 1)),
])
def test_a_session_s_phase(row: dict[str, object], phase: tuple[str, int]) -> None:
    """A broken session cycling through Connect and Active is down all along; one just Established with
    no prefix yet is still exchanging (fresh), one that never will be is up once it is not new."""
    assert session_phase(row) == phase
