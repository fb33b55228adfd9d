"""`twin traffic PATTERN`: what a collective's flows do to the fabric of a running lab."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from twin.cli.common import JsonOpt, NameOpt, console, emit_json, out, resolve_name
from twin.model.errors import PlanError, Problem, TwinError

if TYPE_CHECKING:  # the traffic models and seeds load only when a traffic command runs
    from twin.model.plan import Plan
    from twin.model.traffic import PatternName, TrafficReport
    from twin.traffic.seeds import SeedMode

PATTERNS = ("ring-allreduce", "all-gather", "reduce-scatter", "all-to-all", "pairs")
MMR_TARGET = 1.2   # the sweep reports the fewest QPs with MMR at or below this
SIZE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}   # nccl-tests' -b/-e suffixes (binary)
MIN_MESSAGE = 2**10
MAX_MESSAGE = 2**40
MESSAGE_HELP = ("bytes per rank, as nccl-tests' size (-b/-e; K, M, G are binary): what each GPU reduces, "
                "gathers or sends in the flow-level model")


def parse_size(text: str, field: str = "--message-size") -> int:
    """`128M`, `1G`, `65536`: a message size in bytes (1 KiB to 1 TiB)."""
    digits, unit = text.strip(), ""
    if digits[-1:].upper() in ("K", "M", "G"):
        digits, unit = digits[:-1], digits[-1].upper()
    if not (digits.isascii() and digits.isdigit()) or not MIN_MESSAGE <= int(digits) * SIZE_UNITS[unit] <= MAX_MESSAGE:
        raise PlanError([Problem("twin traffic", field, f"'{text}' is not a message size from 1K to 1024G",
                                 "write bytes or a size with K, M or G as nccl-tests takes them, e.g. 128M")])
    return int(digits) * SIZE_UNITS[unit]


def parse_qps(text: str) -> list[int]:
    values: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()) or not 1 <= int(part) <= 64:
            raise PlanError([Problem("twin traffic", "--qps", f"'{text}' is not a list of QP counts 1-64",
                                     "write e.g. --qps 4, or --qps 1,2,4,8 for a sweep")])
        values.append(int(part))
    return values


def pattern_and_mode(pattern: str, pairs_file: Path | None, seed_mode: str,
                     field: str) -> tuple[PatternName, SeedMode]:
    """The pattern and seed mode a user named, checked (exit 2 naming the option and the choices)."""
    from twin.traffic.seeds import SEED_MODES

    if pattern not in PATTERNS:
        raise PlanError([Problem("twin traffic", field, f"unknown pattern '{pattern}'",
                                 f"patterns: {', '.join(PATTERNS)}")])
    if (pattern == "pairs") != (pairs_file is not None):
        raise PlanError([Problem("twin traffic", field, "the pairs pattern takes a file, the others none",
                                 "write 'twin traffic pairs FILE' (or --traffic pairs --traffic-pairs FILE)")])
    if seed_mode not in SEED_MODES:
        raise PlanError([Problem("twin traffic", "--seed-mode", f"unknown seed mode '{seed_mode}'",
                                 f"modes: {', '.join(SEED_MODES)}")])
    return pattern, seed_mode  # type: ignore[return-value]


def traffic(pattern: Annotated[str, typer.Argument(
                help="ring-allreduce | all-gather | reduce-scatter | all-to-all | pairs")],
            pairs_file: Annotated[Path | None, typer.Argument(
                help="pairs: a YAML file 'pairs: [[server1/0, server3/0], ...]' (GPU = server/index)")] = None,
            name: NameOpt = None,
            qps: Annotated[str, typer.Option(help="queue pairs (flows) per GPU pair; a list such as 1,2,4,8 "
                                                  "sweeps them")] = "1",
            gpus: Annotated[str | None, typer.Option(help="which GPUs of every server take part, e.g. 0-3 or "
                                                          "0,2 (GPU i owns NIC i)")] = None,
            fault: Annotated[str | None, typer.Option(help="KIND:TARGET, e.g. spine-loss:spine1: the metrics "
                                                           "before, during (converged) and after the restore")] = None,
            seed_mode: Annotated[str, typer.Option(help="hash seeds for this run: kernel (as the switches run), "
                                                        "same, per-tier or per-switch")] = "kernel",
            message_size: Annotated[str, typer.Option(help=MESSAGE_HELP)] = "128M",
            iteration_ms: Annotated[float, typer.Option(help="--fault: a training iteration's time, the "
                                                             "collective included, for the JCT overhead")] = 1000.0,
            confirm: Annotated[bool, typer.Option(help="also send each flow's packets through the fabric and "
                                                       "count them per link")] = False,
            as_json: JsonOpt = False,
            report: Annotated[Path | None, typer.Option(help="write JSON, Markdown and a heatmap PNG here")] = None,
            export: Annotated[Path | None, typer.Option(help="write the run's sends, paths and links for a "
                                                             "packet simulator (twin-flows JSON) to this file")] = None,
            ) -> None:
    """Collective traffic (RoCEv2 QP flows) through the switches' real ECMP hashing: per-link load, MMR,
    JFI, idle uplinks, and the collective's completion, algbw and busbw by flow-level simulation (a model);
    RoCE's lossless class on every hop and the incast queues' backlog against ECN and PFC, from the
    switches' QoS config (a model); with --fault, before, during and after a failure, and the iteration it
    lands in."""
    from twin.host.signals import restoring_on_signals
    from twin.lab.running import RunningLab
    from twin.report.traffic import traffic_table, write_traffic_reports
    from twin.traffic.run import run_sweep, run_traffic, run_with_fault
    from twin.traffic.timeline import recorded

    kind, mode = pattern_and_mode(pattern, pairs_file, seed_mode, "PATTERN")
    counts = parse_qps(qps)
    size = parse_size(message_size)
    if kind == "pairs" and gpus is not None:
        raise PlanError([Problem("twin traffic", "--gpus", "a pairs file names its GPUs itself",
                                 "drop --gpus, or list only the pairs you want in the file")])
    if fault is not None and len(counts) > 1:
        raise PlanError([Problem("twin traffic", "--qps", "a sweep and --fault do not go together",
                                 "give one QP count with --fault")])
    if confirm and (fault is not None or len(counts) > 1):
        raise PlanError([Problem("twin traffic", "--confirm", "confirmation sends one pattern's packets once",
                                 "use --confirm with one QP count and no --fault")])
    if export is not None and len(counts) > 1:
        raise PlanError([Problem("twin traffic", "--export", "an export file holds one run",
                                 "give one QP count with --export")])
    if report is not None:
        from twin.host.owned import check_folder

        check_folder(report, "twin traffic --report")
    check_export(export, "--export")
    lab = RunningLab.load(resolve_name(name))
    # a fault, hash seeds and --confirm's counters are put back on SIGTERM and SIGHUP as on Ctrl-C
    with restoring_on_signals("restoring the fault, hash seeds and counters"), \
            Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                     transient=True) as progress:
        task = progress.add_task(f"traffic {pattern}", total=None)

        def step(s: str) -> None:
            progress.update(task, description=f"traffic {pattern}: {s}")

        with recorded(lab.name, pattern, fault or "fabric"):   # on the lab's timeline (twin telemetry)
            if fault is not None:
                reports = [run_with_fault(lab, kind, counts[0], fault, gpus, pairs_file, iteration_ms,
                                          seed_mode=mode, progress=step, message_bytes=size)]
            elif len(counts) > 1:
                reports = run_sweep(lab, kind, counts, gpus, pairs_file, mode, step, size)
            else:
                reports = [run_traffic(lab, kind, counts[0], gpus, pairs_file, mode, confirm, step, size)]
    confirmed = reports[-1].confirmation
    if export is not None:
        write_export(lab.plan, reports[0], export)
        if not as_json:
            console.print(f"export: {export}")
    if report is not None:
        written = [p for r in reports for p in write_traffic_reports(r, report)]
        if not as_json:
            console.print("reports: " + ", ".join(str(p) for p in written))
    docs = [r.model_dump(mode="json") for r in reports]
    if as_json:
        if len(docs) == 1:
            emit_json(docs[0])
        else:
            fit = next((r.qps for r in reports if r.mmr is not None and r.mmr <= MMR_TARGET), None)
            emit_json({"pattern": pattern, "sweep": docs, "mmr_target": MMR_TARGET, "qps_for_mmr_target": fit})
    else:
        for r in reports:
            out.print(traffic_table(r))
        if confirmed is not None:
            out.print(f"confirmation: {confirmed.matched}/{confirmed.links} links carried exactly the packets their "
                      f"resolved flows predict ({confirmed.packets_per_flow} packets per flow)")
    bad_confirm = confirmed is not None and confirmed.matched != confirmed.links
    raise typer.Exit(1 if bad_confirm else 0)


def check_export(path: Path | None, field: str) -> None:
    """Before the run: the export file's folder exists and the name is not a folder."""
    if path is not None and (not path.parent.is_dir() or path.is_dir()):
        raise PlanError([Problem("twin traffic", field, f"cannot write {path}",
                                 "name a file in an existing folder")])


def write_export(plan: Plan, report: TrafficReport, path: Path) -> None:
    """The run's packet-simulator file (twin-flows JSON, docs/reference/files.md)."""
    from twin.traffic.export import flows_document

    try:
        path.write_text(json.dumps(flows_document(plan, report), indent=1) + "\n")
    except OSError as exc:
        raise TwinError(f"--export {path}: {exc.strerror or exc}") from None


def register(app: typer.Typer) -> None:
    app.command(name="traffic")(traffic)
