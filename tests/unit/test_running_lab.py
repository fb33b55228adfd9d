"""A running lab read once from its run directory (twin.lab.running.RunningLab)."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.host.rundir import lab_dir, save_plan, save_state
from twin.lab.running import RunningLab, save_settings
from twin.model.agent import AgentSettings, AgentSwitch
from twin.model.drill import Slo
from twin.model.errors import TwinError
from twin.model.lab import DrillSettings
from twin.model.state import LabState, NodeState
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

MINI = Path(__file__).resolve().parents[1] / "integration" / "data" / "mini.yaml"


@pytest.fixture
def run_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    return tmp_path


def _write_lab(phase: str = "up", agent: AgentSettings | None = None) -> None:
    plan = plan_topology(load_topology(MINI))
    nodes = [NodeState(name=n.name, role=n.role, kind=n.kind, netns=f"tw.lab1.{n.name}",
                       mgmt=f"172.20.1.{k + 2}" if n.kind == "switch" else None) for k, n in enumerate(plan.nodes)]
    save_state(LabState(lab="lab1", runtime="netns", phase=phase, topology="mini", created=0.0, nodes=nodes))
    save_plan("lab1", plan)
    save_settings("lab1", DrillSettings(slo={"spine-loss": Slo(loss_ms=50)}))
    if agent is not None:
        (lab_dir("lab1") / "agent.json").write_text(agent.model_dump_json())


AGENT = AgentSettings(port=8080, username="admin", password="pw", tls=True, ssh_port=22,
                      switches=[AgentSwitch(name="leaf1", mgmt="172.20.1.2")])


def test_a_lab_is_read_once_with_its_plan_settings_and_agent(run_root: Path) -> None:
    _write_lab(agent=AGENT)
    lab = RunningLab.load("lab1")
    assert lab.name == "lab1" and lab.plan.node("leaf1").name == "leaf1"
    assert lab.settings.slo["spine-loss"].loss_ms == 50
    mgmt = lab.state.node("leaf1").mgmt
    assert lab.gnmi_target("leaf1") == {"target": [mgmt, 8080], "host": mgmt, "port": 8080, "username": "admin",
                                        "password": "pw", "skip_verify": True}
    assert lab.ssh_target("leaf1") == {"device_type": "linux", "host": lab.state.node("leaf1").mgmt, "port": 22,
                                       "username": "admin", "password": "pw"}
    assert lab.gnmi_target("leaf2") is None      # a switch the agent does not serve
    assert lab.gnmi_target("server1") is None    # hosts have no agent
    (lab_dir("lab1") / "agent.json").unlink()    # read once: the object does not go back to the files
    assert lab.gnmi_target("leaf1") is not None


def test_plaintext_agents_are_insecure_targets(run_root: Path) -> None:
    _write_lab(agent=AGENT.model_copy(update={"tls": False}))
    lab = RunningLab.load("lab1")
    mgmt = lab.state.node("leaf1").mgmt
    assert lab.gnmi_target("leaf1") == {"target": [mgmt, 8080], "host": mgmt, "port": 8080, "username": "admin",
                                        "password": "pw", "insecure": True}


def test_a_lab_without_an_agent_has_no_targets(run_root: Path) -> None:
    _write_lab()
    lab = RunningLab.load("lab1")
    assert lab.agent is None and lab.gnmi_target("leaf1") is None and lab.sonic_templates is None


@pytest.mark.parametrize("phase", ["creating", "failed"])
def test_only_a_lab_that_is_up_loads_but_any_lab_reads(run_root: Path, phase: str) -> None:
    _write_lab(phase=phase)
    with pytest.raises(TwinError, match="lab 'lab1' is not running; start it with 'twin up'"):
        RunningLab.load("lab1")
    lab = RunningLab.read("lab1")
    assert lab is not None and lab.state.phase == phase


def test_a_lab_that_never_came_up_reads_as_none(run_root: Path) -> None:
    assert RunningLab.read("nolab") is None
    with pytest.raises(TwinError, match="is not running"):
        RunningLab.load("nolab")


def test_the_gnmi_block_is_what_gnmiclient_takes(run_root: Path) -> None:
    """`gNMIclient(**g)` with the block as `twin status --json` prints it ("missing target" before)."""
    from pygnmi.client import gNMIclient

    _write_lab(agent=AGENT)
    target = RunningLab.load("lab1").gnmi_target("leaf1")
    assert target is not None
    client = gNMIclient(**target)   # builds the client; connecting is the integration tier's
    assert list(client._gNMIclient__target) == [target["host"], 8080]

