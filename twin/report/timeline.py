"""A drill's timeline as a PNG: probe delivery and per-spine traffic share, with the fault,
detection, convergence and recovery marked."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from twin.model.drill import DrillReport


def timeline_png(r: DrillReport, path: Path) -> None:
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 6), height_ratios=[1, 2])
    delivery = r.timeline.get("delivery", [])
    if delivery:
        top.plot([p[0] for p in delivery], [p[1] * 100 for p in delivery], color="black", linewidth=1)
    top.set_ylabel("probe delivered %")
    top.set_ylim(-5, 105)
    for key, series in sorted(r.timeline.items()):
        if key.startswith("share:") and series:
            bottom.plot([p[0] for p in series], [p[1] * 100 for p in series], label=key.removeprefix("share:"),
                        linewidth=1)
    bottom.set_ylabel("share of probe traffic %")
    bottom.set_xlabel("ms since the first fault")
    for a in r.actions:
        color = "red" if a.action == "inject" else "green"
        for ax in (top, bottom):
            ax.axvline(a.t_ms, color=color, linestyle="-", linewidth=1)
            if a.detect_ms is not None:
                ax.axvline(a.t_ms + a.detect_ms, color=color, linestyle=":", linewidth=1)
            if a.converge_ms is not None:
                ax.axvline(a.t_ms + a.converge_ms, color=color, linestyle="--", linewidth=1)
    bottom.legend(loc="upper right", fontsize="small")
    fig.suptitle(f"{r.drill} on {r.target}: fault (red), restore (green); dotted = detected, dashed = converged")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
