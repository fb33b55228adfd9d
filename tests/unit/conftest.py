"""Fixtures shared by the unit tests."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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


@pytest.fixture(scope="session")
def lab_up() -> ModuleType:
    """bench/lab_up.py, loaded as when run as a script (its sibling modules import by name)."""
    bench = Path(__file__).resolve().parents[2] / "bench"
    sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("bench_lab_up", bench / "lab_up.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
