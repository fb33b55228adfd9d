"""A Layout as a PNG picture, drawn with matplotlib (the same layout, colours and states as the SVG)."""

from __future__ import annotations

from pathlib import Path

from twin.design.layout import Layout
from twin.design.live_state import ESTABLISHED, LiveState
from twin.design.svg import SESSION_BAD, SESSION_OK, STATE_COLOR, canvas_height, edge_state, legend_items, subtitle

DPI = 100
PT = 72 / DPI   # points per pixel


def write_png(layout: Layout, path: Path, live: LiveState | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Circle, FancyBboxPatch, PathPatch, Rectangle
    from matplotlib.path import Path as MplPath

    width, height = layout.width, canvas_height(layout, live)
    fig = plt.figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)   # y grows downwards, as in the SVG
    ax.axis("off")
    ax.text(12, 24, f"{layout.title} ({layout.kind})", fontsize=16 * PT, fontweight="bold", va="baseline")
    ax.text(12, 42, subtitle(layout, live), fontsize=12 * PT, color="#495057", va="baseline")
    for i, note in enumerate(layout.notes):
        ax.text(12, 58 + 14 * i, note, fontsize=12 * PT, color="#495057", va="baseline")
    for row in layout.rows:
        ax.text(12, row.y + 4, row.text, fontsize=12 * PT, color="#495057", va="baseline")
    straight = [e for e in layout.edges if not e.bend]
    colors = [STATE_COLOR[s] if (s := edge_state(e, live)) else e.color for e in straight]
    ax.add_collection(LineCollection([((e.x1, e.y1), (e.x2, e.y2)) for e in straight], colors=colors,
                                     linewidths=[e.width * PT * 1.3 for e in straight], zorder=1))
    for e in layout.edges:
        state = edge_state(e, live)
        color = STATE_COLOR[state] if state else e.color
        if e.bend:
            mx, my = (e.x1 + e.x2) / 2, min(e.y1, e.y2) - e.bend
            curve = MplPath([(e.x1, e.y1), (mx, my), (e.x2, e.y2)], [MplPath.MOVETO, MplPath.CURVE3, MplPath.CURVE3])
            ax.add_patch(PathPatch(curve, fill=False, edgecolor=color, linewidth=e.width * PT * 1.3, zorder=1))
        if e.label:
            ax.text(e.x1 + (e.x2 - e.x1) * 0.8 + 4, e.y1 + (e.y2 - e.y1) * 0.8, e.label, fontsize=10 * PT,
                    color="#343a40", zorder=4)
        if live is not None and e.kind != "bundle" and not e.bend:
            for end, iface, (x, y), (ox, oy) in ((e.a, e.a_iface, (e.x1, e.y1), (e.x2, e.y2)),
                                                 (e.b, e.b_iface, (e.x2, e.y2), (e.x1, e.y1))):
                session = live.sessions.get(f"{end}:{iface}")
                if session is None:
                    continue
                length = max(((ox - x) ** 2 + (oy - y) ** 2) ** 0.5, 1.0)
                ax.add_patch(Circle((x + (ox - x) * 12 / length, y + (oy - y) * 12 / length), 3.2, zorder=5,
                                    color=SESSION_OK if session == ESTABLISHED else SESSION_BAD))
    for box in layout.nodes:
        failed = live is not None and box.kind != "group" and live.nodes.get(box.name) == "failed"
        edge = "#d00000" if failed else "#343a40"
        if box.kind == "dot":
            ax.add_patch(Circle((box.cx, box.y + box.h / 2), box.w / 2, facecolor=box.fill, edgecolor=edge,
                                linewidth=2 if failed else 0.5, zorder=3))
            continue
        ax.add_patch(FancyBboxPatch((box.x, box.y), box.w, box.h, boxstyle="round,pad=0,rounding_size=5",
                                    facecolor=box.fill, edgecolor=edge, linewidth=2 if failed else 0.7, zorder=3))
        ax.text(box.cx, box.y + box.h / 2 + 4, box.label, ha="center", va="baseline", color=box.text, zorder=4,
                fontsize=(12 if box.kind == "group" else 11) * PT,
                fontweight="bold" if box.kind == "group" else "normal")
        for port in box.ports:
            ax.add_patch(Rectangle((port.x - 4, port.y - 4), 8, 8, facecolor=port.color, edgecolor="#343a40",
                                   linewidth=0.4, zorder=4))
    for label, color, x, y in legend_items(layout, live):
        ax.add_patch(Rectangle((x, y - 9), 10, 10, facecolor=color, edgecolor="#343a40", linewidth=0.4))
        ax.text(x + 14, y, label, fontsize=11 * PT, va="baseline", color="#343a40")
    fig.savefig(path, dpi=DPI, facecolor="white")
    plt.close(fig)
