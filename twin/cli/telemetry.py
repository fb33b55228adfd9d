"""`twin telemetry up|down|status`: a real Prometheus fed over gNMI, for a running lab."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from twin.cli.common import JsonOpt, NameOpt, console, emit_json, out, resolve_name

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


def register(app: typer.Typer) -> None:
    app.add_typer(telemetry_app, name="telemetry")
