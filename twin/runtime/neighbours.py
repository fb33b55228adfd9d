"""The kernel's neighbour (ARP/NDP) table limits are global across namespaces: size them."""

from __future__ import annotations

from pathlib import Path

from twin.plan.models import Plan

_KEYS = ("gc_thresh1", "gc_thresh2", "gc_thresh3")


def needed_entries(plan: Plan) -> int:
    """Each link end learns its peer (v4 and v6 link-local); each switch its management peer."""
    return 4 * len(plan.links) + 4 * len(plan.switches)


def size_for(plan: Plan) -> list[str]:
    """Raise (never lower) net.ipv4/ipv6.neigh.default.gc_thresh1/2/3; say what changed."""
    need = needed_entries(plan)
    want = {"gc_thresh1": need, "gc_thresh2": 2 * need, "gc_thresh3": 4 * need}
    notes = []
    for family in ("ipv4", "ipv6"):
        base = Path(f"/proc/sys/net/{family}/neigh/default")
        for key in _KEYS:
            path = base / key
            current = int(path.read_text())
            if current < want[key]:
                path.write_text(str(want[key]))
                notes.append(f"raised net.{family}.neigh.default.{key} from {current} to {want[key]} "
                             f"for {len(plan.links)} links (the table is shared by all namespaces)")
    return notes
