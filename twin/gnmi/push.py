"""Push per-switch config_db.json files over gNMI (full replace) and say what changed."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from twin.gnmi.client import SwitchClient
from twin.host.userfile import read_config_db
from twin.lab.running import RunningLab
from twin.model.errors import GnmiError, PlanError, Problem
from twin.model.plan import Plan
from twin.model.state import LabState
from twin.stages.configdb import GENERATED_TABLES
from twin.stages.render.config_db import node_config_db


class PushResult(BaseModel):
    switch: str
    ok: bool
    added: list[str] = []      # TABLE|KEY
    removed: list[str] = []
    changed: list[str] = []
    error: str = ""


def diff_keys(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    def flat(db: dict[str, Any]) -> dict[str, Any]:
        return {f"{t}|{k}": v for t, rows in db.items() if isinstance(rows, dict) for k, v in rows.items()}

    a, b = flat(old), flat(new)
    return (sorted(set(b) - set(a)), sorted(set(a) - set(b)), sorted(k for k in set(a) & set(b) if a[k] != b[k]))


def with_sonic_tables(new: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """`new` plus the tables of the running config that twin does not render and `new` leaves out.

    A SONiC switch's CONFIG_DB holds SONiC's own tables (FEATURE, FLEX_COUNTER_TABLE, ...) next to
    the ones twin renders; a config replace on SONiC removes whatever the new config lacks, so a
    push carries them over."""
    kept = {t: rows for t, rows in current.items() if t not in GENERATED_TABLES and t not in new}
    return {**kept, **new}


def with_lab_management(new: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """`new` with the switch's running MGMT_INTERFACE: a switch's management address is the lab's (each
    runtime gives a lab a management subnet of its own, away from every other lab's), so a config
    generated for the plan's addresses keeps the one the switch is reached at and CONFIG_DB keeps
    saying what eth0 has. Pushing a config twice then changes nothing."""
    if "MGMT_INTERFACE" not in current:
        return new
    return {**new, "MGMT_INTERFACE": current["MGMT_INTERFACE"]}


def desired_configs(plan: Plan, state: LabState, configs: Path | None) -> dict[str, dict[str, Any] | str]:
    """Switch -> config to push, or an error string when its file is missing. A file that is there but
    unreadable (twin.host.userfile: not a regular UTF-8 file inside `configs`, too large, not a JSON object of
    tables of objects) raises one PlanError before anything is pushed."""
    out: dict[str, dict[str, Any] | str] = {}
    problems: list[Problem] = []
    for node in state.nodes:
        if node.kind != "switch":
            continue
        if configs is None:
            eth0 = (IPv4Interface(f"{node.mgmt}/{IPv4Network(state.mgmt_subnet).prefixlen}"), state.mgmt_host) \
                if node.mgmt and state.mgmt_subnet and state.mgmt_host else None
            out[node.name] = node_config_db(plan, plan.node(node.name), mgmt=eth0)
            continue
        path = configs / node.name / "config_db.json"
        if not path.exists() and not path.is_symlink():
            out[node.name] = f"{path} does not exist"
            continue
        try:
            out[node.name] = read_config_db(path, within=configs)
        except PlanError as exc:
            problems += exc.problems
    if problems:
        raise PlanError(problems)
    return out


def push(lab: RunningLab, configs: Path | None, tick: Callable[[PushResult], None]) -> list[PushResult]:
    wanted = desired_configs(lab.plan, lab.state, configs)

    def one(item: tuple[str, dict[str, Any] | str]) -> PushResult:
        switch, config = item
        if isinstance(config, str):
            return PushResult(switch=switch, ok=False, error=config)
        target = lab.gnmi_target(switch)
        if target is None:
            return PushResult(switch=switch, ok=False, error="no gNMI agent for this switch")
        try:
            with SwitchClient(switch, target) as sw:
                current = sw.get("/sonic-db:CONFIG_DB/localhost/") or {}
                config = with_lab_management(with_sonic_tables(config, current), current)
                added, removed, changed = diff_keys(current, config)
                if added or removed or changed:
                    sw.replace_config(config)
        except GnmiError as exc:
            return PushResult(switch=switch, ok=False, error=str(exc))
        return PushResult(switch=switch, ok=True, added=added, removed=removed, changed=changed)

    results = []
    with ThreadPoolExecutor(max_workers=12) as pool:
        for result in pool.map(one, sorted(wanted.items())):
            tick(result)
            results.append(result)
    return results
