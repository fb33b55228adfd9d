"""The `twin` command line. Thin: parse, call the library, render. Errors exit 2 with a message."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from twin.cli import design as design_cli
from twin.cli import reference as reference_cli
from twin.cli import telemetry as telemetry_cli
from twin.cli import traffic as traffic_cli
from twin.cli.common import (
    ImageOpt,
    JsonOpt,
    NameOpt,
    RuntimeOpt,
    TemplatesOpt,
    console,
    out,
)
from twin.cli.common import emit_json as _emit_json
from twin.cli.common import resolve_name as _resolve_name
from twin.lab.agent_preload import PreloadedAgent
from twin.model.errors import TwinError
from twin.model.phases import Phases, recording

if TYPE_CHECKING:
    from twin.model.lab import Lab

app = typer.Typer(help="A digital twin of AI-training network fabrics.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
traffic_cli.register(app)
telemetry_cli.register(app)   # twin telemetry up|down|status
design_cli.register(app)   # twin size, twin graph
reference_cli.register(app)   # twin reference install


@app.command()
def plan(topology: Annotated[Path, typer.Argument(help="topology or lab YAML, or a containerlab .clab.yml")],
         output: Annotated[Path | None, typer.Option("-o", "--output", help="write configs here: a new or "
                                               "empty folder, or one twin wrote before (its .twin-written)")] = None,
         as_json: JsonOpt = False) -> None:
    """Plan a fabric (no root): ASNs, addresses, sessions; with -o, write config_db.json and frr.conf."""
    from twin.stages.lab_file import load_lab
    from twin.stages.render.write import write_configs

    lab = load_lab(topology)
    p = lab.plan
    written = write_configs(p, output) if output else []
    summary = {
        "topology": p.name, "kind": p.kind, "max_paths": p.max_paths,
        "nodes": {role: len(p.by_role(role)) for role in ("spine", "leaf", "router", "server", "host")
                  if p.by_role(role)},
        "links": len(p.links), "bgp_sessions": sum(len(n.neighbors) for n in p.nodes) // 2,
        "written": [str(w) for w in written],
    }
    if as_json:
        _emit_json(summary)
        return
    table = Table(title=f"plan of {p.name} ({p.kind})", title_justify="left")
    for col in ("node", "role", "ASN", "loopback", "ports", "sessions"):
        table.add_column(col)
    for n in p.nodes[:60]:
        table.add_row(n.name, n.role, str(n.asn or "-"), str(n.loopback or "-"), str(len(n.interfaces)),
                      str(len(n.neighbors)))
    if len(p.nodes) > 60:
        table.add_row(f"... {len(p.nodes) - 60} more", "", "", "", "", "")
    out.print(table)
    out.print(f"{summary['links']} links, {summary['bgp_sessions']} eBGP sessions, maximum-paths {p.max_paths}")
    if output:
        out.print(f"wrote {len(written)} files under {output}")


@app.command()
def up(target: Annotated[Path, typer.Argument(help="lab or topology YAML")],
       name: NameOpt = None,
       runtime: RuntimeOpt = None,
       image: ImageOpt = None,
       timeout: Annotated[float | None, typer.Option(help="seconds to wait for a healthy fabric")] = None,
       sonic_templates: TemplatesOpt = None,
       telemetry: Annotated[bool, typer.Option("--telemetry", help="then start its telemetry: gNMI "
                                               "subscriptions into Prometheus (twin telemetry up)")] = False,
       as_json: JsonOpt = False) -> None:
    """Bring a lab up and wait until it is healthy (sessions, ECMP, server pings)."""
    from twin.host.processes import started_monotonic

    phases = Phases(start=started_monotonic())  # from the process's start: Python and the CLI count
    phases.reach("cli_start")
    from twin.host.rundir import lab_dir
    from twin.model.names import check_lab_name
    from twin.stages.lab_file import load_lab

    if name is not None:
        check_lab_name(name)   # before anything is read: a name is a name, never a path
    lab = load_lab(target)
    lab_name = name if name is not None else lab.name
    check_lab_name(lab_name, str(target) if name is None else "--name")
    from twin.host.signals import restoring_on_signals

    # SIGTERM and SIGHUP end it as Ctrl-C does: a lab not yet judged is removed; exit 128 + the signal
    with restoring_on_signals("removing what the bring-up made"), \
            PreloadedAgent(lab_dir(lab_name)) as agent:  # it loads itself on the idle CPU meanwhile
        _up(phases, agent, lab, lab_name, runtime, image, timeout, sonic_templates, telemetry, as_json)


def _up(phases: Phases, agent: PreloadedAgent, lab: Lab, lab_name: str, runtime: str | None,
        image: str | None, timeout: float | None, sonic_templates: Path | None, telemetry: bool,
        as_json: bool) -> None:
    from twin.flows.bringup import bring_up
    from twin.model.results import Health
    from twin.report.health import health_table, print_notes
    from twin.stages.render.sonic_templates import find_templates

    templates = find_templates(sonic_templates)
    phases.reach("plan")
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                  TimeElapsedColumn(), console=console, transient=as_json) as progress, recording(phases):
        task = progress.add_task(f"up {lab_name}", total=None, info="")
        wait = progress.add_task("converging", total=None, info="", visible=False)

        def on_step(step: str, done: int, total: int) -> None:
            progress.update(task, description=f"up {lab_name}: {step}", completed=done, total=total or None)

        def on_poll(h: Health) -> None:
            full = sum(1 for v in h.ecmp.values() if v["min"] == v["max"] and v["min"] > 0)
            progress.update(wait, visible=True, total=h.bgp["total"] or 1, completed=h.bgp["established"],
                            info=f"BGP {h.bgp['established']}/{h.bgp['total']}, "
                                 f"ECMP full on {full}/{len(h.ecmp)} leaves")

        running, health = bring_up(lab, lab_name, runtime, on_step, on_poll, timeout, image, templates, agent)
        watched = None
        if telemetry:
            from twin.telemetry.service import telemetry_up

            progress.update(task, description=f"up {lab_name}: starting telemetry")
            watched = telemetry_up(lab_name)
    state = running.state
    if as_json:
        _emit_json({"lab": lab_name, "healthy": health.healthy, "seconds": round(health.seconds, 2),
                    "bgp": health.bgp, "ecmp": health.ecmp, "notes": state.notes,
                    "phases": phases.seconds(), **({"telemetry": watched} if watched else {})})
    else:
        print_notes(console, state)
        out.print(health_table(state, health))
        out.print(f"healthy after {health.seconds:.1f} s" if health.healthy else
                  f"not healthy after {health.seconds:.1f} s; the lab stays up for inspection "
                  f"('twin status --name {lab_name}', 'twin down --name {lab_name}')")
        if watched:
            out.print(f"telemetry: Prometheus {watched['prometheus']} (graph: {watched['prometheus']}/graph)")
    raise typer.Exit(0 if health.healthy else 1)


def status_doc(lab_name: str) -> dict[str, Any]:
    from twin.checks.health import check_health
    from twin.lab.running import RunningLab

    lab = RunningLab.read(lab_name)
    if lab is None:
        raise TwinError(f"lab '{lab_name}' is not running; start it with 'twin up'")
    state = lab.state
    health = check_health(lab) if state.phase == "up" else None
    return {
        "lab": state.lab, "runtime": state.runtime, "phase": state.phase,
        "healthy": bool(health and health.healthy) and state.unhealthy is None,
        "unhealthy": state.unhealthy,
        "nodes": [{"name": n.name, "role": n.role, "kind": n.kind, "netns": n.netns, "mgmt": n.mgmt,
                   "gnmi": lab.gnmi_target(n.name), "ssh": lab.ssh_target(n.name)} for n in state.nodes],
        "bgp": health.bgp if health else {"established": 0, "total": 0},
        "ecmp": health.ecmp if health else {},
        "checks": [r.model_dump() for r in health.results] if health else [],
        "agent": health.agent if health else {},
        "daemons": health.daemons if health else {},
    }


@app.command()
def status(name: NameOpt = None, as_json: JsonOpt = False) -> None:
    """Show a running lab: nodes, management addresses, BGP, ECMP, health."""
    from twin.host.rundir import load_state
    from twin.model.results import CheckResult, Health
    from twin.report.health import health_table, inventory_table

    lab_name = _resolve_name(name)
    doc = status_doc(lab_name)
    if as_json:
        _emit_json(doc)
    else:
        state = load_state(lab_name)
        assert state is not None
        out.print(inventory_table(state))
        health = Health(healthy=doc["healthy"], bgp=doc["bgp"], ecmp=doc["ecmp"],
                        results=[CheckResult.model_validate(r) for r in doc["checks"]])
        out.print(health_table(state, health))
    raise typer.Exit(0 if doc["healthy"] else 1)


@app.command(name="exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exec_(node: Annotated[str, typer.Argument(help="node name, e.g. leaf1 or server3")],
          cmd: Annotated[list[str], typer.Argument(help="command to run inside the node (after --)")],
          name: NameOpt = None) -> None:
    """Run a command inside a node, e.g. `twin exec server1 -- ping -c1 10.2.0.3`."""
    from twin.host.rundir import load_state
    from twin.runtime.registry import runtime_of

    lab_name = _resolve_name(name)
    state = load_state(lab_name)
    if state is None:
        raise TwinError(f"lab '{lab_name}' is not running")
    argv = runtime_of(state).exec_argv(state, node, cmd)
    raise typer.Exit(subprocess.call(argv))


@app.command()
def down(name: NameOpt = None,
         all_labs: Annotated[bool, typer.Option("--all", help="remove every lab")] = False) -> None:
    """Remove a lab: processes, namespaces, veths, files. Safe to run twice."""
    from twin.host.lablock import LabBusyError
    from twin.runtime.registry import all_labs as every_lab
    from twin.runtime.registry import down_lab

    running = every_lab()
    names = running if all_labs else [_resolve_name(name)] if name is not None or running else []
    refused = []
    for lab_name in names:
        try:
            removed = down_lab(lab_name)
        except LabBusyError as exc:
            if not all_labs:
                raise
            refused.append(lab_name)   # --all goes on with the other labs, and says which it left
            console.print(f"[red]lab {lab_name}: left in place:[/] {escape(str(exc))}", highlight=False)
            continue
        console.print(f"lab {lab_name}: " + (f"removed {', '.join(removed)}" if removed else "nothing to remove"))
    if not names:
        console.print("no labs to remove")
    if refused:
        raise TwinError(f"{len(refused)} labs not removed: {', '.join(refused)}")


@app.command()
def push(name: NameOpt = None,
         configs: Annotated[Path | None, typer.Option("--configs", help="folder of <switch>/config_db.json "
                                                      "(default: the lab's own plan)")] = None,
         as_json: JsonOpt = False) -> None:
    """Push each switch's config_db.json over gNMI (full replace), in parallel; wait until the change has
    taken effect and report what it did on every switch."""
    from twin.checks.effect import described
    from twin.flows.push import push_observed
    from twin.gnmi.push import PushResult
    from twin.lab.running import RunningLab
    from twin.report.ci import settled

    lab_name = _resolve_name(name)
    lab = RunningLab.read(lab_name)
    if lab is None:
        raise TwinError(f"lab '{lab_name}' is not running")
    state = lab.state
    if configs is not None and not configs.is_dir():
        raise TwinError(f"{configs} is not a folder of <switch>/config_db.json files")
    switches = [n for n in state.nodes if n.kind == "switch"]
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=as_json) as progress:
        task = progress.add_task(f"push to {lab_name}", total=len(switches))

        def tick(r: PushResult) -> None:
            progress.advance(task)

        results, observed = push_observed(lab, configs, tick)
    effects = [e for e in observed.effects if e.fields or not e.no_effect]
    if as_json:
        _emit_json({"lab": lab_name, "ok": all(r.ok for r in results), "switches": [r.model_dump() for r in results],
                    "settle": observed.settle.model_dump(), "effects": [e.model_dump() for e in effects]})
    else:
        table = Table(title=f"push to {lab_name}", title_justify="left")
        for col in ("switch", "result", "added", "removed", "changed", "detail"):
            table.add_column(col)
        for r in results:
            detail = r.error or ", ".join((r.added + r.removed + r.changed)[:3])
            table.add_row(r.switch, "[green]ok[/]" if r.ok else "[red]failed[/]", str(len(r.added)),
                          str(len(r.removed)), str(len(r.changed)), escape(detail))
        out.print(table)
        out.print(f"settled: {settled(observed.settle)}", markup=False)
        for e in effects:
            for line in described(e):
                out.print(f"{e.switch}: {line}", markup=False, soft_wrap=True)
    raise typer.Exit(0 if all(r.ok for r in results) else 2)


@app.command()
def verify(name: NameOpt = None, as_json: JsonOpt = False,
           junit: Annotated[Path | None, typer.Option("--junit", help="write JUnit XML here")] = None) -> None:
    """Read state over gNMI and run the check catalog: sessions, ECMP, reachability, BFD, MTUs on every link
    that carries RoCE (server ports too, with a DF ping at the fabric MTU), FRR against CONFIG_DB, what twin
    does not emulate; and check that the lab's gNMI agent and every switch's FRR daemons and redis-server run."""
    import time

    from twin.flows.bringup import verify_lab
    from twin.lab.running import RunningLab
    from twin.report.health import health_table
    from twin.report.junit import write_junit

    lab_name = _resolve_name(name)
    lab = RunningLab.read(lab_name)
    if lab is None:
        raise TwinError(f"lab '{lab_name}' is not running")
    state = lab.state
    start = time.monotonic()
    health = verify_lab(lab)
    seconds = time.monotonic() - start
    if junit is not None:
        write_junit(junit, f"twin.verify.{lab_name}", health.results, seconds)
    if as_json:
        _emit_json({"lab": lab_name, "passed": health.healthy, "seconds": round(seconds, 2),
                    "checks": [r.model_dump() for r in health.results]})
    else:
        out.print(health_table(state, health))
    raise typer.Exit(0 if health.healthy else 1)


@app.command()
def drill(kind: Annotated[str | None, typer.Argument(
              help="spine-loss | spine-silent | leaf-loss | link-down | link-flap | link-gray | session-reset "
                   "| mtu-mismatch")] = None,
          target: Annotated[str | None, typer.Option(help="a node (spine1) or a link (leaf1:spine1, "
                                                       "leaf1:Ethernet128); default: the first that fits")] = None,
          scenario: Annotated[Path | None, typer.Option(help="a YAML file of timed faults, instead of KIND")] = None,
          name: NameOpt = None, as_json: JsonOpt = False,
          report: Annotated[Path | None, typer.Option(help="write JSON, Markdown and a PNG timeline here (and "
                                                           "when the lab's telemetry runs, the touched links' "
                                                           "counters)")] = None,
          loss_pct: Annotated[float, typer.Option(help="link-gray: % of packets dropped")] = 5.0,
          flaps: Annotated[int, typer.Option(help="link-flap: number of flaps")] = 3,
          period_ms: Annotated[float, typer.Option(help="link-flap: time between flaps")] = 3000,
          hold_ms: Annotated[float | None, typer.Option(help="how long the fault lasts (default: until "
                                                             "converged and settled; link-flap: period/2)")] = None,
          mtu: Annotated[int, typer.Option(help="mtu-mismatch: MTU set on one end")] = 1500,
          flows: Annotated[int, typer.Option(help="probe flows (distinct UDP 5-tuples)")] = 128,
          rate: Annotated[float, typer.Option(help="probe packets per second per flow")] = 100,
          recovery_timeout: Annotated[float, typer.Option(help="seconds the fabric gets to return to its "
                                                                "baseline after the restore")] = 60,
          traffic: Annotated[str | None, typer.Option(
              help="also resolve a collective's flows before, during and after: ring-allreduce, all-gather, "
                   "reduce-scatter, all-to-all or pairs (with --traffic-pairs); see twin traffic")] = None,
          traffic_qps: Annotated[int, typer.Option(min=1, max=64, help="--traffic: queue pairs per GPU pair")] = 4,
          traffic_pairs: Annotated[Path | None, typer.Option(help="--traffic pairs: the pairs file")] = None,
          traffic_gpus: Annotated[str | None, typer.Option(help="--traffic: which GPUs of every server take part, "
                                                                "e.g. 0-3 (GPU i owns NIC i)")] = None,
          seed_mode: Annotated[str, typer.Option(help="--traffic: hash seeds for the drill (kernel, same, "
                                                      "per-tier, per-switch)")] = "kernel",
          traffic_message_size: Annotated[str, typer.Option(help="--traffic: bytes per rank, as nccl-tests' "
                                                                 "size (K, M, G binary), for the flow-level "
                                                                 "model")] = "128M",
          traffic_export: Annotated[Path | None, typer.Option(help="--traffic: write the run's sends, paths and "
                                                                   "links for a packet simulator (twin-flows JSON) "
                                                                   "to this file")] = None) -> None:
    """Break something on purpose and measure how the fabric heals: detection, convergence, loss,
    ECMP redistribution. Restores the fault and checks the fabric is back to its baseline."""
    from twin.drills.api import run_drill
    from twin.drills.runner import Options
    from twin.drills.slo import single
    from twin.model.drill import KINDS
    from twin.model.errors import PlanError, Problem
    from twin.report.drill import drill_table
    from twin.report.drill_files import write_reports
    from twin.stages.load.scenario import load_scenario

    if (kind is None) == (scenario is None):
        raise PlanError([Problem("twin drill", "KIND", "give a drill kind or --scenario FILE (not both)",
                                 f"kinds: {', '.join(KINDS)}")])
    if kind is not None and kind not in KINDS:
        raise PlanError([Problem("twin drill", "KIND", f"unknown drill kind '{kind}'", f"kinds: {', '.join(KINDS)}")])
    if scenario is not None:
        plan_ = load_scenario(scenario)
    else:
        assert kind is not None
        params = {"loss_pct": loss_pct, "flaps": flaps, "period_ms": period_ms, "hold_ms": hold_ms, "mtu": mtu}
        plan_ = single(kind, target, **params)
    if traffic is not None:
        from twin.cli.traffic import check_export, parse_size, pattern_and_mode

        traffic_pattern, mode = pattern_and_mode(traffic, traffic_pairs, seed_mode, "--traffic")
        message_bytes = parse_size(traffic_message_size, "--traffic-message-size")
        check_export(traffic_export, "--traffic-export")
        if traffic_gpus is not None and traffic_pattern == "pairs":
            raise PlanError([Problem("twin drill", "--traffic-gpus", "a pairs file names its GPUs itself",
                                     "drop --traffic-gpus, or list only the pairs you want in the file")])
    elif traffic_export is not None or traffic_gpus is not None:
        raise PlanError([Problem("twin drill", "--traffic-export" if traffic_export else "--traffic-gpus",
                                 "there is no traffic to take part in", "add --traffic PATTERN")])
    if report is not None:
        from twin.host.owned import check_folder

        check_folder(report, "twin drill --report")  # before the drill, not after it
    lab_name = _resolve_name(name)
    from twin.host.signals import restoring_on_signals

    # SIGTERM and SIGHUP restore the faults as Ctrl-C does, then exit 128 + the signal
    with restoring_on_signals("restoring the drill's faults"), \
            Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                     transient=True) as progress:
        task = progress.add_task(f"drill {plan_.name}", total=None)
        on_step = lambda s: progress.update(task, description=f"drill {plan_.name}: {s}")  # noqa: E731
        options = Options(flows=flows, rate_hz=rate, recovery_timeout_s=recovery_timeout)
        if traffic is None:
            result = run_drill(lab_name, plan_, on_step, options)
        else:
            from twin.traffic.run import drill_with_traffic

            result = drill_with_traffic(lab_name, plan_, traffic_pattern, traffic_qps, traffic_gpus, traffic_pairs,
                                        mode, progress=on_step, options=options, message_bytes=message_bytes)
    if traffic_export is not None and result.traffic is not None:
        from twin.cli.traffic import write_export
        from twin.lab.running import RunningLab

        write_export(RunningLab.load(lab_name).plan, result.traffic, traffic_export)
    if report is not None:
        from twin.cli.telemetry import drill_counters_or_none

        written = write_reports(result, report, drill_counters_or_none(result))
        if not as_json:
            console.print("reports: " + ", ".join(str(p) for p in written))
    if as_json:
        _emit_json(result.model_dump(mode="json"))
    else:
        out.print(drill_table(result))
        if result.traffic is not None:
            from twin.report.traffic import traffic_table

            out.print(traffic_table(result.traffic))
    raise typer.Exit(0 if result.passed else 1)


@app.command()
def validate(configs: Annotated[Path, typer.Argument(help="folder of <switch>/config_db.json")],
             lab: Annotated[Path | None, typer.Option(help="lab file whose `roce:` section sets the RoCE "
                                                           "MTU, lossless priorities and traffic classes")] = None,
             models: Annotated[Path | None, typer.Option(help="sonic-yang-models folder (default: "
                                                             "$TWIN_SONIC_YANG, or the reference folder's)")] = None,
             no_yang: Annotated[bool, typer.Option("--no-yang", help="skip the SONiC YANG check")] = False,
             accept: Annotated[list[str] | None, typer.Option(
                 "--accept", help="a table SONiC's routing stack reads and twin does not emulate, to let pass "
                 "(repeatable; adds to the lab file's accept_not_emulated)")] = None,
             as_json: JsonOpt = False) -> None:
    """Static checks of generated configs (no root): SONiC YANG, per-switch schema, BGP sessions both ways, ASNs,
    duplicate addresses and router ids, ECMP width, link MTUs, RoCE QoS consistency and buffers (PFC headroom
    against the cable, ECN thresholds against the queue), and what SONiC's routing stack would act on that twin
    does not emulate."""
    import time

    from twin.stages.lab_file import load_lab
    from twin.stages.validate.api import validate_folder

    start = time.monotonic()
    spec = load_lab(lab) if lab is not None else None
    accepted = [*(spec.drills.accept_not_emulated if spec else []), *(accept or [])]
    notes: list[str] = []
    count, findings = validate_folder(configs, spec.roce if spec else None, models, yang=not no_yang, notes=notes,
                                      accepted=accepted)
    for note in notes:
        console.print(f"[bold yellow]{escape(note)}[/]")
    seconds = round(time.monotonic() - start, 3)
    if as_json:
        _emit_json({"configs": str(configs), "switches": count, "passed": not findings, "seconds": seconds,
                    "notes": notes, "findings": [f.__dict__ for f in findings]})
    else:
        for f in findings:
            out.print(escape(str(f)), soft_wrap=True)
        out.print(f"{count} switches, {len(findings)} findings, {seconds:g} s")
    raise typer.Exit(1 if findings else 0)


@app.command(name="ci")
def ci_(lab: Annotated[Path, typer.Argument(help="lab YAML (its drills: and slo: are run and judged)")],
        configs: Annotated[Path | None, typer.Option(help="folder of <switch>/config_db.json to gate "
                                                         "(default: the configs twin generates)")] = None,
        junit: Annotated[Path | None, typer.Option(help="write JUnit XML here")] = None,
        summary: Annotated[Path | None, typer.Option(help="write a Markdown summary here")] = None,
        name: Annotated[str | None, typer.Option("--name", "-n", help="lab name (default: ci + random)")] = None,
        runtime: RuntimeOpt = None,
        image: ImageOpt = None,
        sonic_templates: TemplatesOpt = None,
        as_json: JsonOpt = False) -> None:
    """Gate configs in CI: validate, up, push, verify, drills, down. Exit 0 passed, 1 failed, 2 bad input."""
    from twin.flows.ci import run_ci
    from twin.model.names import check_lab_name
    from twin.report.ci import ci_markdown
    from twin.report.junit import write_junit
    from twin.stages.render.sonic_templates import find_templates

    if name is not None:
        check_lab_name(name)
    from twin.host.signals import restoring_on_signals

    # SIGTERM and SIGHUP take the lab down (with any drill's faults) as Ctrl-C does, then exit 128 + the signal
    with restoring_on_signals("removing the CI lab"), \
            Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                     transient=True) as progress:
        task = progress.add_task("ci", total=None)
        report = run_ci(lab, configs, name, runtime, lambda s: progress.update(task, description=f"ci: {s}"),
                        image, find_templates(sonic_templates))
    if junit is not None:
        write_junit(junit, f"twin.flows.ci.{lab.stem}", report.results, report.seconds)
    markdown = ci_markdown(report)
    if summary is not None:
        summary.write_text(markdown)
    if as_json:
        _emit_json(report.model_dump(mode="json", exclude={"drills": {"__all__": {"timeline"}}}))
    else:
        out.print(markdown, markup=False, soft_wrap=True)
    raise typer.Exit(0 if report.passed else 1)


@app.command()
def rehearse(change: Annotated[Path, typer.Argument(help="folder of <switch>/config_db.json, or a YAML/JSON file "
                                                         "of per-switch patches (null removes)")],
             name: NameOpt = None,
             batch: Annotated[int, typer.Option(help="switches changed at once before verifying")] = 1,
             summary: Annotated[Path | None, typer.Option(help="write a Markdown report here")] = None,
             as_json: JsonOpt = False) -> None:
    """Try a change on the running twin: diff, validate, apply in batches with verification, run the
    lab's drills, roll everything back if anything fails. Your files are only read."""
    from twin.flows.rehearse import Rehearsal
    from twin.host.signals import restoring_on_signals
    from twin.report.ci import rehearsal_markdown

    lab_name = _resolve_name(name)
    # SIGTERM and SIGHUP restore a drill's faults and roll the change back as Ctrl-C does, then exit 128 + the signal
    with restoring_on_signals("rolling the rehearsal back"), \
            Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                     transient=True) as progress:
        task = progress.add_task("rehearse", total=None)
        report = Rehearsal(lab_name, change, batch,
                           lambda s: progress.update(task, description=f"rehearse: {s}")).run()
    markdown = rehearsal_markdown(report)
    if summary is not None:
        summary.write_text(markdown)
    if as_json:
        _emit_json(report.model_dump(mode="json"))
    else:
        out.print(markdown, markup=False, soft_wrap=True)
    raise typer.Exit(0 if report.passed else 1)


