"""Where SONiC's and containerlab's reference artefacts are: not vendored, never looked for by
guessing folders around the checkout.

The reference folder holds `sonic-yang-models/` (SONiC's YANG models, `twin validate`),
`sonic-frr-templates/` and `sonic-bgpcfgd-test-vectors/` (tests/fidelity) and
`containerlab/clab.schema.json` (`twin export`). It is, in this order:

1. `$TWIN_SONIC_REFERENCE`;
2. `$XDG_DATA_HOME/twin/reference` (`~/.local/share/twin/reference` when XDG_DATA_HOME is unset).

Each artefact can also be named on its own (TWIN_SONIC_YANG or `twin validate --models`,
TWIN_CLAB_SCHEMA, TWIN_SONIC_TEMPLATES or `--sonic-templates`), which goes first.
"""

from __future__ import annotations

import os
from pathlib import Path

REFERENCE_ENV = "TWIN_SONIC_REFERENCE"


def data_home() -> Path:
    """$XDG_DATA_HOME, else ~/.local/share (the XDG base directory default)."""
    explicit = os.environ.get("XDG_DATA_HOME")
    return Path(explicit) if explicit else Path.home() / ".local" / "share"


def search_path() -> list[Path]:
    """The folders looked at for the reference, first one first (whether they exist or not)."""
    explicit = os.environ.get(REFERENCE_ENV)
    return [Path(explicit)] if explicit else [data_home() / "twin" / "reference"]


def reference_dir() -> Path | None:
    """The reference folder, when one exists."""
    return next((p for p in search_path() if p.is_dir()), None)


def reference_path(rel: str) -> Path | None:
    """`rel` inside the reference folder, when both exist."""
    root = reference_dir()
    if root is None:
        return None
    candidate = root / rel
    return candidate if candidate.exists() else None


def where() -> str:
    """The search path in words, for messages."""
    return f"${REFERENCE_ENV}, else {data_home() / 'twin' / 'reference'}"
