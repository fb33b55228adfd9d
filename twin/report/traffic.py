"""`twin traffic`'s reports: a rich table, a Markdown summary, a leaf x spine heatmap (PNG) and the
report folder (`--report DIR`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from twin.host.owned import Content, write_owned
from twin.model.traffic import CollectiveFigures, GroupFigures, LinkLoad, Metrics, TrafficReport
from twin.report.roce import roce_markdown, roce_table

MOMENTS = ("before", "during", "after")


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def moments(r: TrafficReport) -> list[tuple[str, Metrics]]:
    return [(name, m) for name in MOMENTS if (m := getattr(r, name)) is not None]


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _ms(value: float | None) -> str:
    return "never" if value is None else f"{value:.3f} ms"


def collective_title(r: TrafficReport) -> str:
    return f"model: {r.collective}, n={r.n}, {_size(r.message_bytes)} per rank, algo_factor {r.algo_factor:.4g}"


def collective_rows(r: TrafficReport) -> list[tuple[str, CollectiveFigures, float]]:
    """(moment, figures, busbw share): the fabric's moments, then the iteration a fault lands in."""
    rows: list[tuple[str, CollectiveFigures, float]] = [(name, m, m.busbw_share) for name, m in moments(r)]
    if r.failure_iteration is not None:
        rows.append(("fault iteration", r.failure_iteration, r.failure_iteration.busbw_share))
    return rows


def _slowest(groups: dict[str, GroupFigures]) -> tuple[str, GroupFigures] | None:
    return max(groups.items(), key=lambda kv: float("inf") if kv[1].completion_ms is None else kv[1].completion_ms,
               default=None)


def fault_lines(r: TrafficReport) -> list[str]:
    """The outage charged, who stood still, what the iteration lost, and the slowest rail and pod."""
    lines = []
    if r.failure_iteration is not None and r.blast_radius is not None:
        b = r.blast_radius
        lines.append(f"Outage {_num(r.outage_ms, '{:.0f}')} ms, charged only to the {b.crossed_flows} of {r.flows} "
                     f"flows whose path crossed {r.fault}; {len(b.delayed_pairs)} GPU pairs finished later")
        lines.append("JCT: the fault iteration's collective takes "
                     + ("forever (some flows have no path)" if r.jct_extra_ms is None else
                        f"{r.jct_extra_ms:+.3f} ms, {r.jct_overhead:.1%} of a {r.iteration_ms:g} ms iteration"))
        lines.append(f"Healthy flows moved anyway: {b.moved_healthy} ({b.moved_healthy_share:.0%})")
    last = r.failure_iteration or r
    for what, groups in (("rail", last.by_rail), ("pod", last.by_pod)):
        slowest = _slowest(groups)
        if slowest is not None and len(groups) > 1:
            key, g = slowest
            lines.append(f"Slowest {what}{' in the fault iteration' if r.failure_iteration else ''}: {key} "
                         f"({_ms(g.completion_ms)}, busbw {g.busbw_gbps:g} Gb/s)")
    return lines


def traffic_table(r: TrafficReport) -> RenderableType:
    """Two narrow tables (the fabric's moments; the collective's figures, labelled a model) and the
    fault's lines; every column folds rather than cuts its text."""
    title = f"{r.pattern} on {r.lab}: {r.gpus} GPUs, {r.qps} QP(s) per pair, {r.flows} flows"
    if r.fault:
        title += f", fault {r.fault}"
    fabric = Table(title=title, title_justify="left")
    for col in ("", "resolved", "MMR", "JFI", "idle uplinks", "busiest uplink"):
        fabric.add_column(col, justify="right" if col else "left", overflow="fold")
    for name, m in moments(r):
        busiest = max(m.uplink_loads, key=lambda lk: lk.load, default=None)
        fabric.add_row(name, f"{m.resolved}/{m.flows}", _num(m.mmr), _num(m.jfi, "{:.3f}"),
                       f"{m.idle_uplinks}/{m.uplinks}",
                       f"{busiest.a}->{busiest.b} ({busiest.flows} flows)" if busiest and busiest.flows else "-")
    collective = Table(title=collective_title(r), title_justify="left")
    for col in ("", "completion", "algbw Gb/s", "busbw Gb/s", "busbw share"):
        collective.add_column(col, justify="right" if col else "left", overflow="fold")
    for name, f, busbw_share in collective_rows(r):
        collective.add_row(name, _ms(f.completion_ms), f"{f.algbw_gbps:g}", f"{f.busbw_gbps:g}", f"{busbw_share:.0%}")
    roce = [roce_table(r.roce)] if r.roce is not None else []
    return Group(fabric, collective, *(Text(line) for line in fault_lines(r)), *roce)


