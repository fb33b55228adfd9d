"""Every drill kind on a small running lab (2 spines, 3 leaves), asserted on its measurements.

The drills share one lab: each must leave it at its baseline, which the next one checks first.
The last test breaks the fabric on purpose and so runs last.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import DATA, REPO, TWIN, running_lab, twin, twin_json, until

pytestmark = pytest.mark.needs_root


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab(DATA / "drill.yaml", "d", check_clean=True) as name:
        yield name


def drill(lab: str, *args: str) -> dict[str, Any]:
    proc = twin("drill", *args, "--name", lab, "--json", check=False, timeout=180)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert (proc.returncode == 0) == doc["passed"], doc["violations"]
    return doc


ALL = {"leaf1": 2, "leaf2": 2, "leaf3": 2}
ONE = {"leaf1": 1, "leaf2": 1, "leaf3": 1}


def restored(doc: dict[str, Any]) -> None:
    assert doc["restored"] and doc["passed"], doc["violations"]
    assert doc["paths_after"] == doc["paths_before"]
    assert doc["checks"]["health_after"]


def test_spine_loss(lab: str, tmp_path: Path) -> None:
    doc = drill(lab, "spine-loss", "--target", "spine1", "--report", str(tmp_path))
    restored(doc)
    assert doc["paths_before"] == ALL
    assert doc["paths_during"] == ONE
    assert doc["distribution"]["spine1"] < 0.01 and doc["distribution"]["spine2"] > 0.99
    assert 0 < doc["distribution_before"]["spine1"] < 1
    assert doc["detect_ms"] is not None and doc["detect_ms"] < 1000
    assert doc["converge_ms"] is not None and doc["converge_ms"] >= doc["detect_ms"] - 50
    assert doc["flows"] >= 64 and doc["probe"]["sent"] > 0
    assert doc["recovery"]["converge_ms"] is not None
    # flows on the lost spine had to move; flows on the surviving one had no reason to
    assert doc["flows_moved"] > 0 and doc["flows_moved_healthy"] == 0
    names = sorted(p.name for p in tmp_path.iterdir())  # and twin's marker of what it wrote there
    assert names == [".twin-written", f"{lab}-spine-loss.json", f"{lab}-spine-loss.md", f"{lab}-spine-loss.png"]


def test_spine_silent_is_found_by_bfd_both_ways(lab: str) -> None:
    doc = drill(lab, "spine-silent", "--target", "spine2")
    restored(doc)
    assert doc["paths_during"] == ONE
    # SONiC's BFD, 300 ms x 3: the leaves and the silent spine each declare the other down in about 900 ms
    assert 600 < doc["detect_ms"] < 1500 and 600 < doc["detect_target_ms"] < 1500
    reasons = {e["reason"] for e in doc["sessions"] if e["state"] == "down"}
    assert any("BFD" in r for r in reasons), reasons
    assert 0 < doc["loss_ms"] <= 2000
    assert doc["distribution"]["spine2"] < 0.01


def test_leaf_loss_spares_traffic_between_other_leaves(lab: str) -> None:
    doc = drill(lab, "leaf-loss", "--target", "leaf3")
    restored(doc)
    assert doc["paths_during"] == {"leaf1": 2, "leaf2": 2}
    assert doc["loss_ms"] == 0 and doc["probe"]["lost"] == 0
    assert doc["detect_ms"] is not None and doc["converge_ms"] is not None


def test_link_down_narrows_both_leaves(lab: str) -> None:
    doc = drill(lab, "link-down", "--target", "leaf1:spine1")
    restored(doc)
    # leaf1 loses an uplink; the others lose spine1 towards leaf1 only, and keep 2 towards each other
    assert doc["paths_during"] == {"leaf1": 1, "leaf2": 1, "leaf3": 1}
    assert doc["detect_ms"] < 500


def test_link_flap_reports_every_flap(lab: str) -> None:
    doc = drill(lab, "link-flap", "--target", "leaf2:spine2", "--flaps", "2", "--period-ms", "4000",
                "--hold-ms", "300")
    restored(doc)
    assert [a["action"] for a in doc["actions"]] == ["inject", "restore"] * 2
    assert all(a["detect_ms"] is not None for a in doc["actions"] if a["action"] == "inject")
    assert [a["t_ms"] // 100 for a in doc["actions"]] == [0, 3, 40, 43]
    assert doc["actions"][-1]["settled"]


def test_link_gray_loses_packets_the_fabric_may_not_see(lab: str) -> None:
    # 5 % each way: BFD 100 ms x 3 then rarely loses 3 packets in a row, so the fabric usually does not
    # notice. When it does (a BFD flap under random loss is real), traffic leaves the link and the
    # flows that crossed it lose less: the report must then say the fabric noticed.
    doc = drill(lab, "link-gray", "--target", "leaf1:spine1", "--loss-pct", "5")
    restored(doc)
    assert doc["probe"]["lost"] > 0
    note = next(n for n in doc["notes"] if n.startswith("gray link:"))
    pct = float(note.split("lost ")[1].split("%")[0])
    if doc["noticed"]:
        assert "the fabric noticed" in note and 0 < pct < 10, note
    else:
        assert "did NOT notice" in note, note
        assert 2.5 < pct < 10, note  # 5 % injected, in one direction per flow
        assert doc["paths_during"] == doc["paths_before"]


def test_session_reset_in_the_running_config(lab: str) -> None:
    doc = drill(lab, "session-reset", "--target", "leaf1:spine2")
    restored(doc)
    downs = [e for e in doc["sessions"] if e["state"] == "down"]
    assert {(e["node"], e["peer"]) for e in downs} == {("leaf1", "spine2"), ("spine2", "leaf1")}
    assert doc["paths_during"] == ONE
    assert doc["recovery"]["detect_ms"] is not None


def test_mtu_mismatch_is_caught_by_check_and_jumbo_ping(lab: str) -> None:
    doc = drill(lab, "mtu-mismatch", "--target", "leaf2:spine1")
    restored(doc)
    assert doc["checks"] == {"mtu_check_caught": True, "jumbo_df_ping_caught": True,
                             "mtu_check_clean_after": True, "jumbo_df_ping_after": True, "health_after": True}
    assert doc["paths_during"] == doc["paths_before"]
    assert doc["probe"]["lost"] == 0


def test_scenario_of_two_timed_faults(lab: str, tmp_path: Path) -> None:
    scenario = tmp_path / "two.yaml"
    scenario.write_text("name: two\nsteps:\n"
                        "  - {kind: link-down, target: 'leaf1:spine1', at_ms: 0, hold_ms: 2500}\n"
                        "  - {kind: link-down, target: 'leaf2:spine1', at_ms: 800, hold_ms: 2500}\n")
    doc = drill(lab, "--scenario", str(scenario))
    restored(doc)
    assert doc["drill"] == "two"
    assert [(a["action"], a["target"]) for a in doc["actions"]] == [
        ("inject", "leaf1:Ethernet128"), ("inject", "leaf2:Ethernet128"),
        ("restore", "leaf1:Ethernet128"), ("restore", "leaf2:Ethernet128")]
    assert all(a["converge_ms"] is not None for a in doc["actions"][:2])


def test_bad_target_exits_2(lab: str) -> None:
    proc = twin("drill", "spine-loss", "--target", "leaf1", "--name", lab, check=False)
    assert proc.returncode == 2
    assert "'leaf1' is not a spine" in proc.stderr


def test_interrupted_drill_takes_its_fault_back(lab: str) -> None:
    """Ctrl-C while spine2 is silent: the nftables drop goes away and the fabric comes back. The fault
    is held 30 s: held only until the fabric settles (about 2 s), a loaded machine could see the drop
    late and interrupt the drill while it was already taking the fault back, which ends it normally.
    The drill gets Ctrl-C's default disposition: run in the background of a script (as `bash .ci/run &`
    runs pytest), it would inherit SIGINT ignored, as every background job does, and run to its end."""
    proc = subprocess.Popen([*TWIN, "drill", "spine-silent", "--target", "spine2", "--name", lab,
                             "--hold-ms", "30000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def tables() -> str:
        return subprocess.run(["ip", "netns", "exec", f"tw.{lab}.spine2", "nft", "list", "tables"],
                              capture_output=True, text=True).stdout

    assert until(lambda: "twin_drill_silent" in tables())
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "twin_drill_silent" not in tables()
    assert until(lambda: twin_json("status", "--name", lab, check=False)["healthy"], timeout=60)


def test_a_drill_that_cannot_restore_says_so_and_marks_the_lab(lab: str) -> None:
    """bgpd on the spine dies during the fault: the restore cannot bring the fabric back."""
    proc = subprocess.Popen([*TWIN, "drill", "spine-loss", "--target", "spine1", "--name", lab, "--json",
                             "--recovery-timeout", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO)
    pidfile = Path(f"/run/twin/{lab}/nodes/spine1/bgpd.pid")

    def spine1_down() -> bool:  # the fault is in place: spine1's links are down
        out = subprocess.run(["ip", "-n", f"tw.{lab}.spine1", "-br", "link"], capture_output=True, text=True).stdout
        return "Ethernet0" in out and "DOWN" in out.split("Ethernet0")[1].split("\n")[0]

    assert until(spine1_down)
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    doc = json.loads(stdout)
    assert doc["restored"] is False and doc["passed"] is False
    assert any(n.startswith("NOT RESTORED") for n in doc["notes"])
    status = twin_json("status", "--name", lab, check=False)
    assert status["healthy"] is False and "could not restore" in status["unhealthy"]
