"""`twin frr restart`'s core (twin.switch.restart.frr_restart) without a lab: what it stops, what it loads,
and starting over when the config daemon programs a change while FRR restarts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from twin.host.processes import Proc
from twin.model.errors import RuntimeBackendError
from twin.switch.restart import frr_restart
from twin.switch.restart.frr_restart import frr_processes, programmed_config, restart_frr


def _config(asn: str) -> dict[str, dict[str, dict[str, str]]]:
    return {"DEVICE_METADATA": {"localhost": {"bgp_asn": asn, "hostname": "leaf1"}}}


def test_programmed_config_prefers_programmed_json_then_the_saved_config(tmp_path: Path) -> None:
    (tmp_path / "config_db.json").write_text(json.dumps(_config("65001")))
    assert programmed_config(tmp_path)["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "65001"
    (tmp_path / "programmed.json").write_text(json.dumps(_config("65002")))
    assert programmed_config(tmp_path)["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "65002"
    with pytest.raises(RuntimeBackendError, match=r"neither programmed\.json nor config_db\.json"):
        programmed_config(tmp_path / "missing")


def test_the_saved_config_is_read_as_config_db_holds_it_and_a_broken_record_is_skipped(tmp_path: Path) -> None:
    typed = {"DEVICE_METADATA": {"localhost": {"bgp_asn": 65001, "hostname": "leaf1"}},
             "PORT": {"Ethernet0": {"lanes": "0", "mtu": 9100}}}
    (tmp_path / "config_db.json").write_text(json.dumps(typed))
    (tmp_path / "programmed.json").write_text(json.dumps(["not", "a", "config"]))
    db = programmed_config(tmp_path)   # programmed.json unusable: config_db.json, every value a string
    assert db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "65001" and db["PORT"]["Ethernet0"]["mtu"] == "9100"
    (tmp_path / "programmed.json").write_text(json.dumps(db))
    assert programmed_config(tmp_path) == db   # written in CONFIG_DB's form, read back as it is


def test_only_live_frr_daemons_are_stopped() -> None:
    procs = [Proc(1, 1, "zebra", "S"), Proc(2, 2, "bgpd", "Z"), Proc(3, 3, "redis-server", "S"),
             Proc(4, 4, "vtysh", "S"), Proc(5, 5, "bfdd", "R")]
    assert [p.name for p in frr_processes("ns", lambda ns: procs)] == ["zebra", "bfdd"]


class FakeFrr:
    """Stands in for the daemons: records loads; `changes` are what the config daemon programs
    (programmed.json rewritten) while each load runs."""

    def __init__(self, rundir: Path, changes: list[str]) -> None:
        self.rundir, self.changes, self.loaded, self.stops = rundir, changes, [], 0

    def stop(self, rundir: Path, netns: str) -> list[str]:
        self.stops += 1
        return ["bgpd (pid 7)"] if self.stops == 1 else []

    def launch(self, rundir: Path, netns: str, daemons: list[str], launch: object) -> list[str]:
        return []

    def load(self, rundir: Path, conf: str) -> None:
        self.loaded.append(conf)
        if self.changes:
            (self.rundir / "programmed.json").write_text(json.dumps(_config(self.changes.pop(0))))


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeFrr:
    (tmp_path / "programmed.json").write_text(json.dumps(_config("65001")))
    frr = FakeFrr(tmp_path, [])
    monkeypatch.setattr(frr_restart, "stop_frr", frr.stop)
    monkeypatch.setattr(frr_restart, "launch_frr", frr.launch)
    monkeypatch.setattr(frr_restart, "load_frr", frr.load)
    monkeypatch.setattr(frr_restart, "render_frr", lambda config, templates: config["DEVICE_METADATA"]
                        ["localhost"]["bgp_asn"])
    monkeypatch.setattr(frr_restart, "frr_processes", lambda ns: [Proc(9, 9, "zebra", "S"), Proc(8, 8, "bgpd", "S")])
    return frr


def test_frr_is_loaded_with_what_was_programmed(fake: FakeFrr, tmp_path: Path) -> None:
    result = restart_frr("leaf1", "ns", tmp_path, ["zebra", "bgpd"], lambda argv: None)
    assert fake.loaded == ["65001"]
    assert (result.stopped, result.started, result.warnings) == (["bgpd (pid 7)"], ["zebra", "bgpd"], [])


def test_a_change_programmed_meanwhile_starts_it_over(fake: FakeFrr, tmp_path: Path) -> None:
    fake.changes = ["65002"]
    result = restart_frr("leaf1", "ns", tmp_path, ["zebra", "bgpd"], lambda argv: None)
    assert fake.loaded == ["65001", "65002"] and fake.stops == 2
    assert result.stopped == ["bgpd (pid 7)"] and result.warnings == []


def test_a_config_that_keeps_changing_is_reported(fake: FakeFrr, tmp_path: Path) -> None:
    fake.changes = ["65002", "65003", "65004"]
    result = restart_frr("leaf1", "ns", tmp_path, ["zebra", "bgpd"], lambda argv: None)
    assert fake.loaded == ["65001", "65002", "65003"]
    assert len(result.warnings) == 1 and "kept changing" in result.warnings[0]
