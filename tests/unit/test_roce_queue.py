"""RoCE in a lossy queue: `twin validate`'s finding (twin.stages.validate.qos) and `twin verify`'s check
(twin.checks.roce_queue), from the same resolution of the switch's maps."""

from __future__ import annotations

import copy
from pathlib import Path

from test_port_qos import twin_qos

from twin.checks.catalog import verify_checks
from twin.checks.roce_queue import roce_queue_check
from twin.model.findings import SwitchConfig
from twin.model.lab import RoceSettings
from twin.stages.validate.qos import qos_findings

PORTS = ("Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet16", "Ethernet20", "Ethernet24", "Ethernet28")


def _cfg(name: str, remap: bool) -> SwitchConfig:
    db = twin_qos(*PORTS)
    if remap:
        db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"
    return SwitchConfig(name=name, path=Path(f"{name}/config_db.json"), db=db)


def test_validate_names_the_map_entry_that_sends_roce_to_a_lossy_queue() -> None:
    good, bad = _cfg("leaf1", remap=False), _cfg("leaf2", remap=True)
    assert [f for f in qos_findings([good, _cfg("leaf3", False)], RoceSettings(compute_dscp=26))] == []
    found = [f for f in qos_findings([good, bad], RoceSettings(compute_dscp=26)) if "RoCE" in f.message]
    assert len(found) == 1
    assert (found[0].file, found[0].where) == ("leaf2/config_db.json", "DSCP_TO_TC_MAP|ROCE 26")
    assert found[0].message == ("RoCE (DSCP 26) goes to traffic class 1, queue 1, a lossy queue, on Ethernet0, "
                                "Ethernet4, Ethernet8, Ethernet12, Ethernet16, Ethernet20 and 2 more "
                                "(PFC makes queues 3, 4 lossless there)")
    assert found[0].fix == "map DSCP 26 to a traffic class whose queue PFC makes lossless (3, 4)"
    assert not [f for f in qos_findings([good, bad], RoceSettings()) if "RoCE" in f.message]   # no DSCP named


def test_verify_judges_the_running_configs_the_same_way() -> None:
    configs = {"leaf1": _cfg("leaf1", False).db, "leaf2": _cfg("leaf2", True).db}
    check = roce_queue_check(configs, 26)
    assert check is not None
    result = check.evaluate({})
    assert result.status == "failure"
    assert [(i.subject, i.status) for i in result.items] == [("leaf2", "failure"), ("leaf1", "success")]
    assert result.items[0].message.startswith("RoCE (DSCP 26) goes to traffic class 1, queue 1, a lossy queue")
    fixed = copy.deepcopy(configs)
    fixed["leaf2"]["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "3"
    check = roce_queue_check(fixed, 26)
    assert check is not None and check.evaluate({}).status == "success"
    assert roce_queue_check(configs, None) is None                     # the lab names no RoCE DSCP
    assert roce_queue_check({"x": {"PORT": {}}}, 26) is None            # no switch gives its ports QoS


def test_verify_runs_it_when_the_lab_names_roce_s_dscp() -> None:
    from twin.stages.lab_file import load_lab

    lab = load_lab(Path(__file__).parents[2] / "labs" / "default.yaml")
    configs = {"leaf1": _cfg("leaf1", True).db}
    names = [c.name for c in verify_checks(lab.plan, configs, (), 26)]
    assert "roce-lossless-queue" in names
    assert "roce-lossless-queue" not in [c.name for c in verify_checks(lab.plan, configs, ())]


def test_a_running_lab_keeps_the_lab_file_s_roce_settings(tmp_path: Path) -> None:
    from twin.stages.lab_file import load_lab

    (tmp_path / "fabric.yaml").write_text("name: fab\nkind: clos\nclos: {spines: 1, leaves: 2}\n")
    (tmp_path / "lab.yaml").write_text(f"name: fab\ntopology: {tmp_path / 'fabric.yaml'}\nroce:\n  compute_dscp: 26\n")
    lab = load_lab(tmp_path / "lab.yaml")
    assert lab.drills.roce.compute_dscp == 26     # what drills.json keeps for verify, ci and rehearse
