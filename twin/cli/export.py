"""`twin export`: write a lab for other runtimes, containerlab and clabernetes (Kubernetes).

A typer sub-app (cli.py mounts it as `export`). As with every twin command, a TwinError (a
missing file, a bad topology, a topology that does not validate) is reported on stderr and
exits 2; the commands do it themselves so the sub-app behaves the same wherever it is mounted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from twin.model.errors import TwinError

if TYPE_CHECKING:
    from twin.kinds.facts import ClabKind

export_app = typer.Typer(help="Export a lab for other runtimes: containerlab (.clab.yml) and clabernetes "
                              "(Kubernetes manifests). No root needed.", no_args_is_help=True)
console = Console(stderr=True)
out = Console()

T = TypeVar("T")


class Kind(StrEnum):
    """How switches run: twin's FRR image (kind linux) or SONiC's docker-sonic-vs."""

    linux = "linux"
    sonic_vs = "sonic-vs"

    def clab(self) -> ClabKind:
        return "linux" if self is Kind.linux else "sonic-vs"


TopologyArg = Annotated[Path, typer.Argument(help="lab or topology YAML, or a containerlab .clab.yml")]
KindOpt = Annotated[Kind, typer.Option("--kind", help="switch kind: 'linux' (twin's FRR image) or 'sonic-vs'")]
ImageOpt = Annotated[str | None, typer.Option("--image", help="switch image (default: twin-switch:<version> for "
                                              "linux, docker-sonic-vs:latest for sonic-vs)")]
HostImageOpt = Annotated[str | None, typer.Option("--host-image", help="image of servers and imported routers "
                                                  "(default: the linux switch image)")]


def _guarded(action: Callable[[], T]) -> T:
    """Run `action`; a TwinError becomes `error: ...` on stderr and exit code 2."""
    try:
        return action()
    except TwinError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _say(text: str, *, err: bool = False) -> None:
    (console if err else out).print(escape(text), highlight=False, soft_wrap=True)


def _schema_line(schema: str | None, what: str) -> str:
    if schema:
        return f"{what} valid against containerlab's schema {schema}"
    return f"containerlab's schema was not found: {what} not validated (set TWIN_CLAB_SCHEMA to a clab.schema.json)"


@export_app.command("clab")
def clab(topology: TopologyArg,
         output: Annotated[Path, typer.Option("-o", "--output", help="the .clab.yml to write; the files it "
                                              "binds go to <lab>-files/ beside it (a new or empty folder, or one "
                                              "twin wrote before)")],
         kind: KindOpt = Kind.linux, image: ImageOpt = None, host_image: HostImageOpt = None,
         mgmt_subnet: Annotated[str | None, typer.Option("--mgmt-subnet", help="IPv4 prefix for static "
                                                         "management addresses (default: containerlab picks)")] = None,
         as_json: Annotated[bool, typer.Option("--json", help="print one JSON document on stdout, nothing else")]
         = False) -> None:
    """Write a containerlab topology of the lab (and the files it binds), validated against containerlab's schema."""
    summary = _guarded(lambda: _export_clab(topology, output, kind.clab(), image, host_image, mgmt_subnet))
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    for warning in summary["warnings"]:
        _say(f"warning: {warning}", err=True)
    _say(f"wrote {summary['topology']}: {summary['nodes']} nodes, {summary['links']} links, switches of kind "
         f"{summary['kind']} running {summary['image']}")
    _say(f"wrote {len(summary['written']) - 1} files they bind under {summary['files_dir']}")
    _say(_schema_line(summary["schema"], "topology"))
    _say(f"deploy with: containerlab deploy -t {summary['topology']}")


def _export_clab(topology: Path, output: Path, kind: ClabKind, image: str | None, host_image: str | None,
                 mgmt_subnet: str | None) -> dict[str, Any]:
    from twin.export.containerlab import files_dir_name, find_clab_schema, write_clab
    from twin.kinds.sonic_vs import missing_ports
    from twin.runtime.clab.topology import default_image
    from twin.stages.lab_file import load_lab

    lab = load_lab(topology)
    switch_image = image or default_image(kind)
    written = write_clab(lab.plan, output, kind=kind, image=switch_image, host_image=host_image,
                         mgmt_subnet=mgmt_subnet, lab_name=lab.name)
    schema = find_clab_schema()
    return {"topology": str(output), "lab": lab.name, "kind": kind, "image": switch_image,
            "nodes": len(lab.plan.nodes), "links": len(lab.plan.links),
            "files_dir": str(output.parent / files_dir_name(lab.name)),
            "schema": str(schema) if schema else None, "validated": schema is not None,
            "warnings": missing_ports(lab.plan) if kind == "sonic-vs" else [],
            "written": [str(p) for p in written]}


@export_app.command("clabernetes")
def clabernetes(topology: TopologyArg,
                output: Annotated[Path, typer.Option("-o", "--output", help="folder for the manifests and README: "
                                                          "a new or empty one, or one twin wrote before")],
                kind: KindOpt = Kind.linux, image: ImageOpt = None, host_image: HostImageOpt = None,
                namespace: Annotated[str, typer.Option("--namespace", help="Kubernetes namespace of the lab")]
                = "twin") -> None:
    """Write the Kubernetes manifests clabernetes runs the lab from, and a README with the steps."""
    summary = _guarded(lambda: _export_clabernetes(topology, output, kind.clab(), image, host_image, namespace))
    for warning in summary["warnings"]:
        _say(f"warning: {warning}", err=True)
    for path in summary["written"]:
        _say(f"wrote {path}")
    _say(_schema_line(summary["schema"], "containerlab definition"))
    _say(f"next: follow {summary['readme']} (kubectl apply -f {output})")


def _export_clabernetes(topology: Path, output: Path, kind: ClabKind, image: str | None, host_image: str | None,
                        namespace: str) -> dict[str, Any]:
    from twin.export.clabernetes import clabernetes_manifests, names_no_registry
    from twin.export.containerlab import find_clab_schema
    from twin.kinds.sonic_vs import missing_ports
    from twin.runtime.clab.topology import default_image, linux_image
    from twin.stages.lab_file import load_lab

    lab = load_lab(topology)
    switch_image = image or default_image(kind)
    written = clabernetes_manifests(lab.plan, output, kind=kind, image=switch_image, namespace=namespace,
                                    host_image=host_image, lab_name=lab.name)
    images = sorted({switch_image, linux_image(kind, switch_image, host_image)})
    warnings = [f"{i} names no registry, so the cluster cannot pull it: push it to a registry and pass "
                "--image/--host-image (see the README)" for i in images if names_no_registry(i)]
    if kind == "sonic-vs":
        warnings += missing_ports(lab.plan)
    schema = find_clab_schema()
    readme = next(p for p in written if p.name == "README.md")
    return {"written": [str(p) for p in written], "readme": str(readme), "schema": str(schema) if schema else None,
            "warnings": warnings}


def _register_design() -> None:
    from twin.cli.design import register_export

    register_export(export_app)  # twin export air


_register_design()
