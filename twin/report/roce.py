"""`twin traffic`'s RoCE what-ifs in words: a rich table of the incast queues and Markdown lines, each
labelled a model."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from twin.model.traffic import IncastQueue, RoceWhatIf

SHOWN = 10   # incast queues and breaks listed; the JSON has them all


def size(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def summary(r: RoceWhatIf) -> str:
    source = "the lab's roce.compute_dscp" if r.dscp_from == "lab" else "twin's RoCE class; the lab names none"
    congested = len(r.incast)
    return (f"RoCE (model): DSCP {r.dscp} ({source}); {r.lossless_flows}/{r.flows} flows lossless on every hop; "
            f"{congested} egress queue{'s' if congested != 1 else ''} offered more than line rate")


def break_lines(r: RoceWhatIf) -> list[str]:
    lines = [f"{b.switch} {b.port} ({b.side}, {b.flows} flows): {b.problem} [{b.where}]; {b.fix}"
             for b in r.breaks[:SHOWN]]
    if len(r.breaks) > SHOWN:
        lines.append(f"... and {len(r.breaks) - SHOWN} more (--json)")
    return lines


def _cells(q: IncastQueue) -> tuple[str, ...]:
    return (f"{q.switch} {q.port} q{q.queue if q.queue is not None else '?'}", str(q.flows),
            f"{q.offered_gbps:g}/{q.capacity_gbps:g}", size(q.burst_bytes), size(q.backlog_bytes),
            size(q.ecn_min_bytes), size(q.pfc_pause_bytes), q.first)


COLUMNS = ("egress queue", "flows", "offered/line Gb/s", "burst", "backlog", "ECN Kmin", "PFC pause at", "first")


def roce_table(r: RoceWhatIf) -> RenderableType:
    parts: list[RenderableType] = [Text(summary(r))]
    parts += [Text(line) for line in break_lines(r)]
    if r.incast:
        table = Table(title="incast: a burst's backlog against ECN and PFC (model)", title_justify="left")
        for col in COLUMNS:
            table.add_column(col, justify="left" if col in ("egress queue", "first") else "right", overflow="fold")
        for q in r.incast[:SHOWN]:
            table.add_row(*_cells(q))
        parts.append(table)
        if len(r.incast) > SHOWN:
            parts.append(Text(f"... and {len(r.incast) - SHOWN} more queues (--json)"))
    return Group(*parts)


def roce_markdown(r: RoceWhatIf) -> list[str]:
    lines = ["", summary(r) + f". {r.model[0].upper()}{r.model[1:]}."]
    if r.breaks:
        lines += ["", *(f"- {line}" for line in break_lines(r))]
    if r.incast:
        lines += ["", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(_cells(q)) + " |" for q in r.incast[:SHOWN]]
    return lines
