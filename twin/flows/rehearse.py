"""`twin rehearse CHANGE`: try a config change on the running twin before production.

1. read every switch's running config over gNMI (the rollback point);
2. build the new configs: a folder of <switch>/config_db.json, or a YAML/JSON file of per-switch
   merge patches (RFC 7386: a null removes a key or field);
3. show the diff, validate the whole new fabric statically (nothing is touched on findings);
4. apply over gNMI in batches (leaves first: a bad change then hits the fewest servers), waiting
   for the fabric to settle and verifying after each batch;
5. run the drills the lab lists;
6. on any failure, put every switch it touched back to its previous config and verify that.

The user's files are only read.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twin.checks.catalog import verify_checks
from twin.checks.collect_gnmi import collect_gnmi, running_configs
from twin.checks.effect import SwitchSnapshot, causes, switch_effect
from twin.checks.health import evaluate
from twin.checks.observed_change import lab_switches, observe_change
from twin.checks.snapshot import snapshots
from twin.drills.api import as_check_result, run_drill
from twin.drills.slo import scenario_of
from twin.gnmi.client import SwitchClient
from twin.gnmi.push import diff_keys, with_lab_management
from twin.host.userfile import config_value, read_config_db, type_name
from twin.lab.running import RunningLab
from twin.model.errors import PlanError, Problem, TwinError
from twin.model.plan import Plan
from twin.model.results import CheckResult, ItemResult, RehearsalReport, Settle, SwitchDiff, SwitchEffect, summarize
from twin.model.state import LabState
from twin.stages.load.source import YamlDoc, parse_doc
from twin.stages.validate.api import validate_folder

CONFIG_ROOT = "/sonic-db:CONFIG_DB/localhost/"
ROLE_ORDER = {"leaf": 0, "router": 1, "spine": 2}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def field_diff(old: dict[str, Any], new: dict[str, Any]) -> SwitchDiff:
    added, removed, changed_keys = diff_keys(old, new)
    changed = []
    for item in changed_keys:
        table, key = item.split("|", 1)
        a, b = old[table][key], new[table][key]
        for f in sorted(set(a) | set(b)):
            if a.get(f) != b.get(f):
                changed.append(f"{item} {f}: {a.get(f, '(unset)')} -> {b.get(f, '(unset)')}")
    return SwitchDiff(switch="", added=added, removed=removed, changed=changed)


@dataclass(frozen=True)
class ChangeFile:
    """What a change holds, read before anything is touched: whole configs (a folder of
    <switch>/config_db.json) or RFC 7386 merge patches per switch (a YAML/JSON file)."""

    path: Path
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)   # switch -> line of its patch


_PATCH_FIX = "write 'leaf1: {PORT: {Ethernet0: {mtu: \"9000\"}}}' (null removes a table, an entry or a field)"


def _patch_problems(doc: YamlDoc) -> list[Problem]:
    """A patch per switch, of tables, of entries: what merging it into a config_db.json needs."""
    problems = []
    for name, patch in doc.data.items():
        if not isinstance(patch, dict):
            problems.append(doc.problem((name,), f"a switch's patch is a mapping of tables, got {type_name(patch)}",
                                        _PATCH_FIX))
            continue
        for table, rows in patch.items():
            if rows is not None and not isinstance(rows, dict):
                problems.append(doc.problem((name, table), "a table's patch is a mapping of entries, got "
                                            f"{type_name(rows)}", _PATCH_FIX))
                continue
            for key, row in (rows or {}).items():
                if row is not None and not isinstance(row, dict):
                    problems.append(doc.problem((name, table, key), "an entry's patch is a mapping of fields, got "
                                                f"{type_name(row)}", _PATCH_FIX))
                    continue
                problems += [doc.problem((name, table, key, field), "a value is a string or a list of strings, "
                                         f"got {type_name(value)}", _PATCH_FIX)
                             for field, value in (row or {}).items() if value is not None and not config_value(value)]
    return problems


def read_change(change: Path) -> ChangeFile:
    """Read a change (twin.host.userfile's limits); a file that cannot be a change raises one PlanError."""
    if change.is_dir():
        configs, problems = {}, []
        for path in sorted(change.glob("*/config_db.json")):
            try:
                configs[path.parent.name] = read_config_db(path, within=change)
            except PlanError as exc:
                problems += exc.problems
        if problems:
            raise PlanError(problems)
        return ChangeFile(change, configs=configs)
    doc = parse_doc(change, missing_fix="give a folder of <switch>/config_db.json or a YAML/JSON file of patches")
    if not isinstance(doc.data, dict):
        raise PlanError([Problem(str(change), "(document)", "a change file maps switch names to patches",
                                 "write 'leaf1: {PORT: {Ethernet0: {mtu: \"9000\"}}}'", 1)])
    problems = _patch_problems(doc)
    if problems:
        raise PlanError(problems)
    return ChangeFile(change, patches={str(k): v for k, v in doc.data.items()},
                      lines={str(k): doc.line_of((k,)) or 1 for k in doc.data})


def apply_change(change: ChangeFile, current: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The new config of every switch the change touches."""
    switches = f"switches: {', '.join(sorted(current))}"
    unknown = sorted(name for name in change.configs if name not in current)
    if unknown:
        raise PlanError([Problem(str(change.path), "(folder)", f"no switch named {', '.join(unknown)} in the lab",
                                 switches)])
    problems = [Problem(str(change.path), name, "no such switch in the lab", switches, change.lines.get(name))
                for name in change.patches if name not in current]
    if problems:
        raise PlanError(problems)
    return {**{name: with_lab_management(config, current[name]) for name, config in change.configs.items()},
            **{name: merge_patch(current[name], patch) for name, patch in change.patches.items()}}


def _order(plan: Plan, switches: list[str]) -> list[str]:
    return sorted(switches, key=lambda n: (ROLE_ORDER.get(plan.node(n).role, 3), n))


class Rehearsal:
    def __init__(self, lab: str, change: Path, batch: int, progress: Callable[[str], None]) -> None:
        self.changed = read_change(change)  # a bad change is refused before the lab is asked anything
        self.lab = RunningLab.load(lab)
        self.state: LabState = self.lab.state
        self.plan = self.lab.plan
        self.change, self.batch, self.progress = change, max(1, batch), progress
        self.report = RehearsalReport(lab=lab, change=str(change))
        self.now: dict[str, SwitchSnapshot] | None = None   # the lab as the last observed change left it

    def _read(self, name: str) -> dict[str, Any]:
        with SwitchClient.of(self.lab, name) as sw:
            value = sw.get(CONFIG_ROOT)
        return value if isinstance(value, dict) else {}

    def _write(self, name: str, config: dict[str, Any]) -> None:
        with SwitchClient.of(self.lab, name) as sw:
            sw.replace_config(config)

    def _apply(self, label: str, configs: dict[str, dict[str, Any]], fields: dict[str, list[str]],
               applied: list[str]) -> CheckResult:
        """Write `configs`, wait until they have taken effect, and judge the fabric then: a change is
        judged by what it did, not by the moment its Sets returned."""
        def write() -> None:
            for name, config in configs.items():
                applied.append(name)
                self._write(name, config)

        observed = observe_change(self.lab, write, list(configs), fields, self.now)
        self.now = observed.after
        self.report.settles[label] = observed.settle
        return self._verify(label, observed.settle, causes(observed.effects))

    def _verify(self, label: str, settle: Settle, cause: list[str] | None = None) -> CheckResult:
        configs = running_configs(self.lab)
        checks = verify_checks(self.plan, configs, self.lab.settings.accept_not_emulated,
                               self.lab.settings.roce.compute_dscp)
        health = evaluate(self.plan, checks, collect_gnmi(self.lab, checks))
        items = [ItemResult(subject=f"{r.name}: {i.subject}", status="failure", message=i.message)
                 for r in health.results for i in r.failures]
        if items and cause:   # what of the change is behind it: the fields it set, and what they became in FRR
            items[:0] = [ItemResult(subject=f"caused by {line.split(': ', 1)[0]}", status="failure",
                                    message=line.split(": ", 1)[1]) for line in cause]
        if not settle.settled:
            items.insert(0, ItemResult(subject=f"settle: {', '.join(settle.still_changing) or 'fabric'}",
                                       status="failure", message=f"still changing {settle.waited_ms / 1000:.0f} s "
                                       "after the change: its effect was never final"))
        return summarize(f"verify {label}", f"sessions, ECMP, reachability, BFD and MTUs once {label} took effect",
                         items or [ItemResult(subject="fabric", status="success", message="healthy")],
                         {"settle_ms": settle.settle_ms, "waited_ms": settle.waited_ms})

    def run(self) -> RehearsalReport:
        r = self.report
        switches = [n.name for n in self.plan.switches if self.lab.gnmi_target(n.name)]
        self.progress("reading the running configs")
        with ThreadPoolExecutor(max_workers=8) as pool:
            current = dict(zip(switches, pool.map(self._read, switches), strict=True))
        new = apply_change(self.changed, current)
        touched = [n for n in _order(self.plan, list(new)) if new[n] != current[n]]
        for name in touched:
            r.diffs.append(field_diff(current[name], new[name]).model_copy(update={"switch": name}))
        if not touched:
            r.results.append(summarize("diff", "the change modifies something",
                                       [ItemResult(subject=str(self.change), status="failure",
                                                   message="the change equals the running configs")]))
            r.stopped_at = "diff"
            return r
        self.progress("validating the changed fabric")
        with tempfile.TemporaryDirectory() as tmp:
            for name in switches:
                (Path(tmp) / name).mkdir()
                (Path(tmp) / name / "config_db.json").write_text(json.dumps(new.get(name, current[name])))
            notes: list[str] = []
            _, findings = validate_folder(Path(tmp), notes=notes, accepted=self.lab.settings.accept_not_emulated)
        if notes:
            r.results.append(CheckResult(name="validate yang", description="; ".join(notes), status="skipped"))
        items = [ItemResult(subject=f"{Path(f.file).parent.name}: {f.where}", status="failure",
                            message=f"{f.message}; {f.fix}") for f in findings]
        r.results.append(summarize("validate", "static checks of the whole fabric with the change",
                                   items or [ItemResult(subject="fabric", status="success")]))
        if findings:
            r.stopped_at = "validate"
            return r
        applied: list[str] = []
        fields = {d.switch: [*d.changed, *(f"{k} added" for k in d.added), *(f"{k} removed" for k in d.removed)]
                  for d in r.diffs}
        try:
            self.progress("reading every switch before the change")
            self.now = snapshots(self.lab, lab_switches(self.lab))
            initial = self.now
            for i in range(0, len(touched), self.batch):
                group = touched[i:i + self.batch]
                self.progress(f"applying to {', '.join(group)} and waiting for it to take effect")
                result = self._apply(f"applying to {', '.join(group)}", {n: new[n] for n in group}, fields, applied)
                r.results.append(result)
                if result.status != "success":
                    r.stopped_at = f"apply {', '.join(group)}"
                    break
            else:
                for listed in self.lab.settings.drills:
                    scenario = scenario_of(listed)
                    self.progress(f"drill {scenario.name}")
                    rep = run_drill(self.state.lab, scenario, slo=listed.slo)
                    r.results.append(as_check_result(rep))
                    if not rep.passed:
                        r.stopped_at = f"drill {rep.drill}"
                        break
            r.effects = effects(initial, self.now, fields)
        except TwinError as exc:
            r.results.append(summarize("apply", "the change applied over gNMI",
                                       [ItemResult(subject=applied[-1] if applied else "-", status="failure",
                                                   message=str(exc))]))
            r.stopped_at = "apply"
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP (twin.host.signals): the change goes back first
            r.stopped_at = "interrupted"
            self._rollback(applied, current)
            raise
        if r.stopped_at:
            self._rollback(applied, current)
        else:
            r.passed = True
        return r

    def _rollback(self, applied: list[str], previous: dict[str, dict[str, Any]]) -> None:
        self.progress(f"rolling back {', '.join(applied)}")
        errors: list[ItemResult] = []

        def write() -> None:
            for name in reversed(applied):
                try:
                    self._write(name, previous[name])
                except TwinError as exc:
                    errors.append(ItemResult(subject=name, status="failure", message=str(exc)))

        observed = observe_change(self.lab, write, applied, before=self.now)
        self.now = observed.after
        self.report.settles["the rollback"] = observed.settle
        result = self._verify("the rollback", observed.settle)
        self.report.results.append(result)
        if errors:
            self.report.results.append(summarize("rollback", "previous configs restored", errors))
        self.report.rolled_back = not errors and result.status == "success"


def effects(before: dict[str, SwitchSnapshot], after: dict[str, SwitchSnapshot] | None,
            fields: dict[str, list[str]]) -> list[SwitchEffect]:
    """What the change did, switch by switch: those it touched (each, even with no effect) and any
    other that it changed."""
    if after is None:
        return []
    out = [switch_effect(s, before[s], after[s], fields.get(s, [])) for s in before if s in after]
    return [e for e in out if e.switch in fields or not e.no_effect]
