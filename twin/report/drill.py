"""A drill's report for people: a rich table on the terminal and a Markdown summary."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from twin.model.drill import DrillReport


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:g} ms"


def _widths(paths: dict[str, int]) -> str:
    values = sorted(set(paths.values()))
    if not values:
        return "-"
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _shares(dist: dict[str, float]) -> str:
    return "  ".join(f"{k} {v:.0%}" for k, v in dist.items()) or "-"


FIGURES = {  # the fault kinds' own measurements (DrillReport.figures), as the table names them
    "control_plane_down_ms": "control plane down (request to every BGP session Established)",
    "management_silent_ms": "management address silent (SSH, gNMI, gNOI)",
}


def rows(r: DrillReport) -> list[tuple[str, str]]:
    out = [
        ("fault", r.notes[0].removeprefix("faults: ") if r.notes else r.drill),
    ]
    hows = list(dict.fromkeys(a.how for a in r.actions if a.action == "inject" and a.how))
    if hows:
        out.append(("how", "; ".join(hows)))
    out.append(("detect (neighbors declare the peer down)", _ms(r.detect_ms)))
    if r.detect_target_ms is not None:
        out.append(("detect (the failed node's own view)", _ms(r.detect_target_ms)))
    out += [
        ("converge (every FIB as expected)", _ms(r.converge_ms)),
        ("longest probe outage, fault", _ms(r.loss_ms)),
        ("recovery: sessions back", _ms(r.recovery.get("detect_ms"))),
        ("recovery: FIBs back to baseline", _ms(r.recovery.get("converge_ms"))),
        ("longest probe outage, recovery", _ms(r.recovery.get("loss_ms"))),
        ("ECMP width per leaf before / during / after",
         f"{_widths(r.paths_before)} / {_widths(r.paths_during)} / {_widths(r.paths_after)}"),
        ("probe share per spine, before", _shares(r.distribution_before)),
        ("probe share per spine, during", _shares(r.distribution)),
        ("busiest spine / fair share, during", "-" if r.imbalance is None else f"{r.imbalance:g}x"),
        ("flows moved / of which on healthy paths", f"{r.flows_moved} / {r.flows_moved_healthy} of {r.flows}"),
        ("probe packets sent / lost", f"{r.probe.get('sent', 0):g} / {r.probe.get('lost', 0):g}"),
        ("cycle (inject, measure, restore, verify)", f"{r.cycle_s:g} s"),
        ("restored to baseline", "yes" if r.restored else "NO"),
    ]
    out += [(FIGURES.get(name, name), _ms(value) if name.endswith("_ms") else f"{value:g}")
            for name, value in r.figures.items()]
    return out


def drill_table(r: DrillReport) -> RenderableType:
    table = Table(title=f"drill {r.drill} on {r.target} (lab {r.lab})", show_lines=False)
    table.add_column("measurement")
    table.add_column("value")
    for k, v in rows(r):
        table.add_row(k, v)
    parts: list[RenderableType] = [table]
    if len(r.actions) > 2:
        steps = Table(title="actions")
        for col in ("t", "action", "detect", "converge", "outage", "settled"):
            steps.add_column(col)
        for a in r.actions:
            steps.add_row(f"{a.t_ms:g} ms", f"{a.action} {a.kind} {a.target}", _ms(a.detect_ms),
                          _ms(a.converge_ms), _ms(a.loss_ms), "yes" if a.settled else "no")
        parts.append(steps)
    for note in r.notes[1:]:
        parts.append(Text(note, style="red" if note.startswith("NOT RESTORED") else ""))
    verdict = Text("PASSED" if r.passed else "FAILED: " + "; ".join(r.violations),
                   style="bold green" if r.passed else "bold red")
    parts.append(verdict)
    return Group(*parts)


def drill_markdown(r: DrillReport) -> str:
    lines = [f"# Drill {r.drill} on {r.target} (lab {r.lab}): {'PASSED' if r.passed else 'FAILED'}", "",
             "| measurement | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows(r)]
    if r.slo:
        lines += ["", "SLOs: " + ", ".join(f"{k} <= {v:g}" for k, v in r.slo.items())]
    if r.violations:
        lines += ["", "Violations:", *[f"- {v}" for v in r.violations]]
    if len(r.actions) > 2:
        lines += ["", "| t | action | detect | converge | outage | settled |", "|---|---|---|---|---|---|"]
        lines += [f"| {a.t_ms:g} ms | {a.action} {a.kind} {a.target} | {_ms(a.detect_ms)} | {_ms(a.converge_ms)} "
                  f"| {_ms(a.loss_ms)} | {'yes' if a.settled else 'no'} |" for a in r.actions]
    if len(r.notes) > 1:
        lines += ["", *[f"- {n}" for n in r.notes[1:]]]
    return "\n".join(lines) + "\n"
