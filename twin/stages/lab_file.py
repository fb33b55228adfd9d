"""Lab files (labs/*.yaml): a topology plus how to run and judge it. Also accepts a bare topology."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from twin.model.drill import KINDS
from twin.model.errors import PlanError, Problem
from twin.model.lab import DrillSettings, HealthSettings, Lab, LabFile
from twin.model.routing_surface import surface
from twin.stages.load.loader import load_topology, pydantic_problems, topology_from
from twin.stages.load.source import Loc, YamlDoc, load_yaml
from twin.stages.plan import plan_topology


def load_lab(path: Path) -> Lab:
    """A lab file (has `topology: <path>`) or a topology file (then the lab is named after it); each
    file is read once."""
    from twin.stages.load.air import read_air

    air = read_air(path)
    if air is not None:  # an NVIDIA Air topology (.dot, or .json of Air's shape) is never a lab file
        plan = plan_topology(topology_from(air))
        return Lab(name=plan.name, runtime="netns", health=HealthSettings(), plan=plan)
    doc = load_yaml(path)
    named = doc.data.get("topology")
    if named is not None and not isinstance(named, str | dict):  # a dict: a containerlab file's own topology
        raise PlanError([doc.problem(("topology",), f"expected the path of a topology file, got {type(named).__name__}",
                                     "write it as 'topology: ../topologies/clos-4x8.yaml' (relative to the lab file)")])
    if isinstance(named, str):
        try:
            spec = LabFile.model_validate(doc.data)
        except ValidationError as exc:
            raise PlanError(pydantic_problems(doc, exc)) from None
        topo_path = spec.topology if spec.topology.is_absolute() else path.parent / spec.topology
        if not topo_path.exists():  # what exists but is no text file, twin.host.userfile says when reading it
            raise PlanError([doc.problem(("topology",), f"topology file {topo_path} does not exist",
                                         "fix the path (it is relative to the lab file)")])
        problems = []
        drills = []
        for i, d in enumerate(spec.drills):
            if (d.kind is None) == (d.scenario is None):
                problems.append(doc.problem(("drills", i), "a drill needs exactly one of 'kind' or 'scenario'",
                                            "write 'kind: spine-loss' (with 'target:') or 'scenario: FILE'"))
                continue
            if d.scenario is not None:
                scenario = _beside(path, d.scenario)
                if scenario is None:
                    problems.append(_missing(doc, path, ("drills", i, "scenario"), "scenario", d.scenario))
                    continue
                d = d.model_copy(update={"scenario": scenario})
            drills.append(d)
        traffic = []
        for i, pattern in enumerate(spec.traffic):
            if pattern.fault is not None:
                kind, _, target = pattern.fault.partition(":")
                if kind not in KINDS or not target:
                    problems.append(doc.problem(("traffic", i, "fault"), f"'{pattern.fault}' is not KIND:TARGET",
                                                f"write e.g. 'spine-loss:spine1'; kinds: {', '.join(KINDS)}"))
            if (pattern.pattern == "pairs") != (pattern.pairs is not None):
                problems.append(doc.problem(("traffic", i), "the pairs pattern takes 'pairs: FILE', the others none",
                                            "write 'pattern: pairs' with 'pairs: FILE', or drop 'pairs:'"))
                continue
            if pattern.pairs is not None:
                pairs = _beside(path, pattern.pairs)
                if pairs is None:
                    problems.append(_missing(doc, path, ("traffic", i, "pairs"), "pairs", pattern.pairs))
                    continue
                pattern = pattern.model_copy(update={"pairs": pairs})
            traffic.append(pattern)
        known = sorted({e.table for e in surface().entries if e.status == "not emulated"})
        problems += [doc.problem(("accept_not_emulated", i), f"'{table}' is not a table SONiC's routing stack reads "
                                 "that twin does not emulate", f"name one of {', '.join(known)}")
                     for i, table in enumerate(spec.accept_not_emulated) if table not in known]
        try:
            settings = DrillSettings(slo=spec.slo, drills=drills, accept_not_emulated=spec.accept_not_emulated,
                                     roce=spec.roce)
        except ValidationError as exc:
            problems += pydantic_problems(doc, exc)
        if problems:
            raise PlanError(problems)
        plan = plan_topology(load_topology(topo_path))
        return Lab(name=spec.name, runtime=spec.runtime, image=spec.image, health=spec.health, gnmi=spec.gnmi,
                   drills=settings, traffic=traffic,
                   roce=spec.roce, reboot=spec.reboot, plan=plan)
    plan = plan_topology(topology_from(doc))
    return Lab(name=plan.name, runtime="netns", health=HealthSettings(), plan=plan)


def _beside(lab_file: Path, name: str) -> str | None:
    """A file a lab file names (relative to the lab file), resolved; None when there is none."""
    found = Path(name) if Path(name).is_absolute() else lab_file.parent / name
    return str(found.resolve()) if found.is_file() else None


def _missing(doc: YamlDoc, lab_file: Path, loc: Loc, what: str, name: str) -> Problem:
    found = Path(name) if Path(name).is_absolute() else lab_file.parent / name
    return doc.problem(loc, f"{what} file {found} does not exist", "fix the path (it is relative to the lab file)")
