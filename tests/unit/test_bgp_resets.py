"""Sessions that went down after Established while a lab came up: counted from bgpd's summary, named
with bgpd's reasons, noted by `twin up` beside the time to healthy."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from twin.checks import bgp_resets
from twin.checks.bgp import session_resets
from twin.checks.bgp_resets import REASON_SWITCHES, reset_reason, reset_reasons, resets_note
from twin.flows import bringup
from twin.model.results import Health

SESSIONS = {"leaf1": {"10.0.0.0": "spine1", "10.0.0.2": "spine2"}, "spine1": {"10.0.0.1": "leaf1"}}


def _summary(**dropped: int) -> dict[str, Any]:
    peers = {ip.replace("_", "."): {"state": "Established", "connectionsDropped": n} for ip, n in dropped.items()}
    return {"bgp_summary": {"ipv4Unicast": {"peers": peers}}}


def test_only_planned_sessions_that_dropped_are_counted() -> None:
    outputs = {"leaf1": _summary(**{"10_0_0_0": 2, "10_0_0_2": 0, "10_9_9_9": 5}),   # 10.9.9.9: not planned
               "spine1": _summary(**{"10_0_0_1": 1})}
    assert session_resets(SESSIONS, outputs) == {"leaf1": 1, "spine1": 1}


def test_no_drop_and_no_answer_count_nothing() -> None:
    assert session_resets(SESSIONS, {"leaf1": _summary(**{"10_0_0_0": 0})}) == {}
    assert session_resets(SESSIONS, {}) == {}


def test_the_reasons_come_from_the_most_reset_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def neighbors(rundir: Path, daemon: str, command: str) -> Any:
        assert (daemon, command) == ("bgpd", "show bgp neighbors json")
        asked.append(rundir.name)
        return {"10.0.0.0": {"connectionsDropped": 1, "lastResetDueTo": "BGP Notification send",
                             "lastNotificationReason": "Hold Timer Expired"},
                "10.0.0.2": {"connectionsDropped": 0, "lastResetDueTo": "Waiting for NHT"}}

    monkeypatch.setattr(bgp_resets, "ask_json", neighbors)
    monkeypatch.setattr(bgp_resets, "node_dir", lambda lab, node: Path("/run") / lab / node)

    class Lab:
        class state:
            lab = "t"

    resets = {f"leaf{i}": 1 for i in range(20)} | {"spine1": 9, "spine2": 4}
    reasons = reset_reasons(Lab(), resets)  # type: ignore[arg-type]
    assert asked[:2] == ["spine1", "spine2"] and len(asked) == REASON_SWITCHES
    assert reasons == Counter({"Hold Timer Expired (sent)": REASON_SWITCHES})   # one that never dropped: no reason


def test_a_notification_names_the_reset_with_its_direction() -> None:
    received = {"lastResetDueTo": "BGP Notification received", "lastNotificationReason": "Cease/Administrative Reset"}
    assert reset_reason(received) == "Cease/Administrative Reset (received)"
    # statuses bgpd sets outside a reset are no cause (FRR 8.4: peer_create, nexthop tracking)
    for status in ("No AFI/SAFI activated for peer", "Waiting for peer OPEN", "Waiting for NHT"):
        assert reset_reason({"lastResetDueTo": status}) == "no cause recorded by bgpd"
    assert reset_reason({"lastResetDueTo": "Peer closed the session"}) == "Peer closed the session"
    assert reset_reason({}) == "no cause recorded by bgpd"


def test_the_note_says_what_an_expired_hold_timer_means() -> None:
    note = resets_note({"spine1": 3, "leaf1": 1}, 16384,
                       Counter({"Hold Timer Expired (sent)": 3, "Peer closed the session": 1}))
    assert note.startswith("4 of 16384 BGP session ends, on 2 switches, went down")
    assert "the 2 switches with the most: 3 Hold Timer Expired (sent), 1 Peer closed the session. Expired" in note
    assert "measures this machine's load" in note
    other = resets_note({"leaf1": 1}, 64, Counter({"BGP Notification send": 1}))
    assert other.endswith("with the most: 1 BGP Notification send") and "machine's load" not in other


class FakeLab:
    class health:
        timeout_s = 30.0


@pytest.mark.parametrize("resets", [{}, {"leaf1": 2}])
def test_up_notes_the_resets_and_keeps_the_note(monkeypatch: pytest.MonkeyPatch, resets: dict[str, int]) -> None:
    running = SimpleNamespace(state=SimpleNamespace(lab="lab", notes=[]))
    saved: list[list[str]] = []
    monkeypatch.setattr(bringup, "start_lab", lambda *a, **k: running)
    monkeypatch.setattr(bringup, "wait_healthy", lambda *a: Health(healthy=True, results=[], ecmp={}, seconds=1.0,
                                                                   bgp={"established": 64, "total": 64}, resets=resets))
    monkeypatch.setattr(bringup, "reset_reasons", lambda lab, r: Counter({"Hold Timer Expired (sent)": 2}))
    monkeypatch.setattr(bringup, "save_state", lambda state: saved.append(list(state.notes)))
    monkeypatch.setattr(bringup, "settle_agent", lambda name, wait: True)
    bringup.bring_up(FakeLab(), "lab", None, lambda *a: None, lambda h: None)  # type: ignore[arg-type]
    if resets:
        assert len(running.state.notes) == 1 and running.state.notes[0].startswith("2 of 64 BGP session ends")
        assert saved == [running.state.notes]
    else:
        assert running.state.notes == [] and saved == []
