"""Rich rendering of lab health and inventory."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from twin.model.results import Health
from twin.model.state import LabState

_STYLE = {"success": "green", "failure": "red", "error": "magenta", "skipped": "yellow"}


def health_table(state: LabState, health: Health) -> Table:
    verdict = "[green]healthy[/]" if health.healthy else "[red]NOT healthy[/]"
    table = Table(title=f"lab {state.lab} ({state.runtime}): {verdict}", title_justify="left")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail")
    for r in health.results:
        fails = r.failures
        detail = (f"{len(r.items)} items OK" if not fails else
                  "; ".join(f"{i.subject}: {i.message}" for i in fails[:4])
                  + (f" (+{len(fails) - 4} more)" if len(fails) > 4 else ""))
        table.add_row(r.description, f"[{_STYLE[r.status]}]{r.status}[/]", detail)
    table.add_row("BGP sessions Established", "",
                  f"{health.bgp['established']}/{health.bgp['total']}")
    if health.ecmp:
        widths = sorted({(v["min"], v["max"]) for v in health.ecmp.values()})
        table.add_row("ECMP width per leaf (min-max)", "",
                      ", ".join(f"{lo}-{hi}" if lo != hi else str(lo) for lo, hi in widths))
    return table


def inventory_table(state: LabState) -> Table:
    table = Table(title=f"nodes of lab {state.lab}", title_justify="left")
    for col in ("node", "role", "kind", "mgmt", "namespace"):
        table.add_column(col)
    for n in state.nodes:
        table.add_row(n.name, n.role, n.kind, n.mgmt or "-", n.netns)
    return table


def print_notes(console: Console, state: LabState) -> None:
    for note in state.notes:
        console.print(f"[yellow]note:[/] {note}")
