"""After configs are pushed, the checks judge what those configs ask for against the lab's intent."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from twin.checks.catalog import verify_checks
from twin.checks.configured import configured_bfd, configured_ecmp, configured_sessions
from twin.model.plan import Plan
from twin.stages.lab_file import load_lab
from twin.stages.render.config_db import build_config_db

ConfigDb = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_lab(Path(__file__).resolve().parents[1] / "integration/data/mini.yaml").plan


def _generated(plan: Plan) -> dict[str, ConfigDb]:
    return {n.name: build_config_db(plan, n) for n in plan.switches}


def classic(db: ConfigDb) -> ConfigDb:
    """A frrcfgd config in bgpcfgd's classic dialect: BGP_NEIGHBOR keyed by IP, no BGP_GLOBALS, no BFD."""
    out = {t: rows for t, rows in copy.deepcopy(db).items()
           if not t.startswith(("BGP_", "ROUTE_MAP"))}
    meta = out["DEVICE_METADATA"]["localhost"]
    meta.pop("frr_mgmt_framework_config")
    meta["docker_routing_config_mode"] = "separated"
    out["BGP_NEIGHBOR"] = {key.split("|", 1)[1]: {f: v for f, v in row.items() if f in ("asn", "name", "local_addr",
                                                                                           "admin_status")}
                           for key, row in db["BGP_NEIGHBOR"].items()}
    return out


def _names(checks: list[Any]) -> list[str]:
    return [c.name for c in checks]


def test_twin_s_own_configs_give_the_plan_s_checks(plan: Plan) -> None:
    """... and, judged by configs, what they hold that twin does not emulate (nothing, for its own)."""
    checks = verify_checks(plan, _generated(plan))
    assert _names(checks) == [*_names(verify_checks(plan)), "not-emulated"]
    assert checks[-1].evaluate({}).status == "success"


def test_classic_configs_expect_no_bfd_and_their_own_announcements(plan: Plan) -> None:
    configs = {name: classic(db) for name, db in _generated(plan).items()}
    assert configured_bfd(configs) == {}
    checks = verify_checks(plan, configs)
    assert "bfd-sessions" not in _names(checks)
    assert "bfd-sessions" in _names(verify_checks(plan))
    ecmp = configured_ecmp(plan, configs)
    leaf2_loopback = f"{plan.node('leaf2').loopback}/32"
    assert ecmp["leaf1"] == {leaf2_loopback: 2}, "bgpcfgd announces Loopback0 (and VLAN subnets), nothing else"


def test_neighbors_the_plan_does_not_know_get_a_check_of_their_own(plan: Plan) -> None:
    configs = _generated(plan)
    configs["leaf1"]["BGP_NEIGHBOR"]["default|10.9.9.9"] = {"asn": "65999", "name": "stranger",
                                                             "admin_status": "up"}
    checks = {c.name: c for c in verify_checks(plan, configs)}
    assert "10.9.9.9" in configured_sessions(configs)["leaf1"]
    assert checks["configured-bgp-sessions"].inputs.sessions["leaf1"]["10.9.9.9"] == "stranger"
    assert "10.9.9.9" not in checks["bgp-sessions"].inputs.sessions["leaf1"]


def test_a_shut_neighbor_is_not_expected_up(plan: Plan) -> None:
    configs = _generated(plan)
    key = next(iter(configs["leaf1"]["BGP_NEIGHBOR"]))
    configs["leaf1"]["BGP_NEIGHBOR"][key]["admin_status"] = "down"
    assert key.split("|")[1] not in configured_sessions(configs)["leaf1"]
