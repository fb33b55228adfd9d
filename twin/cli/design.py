"""The design commands: `twin size`, `twin graph` and `twin export air` (thin: parse, call twin.design, print).

twin/cli/app.py calls `register(app)`; twin/cli/export.py calls `register_export(export_app)`.
"""

from __future__ import annotations

import shlex
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from twin.cli.common import console, out
from twin.cli.common import emit_json as _emit_json
from twin.model.errors import PlanError, Problem, TwinError
from twin.model.names import check_lab_name

if TYPE_CHECKING:
    from twin.lab.running import RunningLab
    from twin.model.plan import Plan


# SizeRequest field -> the option that sets it, for messages
_OPTIONS = {"gpus": "--gpus", "gpus_per_server": "--gpus-per-server", "nics_per_server": "--nics-per-server",
            "nic_speed": "--nic-speed", "leaf_ports": "--leaf-ports", "spine_ports": "--spine-ports",
            "port_speed": "--port-speed", "oversubscription": "--oversubscription", "planes": "--planes",
            "claim_leaves": "--leaves", "claim_spines": "--spines"}


def _say(text: str) -> None:
    out.print(escape(text), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add `size` and `graph` to the twin app."""
    app.command(name="size")(size_command)
    app.command(name="graph")(graph_command)


def register_export(export_app: typer.Typer) -> None:
    """Add `air` to the `twin export` sub-app."""
    export_app.command(name="air")(export_air_command)


# -- twin size ----------------------------------------------------------------------------------------------------


def _speed(option: str, text: str) -> int:
    from twin.design.quantities import parse_speed

    try:
        return parse_speed(text)
    except ValueError as exc:
        raise PlanError([Problem("twin size", option, str(exc), "e.g. 400G")]) from None


def size_command(
        gpus: Annotated[int, typer.Option("--gpus", help="GPUs in the cluster")],
        gpus_per_server: Annotated[int, typer.Option("--gpus-per-server", help="GPUs per server")],
        leaf_ports: Annotated[int, typer.Option("--leaf-ports", help="ports per leaf switch (its radix)")],
        nics_per_server: Annotated[int | None, typer.Option(
            "--nics-per-server", help="NICs (rails) per server; default: one per GPU")] = None,
        nic_speed: Annotated[str, typer.Option("--nic-speed", help="speed of one NIC port, e.g. 400G")] = "400G",
        spine_ports: Annotated[int | None, typer.Option(
            "--spine-ports", help="ports per spine switch; default: --leaf-ports")] = None,
        port_speed: Annotated[str | None, typer.Option(
            "--port-speed", help="speed of a switch port, e.g. 400G or 800G (a multiple of the NIC speed breaks "
                                 "out into several NIC links); default: --nic-speed")] = None,
        oversubscription: Annotated[str, typer.Option(
            "--oversubscription", help="leaf downlink:uplink bandwidth, 1:1 is non-blocking")] = "1:1",
        rails: Annotated[bool, typer.Option(
            "--rails/--clos", help="rail-optimised (NIC i of every server on rail leaf i of its group) or a Clos "
                                   "(all NICs of a server on one leaf)")] = True,
        planes: Annotated[int, typer.Option(
            "--planes", help="independent two-tier planes: a divisor of the rails (whole rails per plane) or a "
                             "multiple of them (each NIC split over the planes)")] = 1,
        claim_leaves: Annotated[int | None, typer.Option(
            "--leaves", help="check a claimed leaf count against the arithmetic (e.g. a blueprint's)")] = None,
        claim_spines: Annotated[int | None, typer.Option(
            "--spines", help="check a claimed spine count against the arithmetic")] = None,
        output: Annotated[Path | None, typer.Option(
            "-o", "--output", help="write one plane of the fabric as a twin topology YAML (twin plan / twin up "
                                   "take it)")] = None,
        scale_down: Annotated[int | None, typer.Option(
            "--scale-down", help="with -o: S times fewer leaves and servers, same spines, rails and links per "
                                 "pair (a lab that fits one machine)")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print one JSON document on stdout, nothing else")]
        = False) -> None:
    """Size a fabric from a GPU count: leaves, spines, links per pair, cables, bisection; infeasible
    requests get the arithmetic and the nearest buildable alternatives. Exit 1 when it cannot be built."""
    from twin.design.fabric_size import size
    from twin.design.quantities import parse_ratio
    from twin.design.sizing import SizeRequest

    if scale_down is not None and output is None:
        raise PlanError([Problem("twin size", "--scale-down", "scales the topology that -o writes, and no -o was "
                                 "given", "add -o FILE.yaml, or drop --scale-down")])
    nic = _speed("--nic-speed", nic_speed)
    try:
        ratio = parse_ratio(oversubscription)
    except ValueError as exc:
        raise PlanError([Problem("twin size", "--oversubscription", str(exc), "e.g. 1:1 or 3:1")]) from None
    try:
        req = SizeRequest(gpus=gpus, gpus_per_server=gpus_per_server,
                          nics_per_server=nics_per_server or gpus_per_server, nic_speed=nic,
                          leaf_ports=leaf_ports, spine_ports=spine_ports or leaf_ports,
                          port_speed=_speed("--port-speed", port_speed) if port_speed else nic,
                          oversubscription=ratio, mode="rails" if rails else "clos", planes=planes,
                          claim_leaves=claim_leaves, claim_spines=claim_spines)
    except ValidationError as exc:
        raise PlanError([Problem("twin size", _OPTIONS.get(str(err["loc"][0]), str(err["loc"][0])),
                                 f"{err['msg']} (got {err.get('input')!r})", "correct the value")
                         for err in exc.errors()]) from None
    result = size(req)
    doc: dict[str, Any] = result.model_dump(mode="json")
    if output is not None and result.feasible:
        doc["written"] = _write_topology(req, output, scale_down or 1)
    if as_json:
        _emit_json(doc)
    else:
        _print_size(result, doc.get("written"))
    if output is not None and not result.feasible:
        console.print(f"{escape(str(output))} not written: the fabric cannot be built")
    claim_ok = result.claim is None or result.claim.ok
    raise typer.Exit(0 if result.feasible and claim_ok else 1)


def _write_topology(req: Any, output: Path, factor: int) -> dict[str, Any]:
    """Write the topology (checked by planning it first); what was written, for the JSON and the summary."""
    import os
    import tempfile

    from twin.design.sizing import design_plane
    from twin.design.topology_out import scale_down, topology_name, topology_yaml
    from twin.stages.lab_file import load_lab

    shape, plane = design_plane(req)
    scaled = scale_down(req, shape, plane, factor)
    command = "twin " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "twin size"
    text = topology_yaml(topology_name(output.stem), req, shape, plane, scaled, command)
    folder = output.parent if str(output.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".yaml", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        plan = load_lab(Path(tmp)).plan  # what -o writes must plan: checked before it is in place
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return {"topology": str(output), "scale_down": factor, "leaves": scaled.leaves, "spines": scaled.spines,
            "servers": scaled.servers, "pods": scaled.pods, "links_per_pair": scaled.links_per_pair,
            "switches": len(plan.switches), "links": len(plan.links),
            "bgp_sessions": sum(len(n.neighbors) for n in plan.nodes) // 2, "max_paths": plan.max_paths}


def _print_size(result: Any, written: dict[str, Any] | None) -> None:
    from twin.design.sizing import SizeResult

    r: SizeResult = result
    verdict = "[green]buildable in two tiers[/]" if r.feasible else "[red]cannot be built in two tiers[/]"
    out.print(f"{r.gpus:,} GPUs, {r.servers:,} servers x {r.nics_per_server} x {r.nic_speed} NICs "
              f"({r.mode}), {r.leaf_ports}-port leaves, {r.spine_ports}-port spines at {r.port_speed}"
              + (f", {r.planes} planes" if r.planes > 1 else "") + f": {verdict}", highlight=False)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    per_plane = max(r.rails // r.planes, 1)
    rows = [("leaves", f"{r.leaves:,}" + (f" ({r.pods:,} rail group(s) of {per_plane} rails"
                                          + (f" in each of {r.planes} planes)" if r.planes > 1 else ")")
                                          if r.pods and r.mode == "rails" else ""))]
    if r.feasible:
        spread = next((a for a in r.alternatives if a.kind == "more-spines"), None)
        rows += [("spines", f"{r.spines:,} (the fewest)" if spread else f"{r.spines:,}"),
                 ("links per leaf-spine pair", str(r.links_per_pair)),
                 ("ECMP width", f"{r.ecmp_width} paths per leaf")]
        if spread is not None:
            rows.append(("or more spines", f"{spread.details['spines']:,} spines x 1 link per pair: a spine lost "
                         f"takes {100 * float(spread.details['spine_loss_share']):.3g} % of a leaf's uplinks, not "
                         f"{100 * float(spread.details['fewest_spines_loss_share']):.3g} % (spine counts that fit: "
                         f"{spread.details['spine_counts']})"))
        elif r.spines:
            rows.append(("failure domain", "the most spines already: 1 link per leaf-spine pair"))
    rows += [("servers per leaf", f"{r.servers_per_leaf:,}"),
             ("leaf ports", f"{r.leaf_ports_down} to NICs + {r.leaf_ports_up} up of {r.leaf_ports}")]
    if r.feasible:
        rows += [("oversubscription", r.oversubscription), ("bisection", f"{r.bisection_tbps:,} Tb/s")]
        rows += [(f"{c.between} links", f"{c.links:,} x {c.speed}, {c.medium}: {c.cables:,} cables, "
                  f"{c.transceivers:,} transceivers") for c in r.cables]
        rows.append(("optics", f"{r.optics:,} transceivers"))
    rows.append(("largest in two tiers", f"{r.max_two_tier.gpus:,} GPUs ({r.max_two_tier.servers:,} servers, "
                 f"{r.max_two_tier.leaves:,} leaves, {r.max_two_tier.spines:,} spines)"))
    for key, value in rows:
        table.add_row(key, escape(value))
    out.print(table)
    out.print("[bold]arithmetic[/]")
    for line in r.arithmetic:
        _say(f"  {line}")
    for note in r.notes:
        _say(f"note: {note}")
    if r.feasible:
        for alt in r.alternatives:
            _say(f"alternative: {alt.summary}")
    if not r.feasible:
        _say(f"why not: {r.reason}")
        if r.alternatives:
            out.print("[bold]nearest buildable alternatives[/]")
            for alt in r.alternatives:
                _say(f"  - {alt.summary}")
    if r.claim is not None:
        claimed = ", ".join(f"{v:,} {k}" for k, v in (("leaves", r.claim.leaves), ("spines", r.claim.spines))
                            if v is not None)
        if r.claim.ok:
            out.print(f"[green]claim holds:[/] {escape(claimed)}")
        else:
            out.print(f"[red]claim does not hold:[/] {escape(claimed)}")
            for problem in r.claim.problems:
                _say(f"  - {problem}")
    if written:
        _say(f"wrote {written['topology']}: {written['leaves']} leaves, {written['spines']} spines, "
             f"{written['servers']} servers, {written['links_per_pair']} link(s) per pair"
             + (f" (scaled down {written['scale_down']}x)" if written["scale_down"] > 1 else "")
             + f"; planned: {written['switches']} switches, {written['links']} links, {written['bgp_sessions']} "
               f"eBGP sessions, maximum-paths {written['max_paths']}")
        _say(f"bring it up with: twin up {written['topology']}")


# -- twin graph ---------------------------------------------------------------------------------------------------


class Detail(StrEnum):
    auto = "auto"
    full = "full"
    summary = "summary"


GRAPH_SUFFIXES = (".svg", ".png", ".html")


def graph_command(
        output: Annotated[Path, typer.Option("-o", "--output", help="FILE.svg, FILE.png or FILE.html (one "
                                             "self-contained page that works offline)")],
        topology: Annotated[Path | None, typer.Argument(
            help="topology or lab YAML, containerlab .clab.yml, or NVIDIA Air .json/.dot")] = None,
        name: Annotated[str | None, typer.Option("--name", "-n", help="draw a running lab instead, its links and "
                                                 "BGP sessions coloured by state (what `twin status` reads)")] = None,
        detail: Annotated[Detail, typer.Option("--detail", help="full: every node; summary: counts with one rail "
                                               "(or group of leaves) expanded; auto: summary for large fabrics")]
        = Detail.auto,
        watch: Annotated[float | None, typer.Option("--watch", help="with --name and an .html file: rewrite it from "
                                                    "the lab's state every SECONDS until interrupted (Ctrl-C); the "
                                                    "page reloads itself at that pace", min=0.5)] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print one JSON document on stdout, nothing else")]
        = False) -> None:
    """Draw the fabric by tier and rail: spines on top, leaves, servers with a port per NIC coloured by rail."""
    if name is not None:
        check_lab_name(name)   # a name is a name, never a path
    problems = []
    if (topology is None) == (name is None):
        problems.append(Problem("twin graph", "TOPOLOGY / --name", "give a topology file or --name of a running "
                                "lab (one of them)", "e.g. twin graph labs/default.yaml -o fabric.html"))
    if output.suffix.lower() not in GRAPH_SUFFIXES:
        problems.append(Problem("twin graph", "-o", f"'{output.name}' is not a picture twin writes",
                                f"name the file with one of {', '.join(GRAPH_SUFFIXES)}"))
    if watch is not None and (name is None or output.suffix.lower() != ".html"):
        problems.append(Problem("twin graph", "--watch", "refreshes the HTML page of a running lab",
                                "use it with --name LAB and -o FILE.html"))
    if problems:
        raise PlanError(problems)
    if name is not None:
        from twin.design.live import running

        lab = running(name)
        state, plan = lab, lab.plan
    else:
        from twin.stages.lab_file import load_lab

        assert topology is not None
        state, plan = None, load_lab(topology).plan
    summary = _draw(plan, state, output, detail.value, watch or 0)
    if as_json:
        _emit_json(summary)
    else:
        _say(_graph_line(summary))
    if watch:
        _watch(plan, name or "", output, detail.value, watch)


def _draw(plan: Plan, state: RunningLab | None, output: Path, detail: str, refresh: float) -> dict[str, Any]:
    """Draw once (with the running lab's fresh state when `state` is given); what was drawn."""
    import os
    import tempfile

    from twin.design.fabric_graph import from_plan
    from twin.design.layout import layout

    live = None
    if state is not None:
        from twin.design.live import collect_live

        live = collect_live(state)
    graph = from_plan(plan)
    lay = layout(graph, detail)  # type: ignore[arg-type]
    suffix = output.suffix.lower()
    folder = output.parent if str(output.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        if suffix == ".png":
            from twin.design.png import write_png

            write_png(lay, Path(tmp), live)
        elif suffix == ".svg":
            from twin.design.svg import render_svg

            Path(tmp).write_text(render_svg(lay, live))
        else:
            from twin.design.html import render_html

            Path(tmp).write_text(render_html(graph, lay, live, refresh))
        os.chmod(tmp, 0o644)
        os.replace(tmp, output)   # a reader (the page reloading itself) never sees half a file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return {"written": str(output), "lab": plan.name, "nodes": len(graph.nodes), "links": len(graph.links),
            "drawn": len(lay.nodes), "summary": lay.summary,
            "live": None if live is None else {
                "lab": live.lab, "healthy": live.healthy, "bgp": live.bgp,
                "links_up": sum(1 for s in live.links.values() if s == "up"), "links": len(live.links),
                "problems": live.problems}}


def _graph_line(summary: dict[str, Any]) -> str:
    text = (f"wrote {summary['written']}: {summary['nodes']} nodes, {summary['links']} links"
            + (" (summarised)" if summary["summary"] else ""))
    live = summary["live"]
    if live:
        text += (f"; lab {live['lab']} {'healthy' if live['healthy'] else 'not healthy'}, links up "
                 f"{live['links_up']}/{live['links']}, BGP {live['bgp'].get('established', 0)}/"
                 f"{live['bgp'].get('total', 0)} Established")
    return text


def _watch(plan: Plan, lab: str, output: Path, detail: str, every: float) -> None:
    """Rewrite the page from the lab's state every `every` seconds until interrupted or the lab is gone."""
    import time

    from twin.lab.running import RunningLab

    console.print(f"watching lab {lab}: {output} is rewritten every {every:g} s (open it in a browser; Ctrl-C stops)")
    next_at = time.monotonic() + every
    try:
        while True:
            time.sleep(max(0.0, next_at - time.monotonic()))
            next_at = time.monotonic() + every   # a pace of `every` from start to start; slower reads run back to back
            state = RunningLab.read(lab)
            if state is None:
                console.print(f"lab {lab} is gone: stopped watching; {output} keeps its last state")
                return
            summary = _draw(plan, state, output, detail, every)
            # on stderr: with --json, stdout holds the one JSON document of the first drawing
            console.print(escape(f"{time.strftime('%H:%M:%S')} {_graph_line(summary)}"), highlight=False,
                          soft_wrap=True)
    except KeyboardInterrupt:
        console.print("stopped watching")


# -- twin export air --------------------------------------------------------------------------------------------------


class AirFormat(StrEnum):
    json = "json"
    dot = "dot"


def export_air_command(
        topology: Annotated[Path, typer.Argument(help="lab or topology YAML, or a containerlab .clab.yml")],
        output: Annotated[Path, typer.Option("-o", "--output", help="the Air topology to write (.json or .dot)")],
        fmt: Annotated[AirFormat | None, typer.Option("--format", help="json or dot; default: the file's suffix")]
        = None,
        switch_os: Annotated[str, typer.Option("--switch-os", help="Air image of the switches")] = "sonic-vs-202305",
        server_os: Annotated[str, typer.Option("--server-os", help="Air image of the servers")] = "generic/ubuntu2404",
        as_json: Annotated[bool, typer.Option("--json", help="print one JSON document on stdout, nothing else")]
        = False) -> None:
    """Write the lab as an NVIDIA Air topology (JSON, which Air recommends, or DOT); twin reads both back."""
    try:
        summary = _export_air(topology, output, fmt, switch_os, server_os)
    except TwinError as exc:  # as the other export commands do, wherever the sub-app is mounted
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if as_json:
        _emit_json(summary)
    else:
        _say(f"wrote {summary['written']} ({summary['format']}): {summary['nodes']} nodes, {summary['links']} links; "
             "import it in NVIDIA Air (Create Simulation, then upload the file)")


def _export_air(topology: Path, output: Path, fmt: AirFormat | None, switch_os: str, server_os: str) -> dict[str, Any]:
    from twin.stages.lab_file import load_lab
    from twin.stages.load.air import to_air_dot, to_air_json

    kind = fmt.value if fmt is not None else output.suffix.lower().lstrip(".")
    if kind not in ("json", "dot"):
        raise PlanError([Problem("twin export air", "-o", f"cannot tell the format of '{output.name}'",
                                 "name it .json or .dot, or pass --format json|dot")])
    plan = load_lab(topology).plan
    text = to_air_json(plan, switch_os, server_os) if kind == "json" else to_air_dot(plan, switch_os, server_os)
    if output.parent != Path(""):
        output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    return {"written": str(output), "format": kind, "topology": plan.name, "nodes": len(plan.nodes),
            "links": len(plan.links)}
