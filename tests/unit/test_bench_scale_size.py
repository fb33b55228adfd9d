"""bench/lab_up.py --scale-size: the scale lab at another size, everything but its size kept."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from twin.stages.lab_file import load_lab


def test_a_size_is_spines_by_leaves(lab_up: ModuleType) -> None:
    assert lab_up.scale_size("32x64") == (32, 64)
    assert lab_up.scale_size(" 2x3 ") == (2, 3)
    for bad in ("32", "32x", "x64", "0x64", "32x1", "32*64", "-1x4"):
        with pytest.raises(argparse.ArgumentTypeError, match="SPINESxLEAVES"):
            lab_up.scale_size(bad)


def test_the_scale_lab_at_its_own_size_is_the_file_itself(lab_up: ModuleType) -> None:
    with lab_up.scale_lab(64, 128) as lab_file:
        assert lab_file == "labs/scale.yaml"


def test_another_size_changes_only_the_numbers_of_spines_and_leaves(lab_up: ModuleType) -> None:
    own = load_lab(lab_up.REPO / "labs/scale.yaml")
    with lab_up.scale_lab(3, 5) as lab_file:
        copy = Path(lab_file)
        lab = load_lab(copy)
        assert copy.is_file() and copy.parent != lab_up.REPO / "labs"
    assert not copy.exists()   # the temporary folder is gone
    roles = Counter(node.role for node in lab.plan.nodes)
    assert roles == {"spine": 3, "leaf": 5}
    assert len(lab.plan.links) == 15
    assert lab.name == "scale-3x5"
    # what labs/scale.yaml and its topology say beside the size is kept: no BFD, SONiC's connect
    # timer, no egress queues, the health timeout, the runtime
    assert lab.plan.fabric == own.plan.fabric
    assert lab.health == own.health and lab.runtime == own.runtime


def test_a_size_without_the_scale_lab_is_refused(lab_up: ModuleType, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["lab_up.py", "--scale-size", "32x64"])
    with pytest.raises(SystemExit) as exc:
        lab_up.main()
    assert exc.value.code == 2
    assert "--scale-size sizes the scale lab: add --scale" in capsys.readouterr().err