@app.command()
def cli(node: Annotated[str, typer.Argument(help="switch name, e.g. leaf1")], name: NameOpt = None) -> None:
    """Open the switch's SONiC-like shell over SSH (show ip bgp summary, show ip route, vtysh ...)."""
    import os
    import shutil

    from twin.lab.running import RunningLab

    lab_name = _resolve_name(name)
    lab = RunningLab.read(lab_name)
    if lab is None:
        raise TwinError(f"lab '{lab_name}' is not running")
    target = lab.ssh_target(node)
    if target is None:
        raise TwinError(f"{node} has no SSH endpoint (only switches do); try 'twin exec {node} -- bash'")
    if shutil.which("ssh") is None:
        raise TwinError("the ssh client is not installed: apt-get install openssh-client")
    argv = ["ssh", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-p", str(target["port"]), f"{target['username']}@{target['host']}"]
    env = dict(os.environ)
    if shutil.which("sshpass"):  # the password in the environment (sshpass -e), never on a command line
        argv, env["SSHPASS"] = ["sshpass", "-e", *argv], target["password"]
    else:
        console.print(f"password: {target['password']}")
    os.execvpe(argv[0], argv, env)


agent_app = typer.Typer(help="The switches' gNMI agent of a lab.", no_args_is_help=True)
app.add_typer(agent_app, name="agent")


@agent_app.command("restart")
def agent_restart(name: NameOpt = None) -> None:
    """Restart a lab's gNMI agent; it finishes or rolls back a Set that a crash interrupted."""
    from twin.lab.agent import restart_agent

    lab_name = _resolve_name(name)
    restart_agent(lab_name)
    console.print(f"lab {lab_name}: gNMI agent restarted")


frr_app = typer.Typer(help="The FRR routing suite of a lab's switches (SONiC's bgp container).", no_args_is_help=True)
app.add_typer(frr_app, name="frr")


@frr_app.command("restart")
def frr_restart(switch: Annotated[str, typer.Argument(help="switch name, e.g. leaf1")], name: NameOpt = None,
                as_json: JsonOpt = False) -> None:
    """Restart a switch's FRR daemons from its CONFIG_DB, as `sudo systemctl restart bgp` does on SONiC:
    whatever still runs is stopped, every daemon starts again with the config the switch's config daemon
    programmed; the links and the kernel's addresses stay."""
    from dataclasses import asdict

    from twin.lab.restart import restart_switch_frr

    lab_name = _resolve_name(name)
    result = restart_switch_frr(lab_name, switch)
    if as_json:
        _emit_json({"lab": lab_name, **asdict(result)})
        return
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    console.print(f"lab {lab_name}: {switch}: FRR restarted in {result.seconds:g} s "
                  f"(stopped: {', '.join(result.stopped) or 'nothing was running'}; "
                  f"running: {', '.join(result.started)})")


def _export_app() -> typer.Typer:
    from twin.cli.export import export_app

    return export_app


app.add_typer(_export_app(), name="export", help="Write the lab for other tools (containerlab, clabernetes).")
image_app = typer.Typer(help="The switch image of the container runtimes.", no_args_is_help=True)
app.add_typer(image_app, name="image")


@image_app.command("build")
def image_build(force: Annotated[bool, typer.Option("--force", help="rebuild even when up to date")] = False,
                as_json: JsonOpt = False) -> None:
    """Build twin-switch:<version> (Debian + FRR, no registry) unless an up-to-date one exists."""
    from twin.runtime.image import ImageSpec, ensure_image

    spec = ImageSpec()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=as_json) as progress:
        task = progress.add_task(f"image {spec.name}", total=None)
        result = ensure_image(spec, force=force,
                              progress=lambda step: progress.update(task, description=f"image: {step}"))
    if as_json:
        _emit_json({"image": result.image, "built": result.built, "seconds": round(result.seconds, 1),
                    "size_mb": result.size_mb, "inputs": spec.inputs})
    else:
        out.print(f"{result.image}: " + (f"built in {result.seconds:.1f} s" if result.built else
                                         f"up to date (inputs {spec.inputs})") + f", {result.size_mb} MB")




def main() -> None:
    try:
        app()
    except TwinError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        console.print("interrupted")
        sys.exit(130)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        console.print(f"[red]error:[/] {escape(_full_disk(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)


def _full_disk(exc: OSError) -> str:
    """What a full filesystem stopped, naming the file: the error's own, else the path being written
    in the innermost frame that had one (pathlib's write_text reports none)."""
    from twin.host.rundir import run_root

    path = exc.filename
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        if path is not None:
            break
        path = next((v for k, v in frame.f_locals.items() if k in ("self", "path", "file", "tmp")
                     and isinstance(v, PurePath)), None)
    where = f"writing {path}" if path is not None else f"writing under the run directory {run_root()}"
    return (f"no space left on the device {where}; the command stopped. Free "
            "some space there (or set TWIN_RUN_DIR to a folder on a filesystem with room) and run it again")
