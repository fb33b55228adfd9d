"""`twin telemetry up|down|status`: a real Prometheus fed over gNMI, for a running lab."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from twin.cli.common import JsonOpt, NameOpt, console, emit_json, out, resolve_name
from twin.model.errors import TwinError

if TYPE_CHECKING:
    from twin.model.counters import DrillCounters
    from twin.model.drill import DrillReport

telemetry_app = typer.Typer(help="Watch a lab as a SONiC fabric is watched: gNMI subscriptions into Prometheus.",
                            no_args_is_help=True)


def _print(doc: dict[str, Any]) -> None:
    out.print(f"lab {doc['lab']}: Prometheus {doc['prometheus']} (its graph: {doc['prometheus']}/graph), "
              f"metrics {doc['collector']}")


@telemetry_app.command("up")
def up(name: NameOpt = None, as_json: JsonOpt = False,
       sample_s: Annotated[float, typer.Option(min=1, max=300, help="SAMPLE interval of the COUNTERS_DB "
                                               "subscriptions, seconds (sonic-gnmi's minimum is 1)")] = 5.0,
       scrape_s: Annotated[float, typer.Option(min=1, max=300, help="how often Prometheus scrapes the "
                                               "collector, seconds")] = 5.0) -> None:
    """Start the lab's telemetry: a collector subscribing to every switch over gNMI, and Prometheus."""
    from twin.telemetry.service import telemetry_up

    lab = resolve_name(name)
    with console.status(f"starting telemetry of lab {lab}"):
        doc = telemetry_up(lab, sample_s=sample_s, scrape_s=scrape_s)
    if as_json:
        emit_json(doc)
    else:
        _print(doc)


@telemetry_app.command("down")
def down(name: NameOpt = None) -> None:
    """Stop the lab's telemetry and remove its data (`twin down` does too)."""
    from twin.telemetry.service import telemetry_down

    lab = resolve_name(name)
    out.print(f"lab {lab}: telemetry " + ("stopped" if telemetry_down(lab) else "was not running"))


@telemetry_app.command("status")
def status(name: NameOpt = None, as_json: JsonOpt = False) -> None:
    """Whether the lab's telemetry runs, and how its switches' subscriptions go."""
    from twin.telemetry.service import telemetry_status

    doc = telemetry_status(resolve_name(name))
    if as_json:
        emit_json(doc)
    elif not doc["up"]:
        out.print(f"lab {doc['lab']}: telemetry is not running ('twin telemetry up')")
    else:
        _print(doc)
        out.print(f"switches subscribed: {doc.get('switches_up', 0)}/{doc.get('switches', 0)}; scrape: " +
                  ", ".join(f"{t['health']}{' ' + t['error'] if t['error'] else ''}" for t in doc.get("targets", [])))
    if not doc["up"]:
        raise typer.Exit(1)


@telemetry_app.command("dashboards")
def dashboards(folder: Annotated[Path, typer.Argument(help="a new or empty folder, or one twin wrote "
                                                            "dashboards into before")],
               as_json: JsonOpt = False) -> None:
    """Write the Grafana dashboards of a lab's telemetry (fabric overview, RoCE queues, a drill) as JSON
    to import into Grafana, each with a Prometheus datasource variable and a lab variable."""
    from twin.host.owned import write_owned
    from twin.telemetry.dashboards import render

    written = write_owned(folder, render(), "twin telemetry dashboards", prune=True)
    if as_json:
        emit_json({"folder": str(folder), "dashboards": [str(p) for p in written]})
    else:
        out.print("dashboards: " + ", ".join(str(p) for p in written))


def drill_counters_or_none(report: DrillReport) -> DrillCounters | None:
    """For `twin drill --report`: the counters of the links the drill touched, from the lab's Prometheus
    when its telemetry runs; a Prometheus that does not answer costs the plot, not the drill's report."""
    from twin.telemetry.drill_counters import drill_counters

    try:
        return drill_counters(report)
    except TwinError as exc:
        console.print(f"[yellow]no counter plot: {exc}[/yellow]")
        return None


def register(app: typer.Typer) -> None:
    app.add_typer(telemetry_app, name="telemetry")
