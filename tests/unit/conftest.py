"""Fixtures shared by the unit tests."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from configdb_edits import LEAF1

from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.switch.frr import frr_daemons


@pytest.fixture(scope="module")
def leaf1_original() -> ConfigDb:
    """The committed golden config_db.json of the default lab's leaf1 (do not mutate)."""
    return configdb.load(LEAF1)


@pytest.fixture
def leaf1(leaf1_original: ConfigDb) -> ConfigDb:
    """A private copy of leaf1's config_db to mutate."""
    return copy.deepcopy(leaf1_original)


@pytest.fixture
def fake_frr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An FRR_BIN holding every known daemon binary, so results do not depend on this machine."""
    for daemon in frr_daemons.KNOWN:
        (tmp_path / daemon).touch()
    monkeypatch.setattr(frr_daemons, "FRR_BIN", tmp_path)
    return tmp_path
