"""FRR's check of node configs, batched (twin.switch.frr.frr_check): a batch of good configs is one
vtysh run, every node still gets its own verdict, and no config is read in a node another left open."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from twin.switch.frr import frr_check
from twin.switch.frr.frr_check import FrrCheck

needs_vtysh = pytest.mark.skipif(shutil.which("vtysh") is None, reason="vtysh (FRR) is not installed")

GOOD = """frr defaults traditional
hostname {name}
service integrated-vtysh-config
route-map RM_SET_SRC permit 10
 set src 10.1.0.1
exit
router bgp 6510{n}
 bgp router-id 10.1.0.{n}
 neighbor 10.0.0.{n} remote-as 65000
 address-family ipv4 unicast
  maximum-paths 64
"""   # ends inside `address-family`, as a config may


def _write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).mkdir()
    path = tmp_path / name / "frr.conf"
    path.write_text(text)
    return path


@needs_vtysh
def test_a_line_that_fails_alone_fails_after_a_config_left_open(tmp_path: Path) -> None:
    """A bgp line at the top of a config is refused, even right after a config that ended inside
    `router bgp` (vtysh would otherwise find it in the node left open; `end` does not close it)."""
    left_open = _write(tmp_path, "a", GOOD.format(name="a", n=1))
    stray = _write(tmp_path, "b", "neighbor 10.0.0.9 remote-as 65009\n")
    assert frr_check.vtysh_check(left_open.read_text() + "end\n" + stray.read_text(), tmp_path).returncode == 0
    check = FrrCheck()
    check._check(asks := [frr_check._Ask(left_open), frr_check._Ask(stray)])
    assert asks[0].refused is None
    assert asks[1].refused is not None and "Unknown command" in asks[1].refused and str(stray) in asks[1].refused
    assert check.runs == 3   # the batch, then each config alone


@needs_vtysh
def test_nodes_asking_together_share_one_run_and_get_their_own_verdicts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [_write(tmp_path, f"n{i}", GOOD.format(name=f"n{i}", n=i)) for i in range(6)]
    bad = _write(tmp_path, "bad", GOOD.format(name="bad", n=7) + "  no such command here\n")
    check = FrrCheck()
    first_run = threading.Event()
    release = threading.Event()
    real = frr_check.vtysh_check

    def vtysh_check(text: str, vty_socket: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        if not first_run.is_set():       # hold the first run until every node has asked
            first_run.set()
            release.wait(10)
        return real(text, vty_socket, timeout)

    monkeypatch.setattr(frr_check, "vtysh_check", vtysh_check)
    verdicts: dict[Path, str | None] = {}

    def ask(path: Path) -> None:
        verdicts[path] = check.refused(path)

    threads = [threading.Thread(target=ask, args=(paths[0],))]
    threads[0].start()
    assert first_run.wait(10)
    threads += [threading.Thread(target=ask, args=(p,)) for p in [*paths[1:], bad]]
    for t in threads[1:]:
        t.start()
    for _ in range(1000):                      # the 6 others wait for the run under way (10 s at most)
        if len(check._pending) == len(paths):
            break
        threading.Event().wait(0.01)
    release.set()
    for t in threads:
        t.join(30)
    assert all(verdicts[p] is None for p in paths)
    refused = verdicts[bad]
    assert refused is not None and refused.startswith(f"FRR rejected {bad}: ") and "no such command here" in refused
    # the first alone; the other six together, failed by `bad`, then each alone: 1 + 1 + 6
    assert check.runs == 8


def test_vtysh_that_cannot_run_fails_every_node_of_its_batch(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [_write(tmp_path, f"n{i}", "hostname n\n") for i in range(2)]

    def vtysh_check(text: str, vty_socket: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired("vtysh", timeout)

    monkeypatch.setattr(frr_check, "vtysh_check", vtysh_check)
    check = FrrCheck()
    asks = [frr_check._Ask(p) for p in paths]
    check._check(asks)
    assert all(isinstance(a.failed, subprocess.TimeoutExpired) for a in asks)
    with pytest.raises(subprocess.TimeoutExpired):
        check.refused(paths[0])


def test_a_good_batch_is_one_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [_write(tmp_path, f"n{i}", f"hostname n{i}\n") for i in range(3)]
    seen: list[str] = []

    def vtysh_check(text: str, vty_socket: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        seen.append(text)
        return subprocess.CompletedProcess(["vtysh"], 0, "", "")

    monkeypatch.setattr(frr_check, "vtysh_check", vtysh_check)
    check = FrrCheck()
    asks = [frr_check._Ask(p) for p in paths]
    check._check(asks)
    assert check.runs == 1 and all(a.refused is None and a.failed is None for a in asks)
    assert seen == ["".join(f"{frr_check.SEPARATOR}\nhostname n{i}\n\n" for i in range(3))]


def test_a_leader_stopped_mid_check_leaves_no_node_accepted(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The node whose thread runs a batch is stopped (an exception that is no error of vtysh's): every
    node of its batch fails, none is taken for accepted."""
    paths = [_write(tmp_path, f"n{i}", "hostname n\n") for i in range(2)]

    def stopped(self: FrrCheck, batch: list[frr_check._Ask]) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(FrrCheck, "_check", stopped)
    check = FrrCheck()
    other = frr_check._Ask(paths[1])
    check._pending.append(other)   # asked by another node while none ran
    with pytest.raises(KeyboardInterrupt):
        check.refused(paths[0])
    assert other.done and isinstance(other.failed, RuntimeError) and "interrupted" in str(other.failed)
    assert not check._running
