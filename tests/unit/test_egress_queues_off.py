"""A topology with `fabric.egress_queues: false` (the 64 x 128 control plane: no servers, and a cost of its
trees the host kernel cannot afford) has its QoS tables stored and never programmed as queues, by any of
the paths that program them: the switch's start, its config daemon's start, changes and reconcile, and a
cold reboot."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from test_cfgmgr_cache import FakeDb
from test_port_qos import twin_qos

from twin.lab.agent import _switch_entry
from twin.model.state import LabState, NodeState
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology
from twin.switch.config import cfgmgr
from twin.switch.config.cfgmgr import ConfigDaemon

PORTS = ("Ethernet0", "Ethernet8")
TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


def _daemon(tmp_path: Path, queues: bool, boot: dict[str, Any]) -> tuple[ConfigDaemon, FakeDb, list[list[str]]]:
    (tmp_path / "programmed.json").write_text("{}")
    db = FakeDb(boot)
    daemon = ConfigDaemon("leaf1", "tw.t.leaf1", tmp_path, db, queues=queues)  # type: ignore[arg-type]
    daemon.programmed = copy.deepcopy(boot)
    tc: list[list[str]] = []
    daemon._kernel = lambda lines, tolerant: None  # type: ignore[method-assign]
    daemon._vtysh = lambda lines, tolerant: None  # type: ignore[method-assign]
    daemon._tc = lambda lines, tolerant: tc.append(lines)  # type: ignore[method-assign]
    return daemon, db, tc


@pytest.mark.parametrize("queues", [True, False])
def test_a_dscp_map_change_is_programmed_only_with_queues_on(tmp_path: Path, queues: bool,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    boot = twin_qos(*PORTS)
    daemon, db, tc = _daemon(tmp_path, queues, boot)
    monkeypatch.setattr(cfgmgr, "read_rooted", lambda netns: set())   # a namespace without trees yet
    daemon.start()
    db.raw["DSCP_TO_TC_MAP|ROCE"]["26"] = "1"   # RoCE to a lossy queue: the filters change
    daemon.changed({"DSCP_TO_TC_MAP|ROCE"})
    sent = [line for lines in tc for line in lines]
    if queues:
        assert any(line.startswith("qdisc add dev Ethernet0 root") for line in sent), "the start gives the trees"
        assert any("filter del dev Ethernet0" in line for line in sent), "the change swaps the filters"
    else:
        assert sent == [], "no tc line at all"
        assert daemon.programmed["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "1", "the change is still taken as programmed"


def test_reconcile_reads_and_writes_no_queues_when_they_are_off(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    daemon, _, tc = _daemon(tmp_path, False, twin_qos(*PORTS))
    monkeypatch.setattr(cfgmgr, "read_links", lambda netns: None)

    reads: list[str] = []
    monkeypatch.setattr(cfgmgr, "read_rooted", lambda netns: reads.append(netns) or set())
    monkeypatch.setattr(cfgmgr, "running_config", lambda rundir: None)
    daemon.reconcile()
    assert tc == [] and reads == [], "the kernel's queues are neither read nor written when they are off"


@pytest.mark.parametrize(("topology", "queues"), [("clos-4x8", True), ("fabric-64x128", False)])
def test_the_agent_is_told_by_the_topology(topology: str, queues: bool) -> None:
    plan = plan_topology(load_topology(TOPOLOGIES / f"{topology}.yaml"))
    assert plan.fabric.egress_queues is queues
    state = LabState(lab="q", runtime="netns", phase="up", topology=topology, created=0.0,
                     nodes=[NodeState(name="leaf1", role="leaf", kind="switch", netns="tw.q.leaf1",
                                      mgmt="172.20.20.3")])
    assert _switch_entry(state, plan, "leaf1").queues is queues