def traffic_markdown(r: TrafficReport) -> str:
    lines = [f"## twin traffic {r.pattern} on {r.lab}", "",
             f"{r.gpus} GPUs, {r.qps} queue pair(s) per GPU pair, {r.flows} flows (UDP dport 4791)"
             + (f"; fault {r.fault}" if r.fault else ""), "",
             "| moment | resolved | MMR | JFI | idle uplinks | busbw share |", "|---|---|---|---|---|---|"]
    for name, m in moments(r):
        lines.append(f"| {name} | {m.resolved}/{m.flows} | {_num(m.mmr)} | {_num(m.jfi, '{:.3f}')} | "
                     f"{m.idle_uplinks}/{m.uplinks} | {m.busbw_share:.0%} |")
    lines += ["", f"The collective by flow-level simulation ({collective_title(r)}; line rate "
              f"{r.line_rate_gbps:g} Gb/s):", "",
              "| moment | completion | algbw Gb/s | busbw Gb/s | busbw share |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {_ms(f.completion_ms)} | {f.algbw_gbps:g} | {f.busbw_gbps:g} | {share:.0%} |"
              for name, f, share in collective_rows(r)]
    if r.blast_radius is not None:
        b = r.blast_radius
        lines += ["", f"GPU pairs losing bandwidth while the fault is in place: {len(b.pairs)}; rails: "
                  + (", ".join(f"{k} (-{v:.0%})" for k, v in b.rails.items()) or "none")]
    extra = fault_lines(r)
    if extra:
        lines += ["", *extra]
    if r.roce is not None:
        lines += roce_markdown(r.roce)
    return "\n".join(lines) + "\n"


def _matrix(loads: list[LinkLoad]) -> tuple[list[str], list[str], list[list[float]]]:
    """Leaf x spine: the mean offered load of the uplinks from each leaf to each spine."""
    leaves = sorted({lk.a for lk in loads}, key=_natural)
    spines = sorted({lk.b for lk in loads}, key=_natural)
    cells: dict[tuple[str, str], list[float]] = {}
    for lk in loads:
        cells.setdefault((lk.a, lk.b), []).append(lk.load)
    grid = [[sum(cells.get((leaf, spine), [0.0])) / len(cells.get((leaf, spine), [0.0])) for spine in spines]
            for leaf in leaves]
    return leaves, spines, grid


def _natural(name: str) -> tuple[str, int]:
    stem = name.rstrip("0123456789")
    return stem, int(name[len(stem):] or 0)


def heatmap_png(r: TrafficReport, path: Path) -> None:
    """One panel per moment: leaves down, spines across, colour = offered load of that uplink."""
    panels = [(name, m) for name, m in moments(r) if m.uplink_loads] or [("now", Metrics(
        flows=r.flows, resolved=r.flows, links=r.links, uplinks=0, mmr=None, jfi=None, idle_uplinks=0,
        busbw_share=r.busbw_share))]
    top = max((lk.load for _, m in panels for lk in m.uplink_loads), default=1.0) or 1.0
    fig, axes = plt.subplots(1, len(panels), figsize=(3 + 3.5 * len(panels), 6.5), squeeze=False,
                             layout="constrained")
    image = None
    shown: list[str] = []
    for ax, (name, m) in zip(axes[0], panels, strict=True):
        leaves, spines, grid = _matrix(m.uplink_loads)
        if not leaves:
            ax.set_title(f"{name}: no flow crosses a spine")
            ax.axis("off")
            continue
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=top, aspect="auto")
        ax.set_xticks(range(len(spines)), spines, rotation=45, ha="right")
        ax.set_yticks(range(len(leaves)), leaves if leaves != shown else [""] * len(leaves))
        shown = leaves
        ax.set_title(f"{name}: MMR {_num(m.mmr)}, JFI {_num(m.jfi, '{:.3f}')}")
        for y, row in enumerate(grid):
            for x, value in enumerate(row):
                ax.text(x, y, f"{value:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if value < top / 2 else "black")
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), label="offered load / line rate")
    fig.suptitle(f"{r.pattern}, {r.qps} QP(s) per pair on {r.lab}" + (f", fault {r.fault}" if r.fault else ""))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_traffic_reports(r: TrafficReport, directory: Path) -> list[Path]:
    """JSON, Markdown and the heatmap, named after the lab, pattern and QPs (earlier reports stay)."""
    stem = f"{r.lab}-{r.pattern}-{r.qps}qp" + (f"-{r.fault.replace(':', '-')}" if r.fault else "")
    files: dict[str, Content] = {f"{stem}.json": r.model_dump_json(indent=1),
                                 f"{stem}.md": traffic_markdown(r),
                                 f"{stem}.png": lambda path: heatmap_png(r, path)}
    return write_owned(directory, files, "twin traffic --report", prune=False)
