"""Where SONiC's reference artefacts are (tests/fidelity helper): twin's own lookup (twin.host.reference),
$TWIN_SONIC_REFERENCE, else $XDG_DATA_HOME/twin/reference; tests that need them skip without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.host.reference import reference_dir as twin_reference_dir
from twin.host.reference import where

REPO = Path(__file__).resolve().parents[2]


def reference_dir() -> Path | None:
    """SONiC's reference artefacts, when the folder twin finds holds sonic-frr-templates."""
    candidate = twin_reference_dir()
    return candidate if candidate is not None and (candidate / "sonic-frr-templates").is_dir() else None


REFERENCE = reference_dir()
# SONiC's FRR templates laid out as a switch keeps them (twin.stages.render.sonic_templates renders with them)
TEMPLATES = REFERENCE / "sonic-frr-templates" if REFERENCE is not None else None
needs_reference = pytest.mark.skipif(REFERENCE is None, reason="SONiC's reference artefacts not found in "
                                     f"{where()}: set TWIN_SONIC_REFERENCE to a folder holding sonic-frr-templates")
