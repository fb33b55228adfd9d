"""link-flap: link-down, repeated; drills/schedule.py expands a step into its flaps (flaps, period, hold)."""

from __future__ import annotations

from twin.drills.faults.link_down import LinkDown


class LinkFlap(LinkDown):
    kind = "link-flap"
