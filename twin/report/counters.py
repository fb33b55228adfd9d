"""The counters of the links a drill touched as a PNG: per link, both ends' rates in and out and their
oper status over the drill's window, with the drill's instants marked as the timeline marks them
(fault red, restore green; dotted detected, dashed converged)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from twin.model.counters import DrillCounters, DrillInstant, Series

# phase -> (colour, line style): inject and its detection and convergence red, restore and its own green
MARKS = {"inject": ("red", "-"), "detect": ("red", ":"), "converge": ("red", "--"),
         "restore": ("green", "-"), "restore_detect": ("green", ":"), "recovered": ("green", "--")}
UNITS = ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s"))
# each end's colours (in, out), neither red nor green, which mark the instants
COLOURS = (("tab:blue", "tab:cyan"), ("tab:purple", "tab:olive"))


def zero_of(c: DrillCounters) -> float:
    """The plot's t=0: the first injection (or the first instant)."""
    injects = [i.t for i in c.instants if i.phase == "inject"]
    return min(injects or [i.t for i in c.instants] or [c.start])


def rate_unit(c: DrillCounters) -> tuple[float, str]:
    peak = max((v for link in c.links for end in link.ends for s in (end.in_bps, end.out_bps) for _, v in s),
               default=0.0)
    return next(((scale, name) for scale, name in UNITS if peak >= scale), UNITS[-1])


def _plot(ax: Axes, series: Series, zero: float, label: str, colour: str, scale: float = 1.0, offset: float = 0.0,
          steps: bool = False) -> None:
    if series:
        ax.plot([t - zero for t, _ in series], [v / scale + offset for _, v in series], label=label, linewidth=1,
                color=colour, drawstyle="steps-post" if steps else "default")


def _mark(ax: Axes, instants: list[DrillInstant], zero: float) -> None:
    for instant in instants:
        colour, style = MARKS.get(instant.phase, ("grey", "-."))
        ax.axvline(instant.t - zero, color=colour, linestyle=style, linewidth=1)


def counters_png(c: DrillCounters, path: Path) -> None:
    rows = max(1, len(c.links))
    fig, axes = plt.subplots(2 * rows, 1, sharex=True, figsize=(11, 1.5 + 3.4 * rows),
                             height_ratios=[3, 1] * rows, squeeze=False)
    zero = zero_of(c)
    scale, unit = rate_unit(c)
    for index, link in enumerate(c.links):
        rates, status = axes[2 * index][0], axes[2 * index + 1][0]
        for number, end in enumerate(link.ends):
            name, (in_colour, out_colour) = f"{end.switch} {end.port}", COLOURS[number % len(COLOURS)]
            _plot(rates, end.in_bps, zero, f"{name} in", in_colour, scale)
            _plot(rates, end.out_bps, zero, f"{name} out", out_colour, scale)
            _plot(status, end.oper_status, zero, name, in_colour, offset=-0.06 * number, steps=True)
        rates.set_title(link.name, fontsize="medium")
        rates.set_ylabel(unit)
        rates.legend(loc="upper right", fontsize="small")
        status.set_yticks([0, 1], ["down", "up"])
        status.set_ylim(-0.3, 1.2)
        status.set_ylabel("oper")
        status.legend(loc="lower right", fontsize="x-small")
        for ax in (rates, status):
            _mark(ax, c.instants, zero)
    if not c.links:
        axes[0][0].text(0.5, 0.5, "the drill touched no switch's port", ha="center", transform=axes[0][0].transAxes)
    axes[-1][0].set_xlabel("s since the first fault")
    more = f" (the first {len(c.links)} of {c.links_touched} links)" if c.links_touched > len(c.links) else ""
    fig.suptitle(f"{c.drill} on lab {c.lab}: the links' counters{more}\n"
                 f"fault (red), restore (green); dotted = detected, dashed = converged; "
                 f"rates over {c.rate_window_s:g} s, every {c.step_s:g} s")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
