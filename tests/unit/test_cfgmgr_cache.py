"""The config daemon keeps a switch's CONFIG_DB once: its cache of what CONFIG_DB holds and what it
last programmed are one object while they hold the same, and a change never alters what was
programmed before it is programmed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from twin.stages.configdb import ConfigDb
from twin.switch.config.cfgmgr import ConfigDaemon

BOOT: ConfigDb = {
    "PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9100"}, "Ethernet8": {"admin_status": "up", "mtu": "9100"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.1/31": {}},
}


class _Pipe:
    def __init__(self, db: FakeDb) -> None:
        self.db, self.names = db, []

    def hgetall(self, name: str) -> None:
        self.names.append(name)

    def execute(self, raise_on_error: bool = True) -> list[dict[str, str]]:
        return [self.db.raw.get(n, {}) for n in self.names]


class FakeDb:
    """CONFIG_DB as redis holds it: `TABLE|key` -> fields."""

    def __init__(self, config: ConfigDb) -> None:
        self.raw = {f"{t}|{k}": dict(row) for t, rows in config.items() for k, row in rows.items()}

    def get_config(self) -> ConfigDb:
        out: dict[str, dict[str, Any]] = {}
        for name, row in self.raw.items():
            table, key = name.split("|", 1)
            out.setdefault(table, {})[key] = dict(row)
        return out

    def client(self, db: str) -> FakeDb:
        return self

    def pipeline(self, transaction: bool = True) -> _Pipe:
        return _Pipe(self)


def _daemon(tmp_path: Path, db: FakeDb, sent: list[list[str]]) -> ConfigDaemon:
    (tmp_path / "programmed.json").write_text("{}")
    daemon = ConfigDaemon("leaf1", "tw.t.leaf1", tmp_path, db)  # type: ignore[arg-type]
    daemon.programmed = copy.deepcopy(BOOT)  # as `twin up` leaves it: CONFIG_DB programmed at boot
    daemon._kernel = lambda lines, tolerant: sent.append(lines)  # type: ignore[method-assign]
    daemon._vtysh = lambda lines, tolerant: sent.append(lines)  # type: ignore[method-assign]
    return daemon


def _synced(tmp_path: Path) -> tuple[ConfigDaemon, FakeDb, list[list[str]]]:
    """A daemon started on a switch whose CONFIG_DB holds what was programmed at boot; what it
    sends the kernel and FRR, and its CONFIG_DB."""
    sent: list[list[str]] = []
    db = FakeDb(BOOT)
    daemon = _daemon(tmp_path, db, sent)
    daemon.resync()
    return daemon, db, sent


def test_the_cache_is_what_was_programmed_when_they_hold_the_same(tmp_path: Path) -> None:
    daemon, _, sent = _synced(tmp_path)
    assert sent == [], "nothing differs from what was programmed at boot"
    assert daemon.cache is daemon.programmed


def test_a_change_leaves_what_was_programmed_alone_until_it_is_programmed(tmp_path: Path) -> None:
    daemon, db, sent = _synced(tmp_path)
    shared = daemon.programmed
    before = copy.deepcopy(shared)
    seen: list[ConfigDb] = []
    daemon._kernel = lambda lines, tolerant: (sent.append(lines), seen.append(copy.deepcopy(shared)))  # type: ignore[method-assign]
    db.raw["PORT|Ethernet0"]["admin_status"] = "down"
    daemon.changed({"PORT|Ethernet0"})
    assert sent == [["link set dev Ethernet0 down"]]
    assert seen == [before] and shared == before, "the shared config was changed in place"
    assert daemon.programmed["PORT"]["Ethernet0"]["admin_status"] == "down"
    assert daemon.cache is daemon.programmed


def test_a_refused_entry_keeps_the_cache_apart(tmp_path: Path) -> None:
    daemon, db, sent = _synced(tmp_path)
    db.raw["PORT|Ethernet 4"] = {"admin_status": "up"}  # a kernel key of two words: never programmed
    daemon.changed({"PORT|Ethernet 4"})
    assert "Ethernet 4" in daemon.cache["PORT"] and "Ethernet 4" not in daemon.programmed["PORT"]
    assert daemon.cache is not daemon.programmed
    db.raw["PORT|Ethernet8"]["admin_status"] = "down"
    daemon.changed({"PORT|Ethernet8"})
    assert sent[-1] == ["link set dev Ethernet8 down"]
    assert "Ethernet 4" in daemon.cache["PORT"], "the cache still holds what CONFIG_DB holds"
