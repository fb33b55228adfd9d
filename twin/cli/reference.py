"""`twin reference install`: SONiC's YANG models and FRR templates onto this machine (twin.host.reference_install)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from twin.cli.common import JsonOpt, console, emit_json, out

reference_app = typer.Typer(help="SONiC's reference artefacts (YANG models, FRR templates) on this machine.",
                            no_args_is_help=True)


@reference_app.command("install")
def install(source: Annotated[str | None, typer.Option(
                "--from", help="a sonic-buildimage checkout, or a URL serving its tree (default: GitHub at the "
                               "commit twin's manifest names)")] = None,
            if_missing: Annotated[bool, typer.Option(
                "--if-missing", help="do nothing when twin already finds SONiC's YANG models")] = False,
            as_json: JsonOpt = False) -> None:
    """Install SONiC's YANG models and FRR templates (every file checked against twin's manifest) into
    $XDG_DATA_HOME/twin/reference, where twin finds them when $TWIN_SONIC_REFERENCE is not set."""
    from twin.host.reference import reference_path, where
    from twin.host.reference_install import install as install_files
    from twin.host.reference_install import load_manifest

    found = reference_path("sonic-yang-models/yang-models")
    if if_missing and found is not None:
        if as_json:
            emit_json({"installed": False, "reference": str(found.parent.parent), "reason": "already present"})
        else:
            console.print(f"SONiC's YANG models are already here: {found}")
        return
    manifest = load_manifest()
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=as_json) as progress:
        task = progress.add_task(f"SONiC reference at {manifest.commit[:12]}", total=len(manifest.files))
        root = install_files(source, manifest=manifest, tick=lambda: progress.advance(task))
    looked = reference_path("sonic-yang-models/yang-models")
    shadowed = looked is None or looked.parent.parent != root
    if as_json:
        emit_json({"installed": True, "reference": str(root), "commit": manifest.commit,
                   "files": len(manifest.files), "used": not shadowed})
        return
    out.print(f"installed {len(manifest.files)} files of {manifest.repository} at {manifest.commit[:12]} "
              f"into {root}")
    if shadowed:
        console.print(f"note: twin looks in {where()}, so it will not use these while $TWIN_SONIC_REFERENCE "
                      "names another folder")


def register(app: typer.Typer) -> None:
    app.add_typer(reference_app, name="reference")
