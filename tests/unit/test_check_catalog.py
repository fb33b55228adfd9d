"""The check catalog: which checks a plan implies, in the report's order (twin.checks.catalog)."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.checks.catalog import HEALTH, VERIFY, health_checks, verify_checks
from twin.stages.lab_file import load_lab

LABS = Path(__file__).resolve().parents[2] / "labs"


@pytest.mark.parametrize(("lab", "health", "verify"), [
    ("default.yaml", ["bgp-sessions", "ecmp-width", "server-reachability"],
     ["bgp-sessions", "ecmp-width", "server-reachability", "bfd-sessions", "link-mtu", "server-port-df-ping",
      "frr-config"]),
    ("rail.yaml", ["bgp-sessions", "ecmp-width", "server-reachability"],
     ["bgp-sessions", "ecmp-width", "server-reachability", "bfd-sessions", "link-mtu", "server-port-df-ping",
      "frr-config"]),
])
def test_the_catalog_builds_the_checks_a_plan_implies_in_order(lab: str, health: list[str],
                                                                verify: list[str]) -> None:
    plan = load_lab(LABS / lab).plan
    assert [c.name for c in health_checks(plan)] == health
    assert [c.name for c in verify_checks(plan)] == verify


def test_a_configured_session_check_joins_only_when_the_configs_ask_for_other_sessions() -> None:
    plan = load_lab(LABS / "default.yaml").plan
    leaf = next(n for n in plan.nodes if n.role == "leaf")
    configs = {leaf.name: {"BGP_NEIGHBOR": {"default|10.99.0.1": {"asn": "65000", "name": "elsewhere"}}}}
    assert "configured-bgp-sessions" in [c.name for c in health_checks(plan, configs)]


def test_every_builder_is_registered_once() -> None:
    builders = HEALTH + VERIFY
    assert len(set(builders)) == len(builders)
