"""Staged start on a real lab: with the machine reading busy, every switch past the free launches
waits at the gate, and the lab still comes up with every session Established."""

from __future__ import annotations

import functools
import json
import subprocess
import time
from pathlib import Path

import pytest

from twin.host.rundir import node_dir
from twin.runtime import bringup, launch_gate
from twin.runtime.registry import get_runtime
from twin.stages.lab_file import load_lab

DATA = Path(__file__).parent / "data"


def test_a_busy_machine_holds_launches_and_the_lab_still_converges(monkeypatch: pytest.MonkeyPatch,
                                                                   lab_name: str) -> None:
    busy = functools.partial(launch_gate.LaunchGate, free=1, sample=lambda: 1000, max_hold_s=0.3)
    monkeypatch.setattr(bringup, "LaunchGate", busy)
    lab = load_lab(DATA / "mini.yaml")
    state = get_runtime("netns").up(lab_name, lab.plan, lambda *_: None)
    staged = [n for n in state.notes if n.startswith("staged start:")]
    assert staged and staged[0].startswith("staged start: 3 of 4 FRR launches waited"), state.notes
    # held, not stopped: every session of the fabric comes up
    leaf = state.node("leaf1")
    for _ in range(150):
        out = subprocess.run(["ip", "netns", "exec", leaf.netns, "vtysh", "--vty_socket",
                              str(node_dir(lab_name, "leaf1")), "-c", "show bgp summary json"],
                             capture_output=True, text=True).stdout
        peers = json.loads(out or "{}").get("ipv4Unicast", {}).get("peers", {})
        if len(peers) == 2 and all(p.get("state") == "Established" for p in peers.values()):
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"leaf1's sessions did not come up after a staged start: {out[-500:]}")
