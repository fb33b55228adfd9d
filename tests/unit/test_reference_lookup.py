"""SONiC's and containerlab's reference artefacts are found where docs/reference/environment.md says, and nowhere else:
$TWIN_SONIC_REFERENCE, else $XDG_DATA_HOME/twin/reference; never a folder guessed beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.export.containerlab import find_clab_schema
from twin.host.reference import reference_dir, search_path
from twin.stages.validate.yang import find_models


def make_reference(root: Path) -> Path:
    (root / "containerlab").mkdir(parents=True)
    (root / "containerlab" / "clab.schema.json").write_text("{}")
    (root / "sonic-yang-models" / "yang-models").mkdir(parents=True)
    return root


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No reference variable set, and an empty XDG data home."""
    for var in ("TWIN_SONIC_REFERENCE", "TWIN_SONIC_YANG", "TWIN_CLAB_SCHEMA"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def test_the_environment_variable_names_the_folder(clean: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ref = make_reference(tmp_path / "ref")
    make_reference(clean / "twin" / "reference")  # not looked at when the variable is set
    monkeypatch.setenv("TWIN_SONIC_REFERENCE", str(ref))
    assert reference_dir() == ref
    assert find_clab_schema() == ref / "containerlab" / "clab.schema.json"
    assert find_models() == ref / "sonic-yang-models"


def test_else_the_xdg_data_home(clean: Path) -> None:
    ref = make_reference(clean / "twin" / "reference")
    assert search_path() == [ref]
    assert find_clab_schema() == ref / "containerlab" / "clab.schema.json"
    assert find_models() == ref / "sonic-yang-models"


def test_xdg_data_home_defaults_to_local_share(clean: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert search_path() == [tmp_path / "home" / ".local" / "share" / "twin" / "reference"]


def test_single_artefacts_can_be_named_on_their_own(clean: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    schema = tmp_path / "my-schema.json"
    schema.write_text("{}")
    monkeypatch.setenv("TWIN_CLAB_SCHEMA", str(schema))
    assert find_clab_schema() == schema


def test_nothing_is_found_beside_the_checkout(clean: Path) -> None:
    # whether or not a ../shared/reference sits beside this checkout (it does on the CI machine)
    assert reference_dir() is None
    assert find_clab_schema() is None
    assert find_models() is None
    assert search_path() == [clean / "twin" / "reference"]  # the XDG data home only, whatever sits beside
