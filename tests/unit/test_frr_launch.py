"""How a switch's FRR daemons start (twin.switch.frr.frr_daemons.launch_frr): zebra first, its zserv
socket awaited, then its clients side by side, as SONiC's supervisord starts them once zebra runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from twin.switch.frr import frr_daemons


def _launcher(events: list[str], together: threading.Barrier | None = None,
              fails: str | None = None) -> Callable[[list[str]], None]:
    def launch(argv: list[str]) -> None:
        daemon = Path(argv[0]).name
        events.append(f"start {daemon}")
        if together is not None and daemon != "zebra":
            together.wait()   # returns only once every client's launch is under way at the same time
        if daemon == fails:
            raise RuntimeError(f"{daemon} did not start")
        events.append(f"started {daemon}")
    return launch


@pytest.fixture
def sockets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The waits for sockets, recorded (and every daemon taken as installed)."""
    waited: list[str] = []
    monkeypatch.setattr(frr_daemons, "split_supported", lambda daemons: (list(daemons), []))
    monkeypatch.setattr(frr_daemons, "wait_for_sockets",
                        lambda rundir, daemons, timeout=20, files=(): waited.append(",".join([*daemons, *files])))
    return waited


def test_zebra_starts_first_and_its_clients_start_side_by_side(tmp_path: Path, sockets: list[str]) -> None:
    events: list[str] = []
    together = threading.Barrier(3, timeout=5)   # bgpd, staticd and bfdd: one after the other, this times out
    frr_daemons.launch_frr(tmp_path, "tw.lab.leaf1", ["zebra", "bgpd", "staticd", "bfdd"],
                           _launcher(events, together))
    assert events[:2] == ["start zebra", "started zebra"]
    assert sockets == ["zebra,zserv.api", "zebra,bgpd,staticd,bfdd"]   # zserv before any client, every vty after
    assert sorted(events[2:]) == sorted(f"{s} {d}" for s in ("start", "started") for d in ("bgpd", "staticd", "bfdd"))
    assert not together.broken


def test_a_client_that_fails_to_start_is_raised_after_the_others_started(tmp_path: Path, sockets: list[str]) -> None:
    events: list[str] = []
    with pytest.raises(RuntimeError, match="staticd did not start"):
        frr_daemons.launch_frr(tmp_path, "tw.lab.leaf1", ["zebra", "bgpd", "staticd"],
                               _launcher(events, fails="staticd"))
    assert "started bgpd" in events
    assert sockets == ["zebra,zserv.api"]   # no wait for vty sockets after a failed launch


def test_a_lone_client_starts_on_the_calling_thread(tmp_path: Path, sockets: list[str]) -> None:
    threads: list[str] = []
    frr_daemons.launch_frr(tmp_path, "tw.lab.r1", ["zebra", "bgpd"],
                           lambda argv: threads.append(threading.current_thread().name))
    assert threads == [threading.current_thread().name] * 2
