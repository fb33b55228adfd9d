"""The folders FRR's daemons make in FRR's own run directory, removed when their lab goes down.

twin starts every switch's daemons with a pathspace (`-N tw_<lab>_<node>`, twin.switch.frr.frr_daemons),
so nothing of theirs can meet a host FRR's files: with it, what FRR places by default (bfdd's
control socket, for one) goes to /var/run/frr/tw_<lab>_<node>/ instead of /var/run/frr/, where the
host's FRR keeps its own. FRR makes that folder whatever else is given on its command line and
never removes it; `twin down` does, so the host's FRR run directory is left as twin found it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

FRR_STATE_DIR = Path("/var/run/frr")


def pathspace_prefix(lab: str) -> str:
    """`tw_<lab>_`: the pathspaces of `lab`'s nodes (lab names have no '_', so no lab's prefix is another's)."""
    return f"tw_{lab}_"


def remove_statedirs(lab: str) -> list[str]:
    """Remove the pathspace folders of `lab`'s daemons; say how many (nothing when there were none)."""
    if not FRR_STATE_DIR.is_dir():
        return []
    found = [p for p in FRR_STATE_DIR.iterdir() if p.is_dir() and not p.is_symlink()
             and p.name.startswith(pathspace_prefix(lab))]
    for folder in found:
        shutil.rmtree(folder, ignore_errors=True)
    return [f"{len(found)} folders of its FRR daemons in {FRR_STATE_DIR}"] if found else []
