"""A config fault's restore (RunningChanges): the field goes back exactly as it was (removed if it was not
set), an inject cut short before it wrote is not "restored" into a value, and config_db.json written by
someone during the fault is saved again without it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from twin.drills.faults.base import LabAccess
from twin.drills.faults.running_config import RunningChanges


class FakeSwitch:
    """One switch: its running CONFIG_DB (one hash per key), its saved file, and the commands run in it."""

    def __init__(self, folder: Path, config: dict[str, dict[str, str]]) -> None:
        self.db = config
        self.file = folder / "lab" / "nodes" / "leaf2" / "config_db.json"
        self.file.parent.mkdir(parents=True)
        self.file.write_text('{"saved": 1}')
        self.commands: list[list[str]] = []
        self.state = SimpleNamespace(lab="lab")

    def config_field(self, node: str, table: str, key: str, field: str, value: str | None = None,
                     delete: bool = False) -> str | None:
        row = self.db[f"{table}|{key}"]
        old = row.get(field)
        if delete:
            row.pop(field, None)
        elif value is not None:
            row[field] = value
        return old

    def node_cmd(self, node: str, cmd: list[str], input: str | None = None) -> None:
        self.commands.append(cmd)
        if cmd == ["config", "save", "-y"]:
            self.file.write_text('{"saved": "again"}')


@pytest.fixture
def switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSwitch:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    return FakeSwitch(tmp_path, {"PORT|Ethernet128": {"mtu": "9100"}, "BGP_NEIGHBOR|default|10.0.0.1": {}})


def changes(switch: FakeSwitch) -> RunningChanges:
    return RunningChanges(cast(LabAccess, cast(Any, switch)))


def test_the_field_goes_back_and_the_saved_file_is_untouched(switch: FakeSwitch) -> None:
    c = changes(switch)
    c.change("leaf2:Ethernet128", "leaf2", "PORT", "Ethernet128", "mtu", "1500")
    assert switch.db["PORT|Ethernet128"] == {"mtu": "1500"}
    assert c.restore("leaf2:Ethernet128") == ""
    assert switch.db["PORT|Ethernet128"] == {"mtu": "9100"}
    assert switch.commands == [] and switch.file.read_text() == '{"saved": 1}'


def test_a_field_that_was_not_set_is_removed_again(switch: FakeSwitch) -> None:
    c = changes(switch)
    c.change("leaf2:Ethernet0", "leaf2", "BGP_NEIGHBOR", "default|10.0.0.1", "admin_status", "down")
    c.restore("leaf2:Ethernet0")
    assert switch.db["BGP_NEIGHBOR|default|10.0.0.1"] == {}   # not admin_status "up": nothing was there


def test_an_inject_that_never_began_restores_nothing(switch: FakeSwitch) -> None:
    assert changes(switch).restore("leaf2:Ethernet128") is None
    assert switch.db["PORT|Ethernet128"] == {"mtu": "9100"}


def test_a_file_saved_during_the_fault_is_saved_again_without_it(switch: FakeSwitch) -> None:
    c = changes(switch)
    c.change("leaf2:Ethernet128", "leaf2", "PORT", "Ethernet128", "mtu", "1500")
    switch.file.write_text('{"saved": "with the fault"}')   # another client's Set
    note = c.restore("leaf2:Ethernet128")
    assert switch.commands == [["config", "save", "-y"]]
    assert switch.file.read_text() == '{"saved": "again"}'
    assert note is not None and "saved again without it" in note
