"""What every `twin` command shares: the consoles, the common options, JSON output, the lab's name."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from twin.model.errors import TwinError
from twin.model.names import check_lab_name

console = Console(stderr=True)
out = Console()

NameOpt = Annotated[str | None, typer.Option("--name", "-n", help="lab name (default: the only running lab, "
                                              "else the lab file's name)")]
RuntimeOpt = Annotated[str | None, typer.Option(
    help="where switches run: netns (default: namespaces + FRR), docker (containers), clab (containerlab); "
         "default: the lab file's 'runtime'")]
ImageOpt = Annotated[str | None, typer.Option(
    help="switch image for docker/clab: the local twin-switch image (default, built when missing) or "
         "docker-sonic-vs:<tag>")]
TemplatesOpt = Annotated[Path | None, typer.Option(
    "--sonic-templates", help="render the switches' FRR with this SONiC release's templates (a folder laid out as "
                              "sonic-frr-templates: usr/share/sonic/templates, usr/local/sonic/frrcfgd, "
                              "etc/sonic/constants.yml); default $TWIN_SONIC_TEMPLATES, else twin's own renderer")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout, nothing else")]


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")


def resolve_name(name: str | None) -> str:
    """The lab a command works on: `--name`, checked as a lab name before anything uses it, else the
    only running lab (or `default` among several)."""
    if name is not None:
        check_lab_name(name)
        return name
    from twin.runtime.registry import all_labs

    labs = all_labs()
    if len(labs) == 1:
        return labs[0]
    if not labs:
        raise TwinError("no lab is running; start one with 'twin up labs/default.yaml'")
    if "default" in labs:
        return "default"
    raise TwinError(f"several labs are running ({', '.join(labs)}); pick one with --name")
