"""Where SONiC's reference artefacts are (tests/fidelity helper): $TWIN_SONIC_REFERENCE or ../shared/reference."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def reference_dir() -> Path | None:
    """SONiC's reference artefacts: $TWIN_SONIC_REFERENCE, else ../shared/reference beside the repository."""
    candidate = Path(os.environ.get("TWIN_SONIC_REFERENCE") or REPO.parent / "shared" / "reference")
    return candidate if (candidate / "sonic-frr-templates").is_dir() else None


REFERENCE = reference_dir()
# SONiC's FRR templates laid out as a switch keeps them (twin.render.sonic_templates renders with them)
TEMPLATES = REFERENCE / "sonic-frr-templates" if REFERENCE is not None else None
needs_reference = pytest.mark.skipif(REFERENCE is None, reason="SONiC's reference artefacts not found: set "
                                     "TWIN_SONIC_REFERENCE to a folder holding sonic-frr-templates")
