"""The two registries: runtimes by name (imported lazily, no inheritance between them) and node kinds
by name (each a module plus a data file whose facts validate)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest
from pydantic import ValidationError

from twin.kinds.facts import KindFacts, load_facts
from twin.kinds.registry import KINDS, clab_switch_kind, get_kind, kind_of, switch_kind
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.runtime.protocol import Containers
from twin.runtime.registry import RUNTIMES, get_runtime, runtime_class
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = ("up", "down", "labs", "exec_argv", "set_link_state", "node_loss", "node_pids")


# -- runtimes -----------------------------------------------------------------------------------

def test_unknown_runtime_names_the_registered_ones() -> None:
    with pytest.raises(TwinError, match=r"unknown runtime 'kvm'; available: netns, docker, clab"):
        get_runtime("kvm")


@pytest.mark.parametrize("name", list(RUNTIMES))
def test_every_registered_runtime_implements_the_protocol(name: str) -> None:
    runtime = get_runtime(name, None if name == "netns" else "twin-switch:0.1.0")
    assert runtime.name == name
    assert all(callable(getattr(runtime, method)) for method in PROTOCOL)
    assert runtime.templates is None
    assert isinstance(runtime, Containers) is (name != "netns")


def test_templates_are_handed_to_the_runtime(tmp_path: Path) -> None:
    assert get_runtime("netns", templates=tmp_path).templates == tmp_path


def test_no_runtime_inherits_another() -> None:
    classes = [runtime_class(name) for name in RUNTIMES]
    for a, b in permutations(classes, 2):
        assert not issubclass(a, b), f"{a.__name__} inherits {b.__name__}"  # type: ignore[arg-type]


def test_the_registry_imports_no_runtime_until_asked() -> None:
    code = ("import sys, twin.runtime.registry; "
            "print(sorted(m for m in sys.modules if m.startswith(('twin.runtime.', 'docker'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "docker" not in out and "twin.runtime.netns" not in out and "twin.runtime.clab" not in out


# -- node kinds ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_lab(REPO / "labs/default.yaml").plan


def test_unknown_kind_names_the_registered_ones() -> None:
    with pytest.raises(TwinError, match=r"unknown node kind 'ceos'; available: frr-switch, sonic-vs, frr-router, host"):
        get_kind("ceos")


@pytest.mark.parametrize(("name", "module"), list(KINDS.items()))
def test_every_kind_has_a_data_file_that_validates(name: str, module: str) -> None:
    facts = load_facts(module)
    assert facts.name == name
    assert get_kind(name).facts is facts
    assert importlib.import_module(f"twin.kinds.{module}").KIND is get_kind(name)


def test_facts_refuse_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="extra"):
        KindFacts.model_validate({"name": "x", "summary": "x", "plan_kind": "host", "clab_kind": "linux",
                                  "colour": "red"})


def test_a_missing_data_file_is_a_clear_error() -> None:
    with pytest.raises(TwinError, match=r"twin/kinds/nothere.yaml"):
        load_facts("nothere")


@pytest.mark.parametrize(("image", "kind"), [(None, "frr-switch"), ("twin-switch:0.1.0", "frr-switch"),
                                             ("docker-sonic-vs:202405", "sonic-vs"),
                                             ("registry.local:5000/docker-sonic-vs", "sonic-vs")])
def test_the_switch_image_picks_the_switch_kind(image: str | None, kind: str) -> None:
    assert switch_kind(image).facts.name == kind


def test_every_plan_node_has_a_kind(plan: Plan) -> None:
    switches = get_kind("sonic-vs")
    assert kind_of(plan.node("leaf1"), switches) is switches
    assert kind_of(plan.node("server1"), switches).facts.name == "host"
    assert clab_switch_kind("linux").facts.name == "frr-switch"
    assert clab_switch_kind("sonic-vs").facts.name == "sonic-vs"


def test_sonic_vs_names_ports_as_containerlab_does(plan: Plan) -> None:
    leaf = plan.node("leaf1")
    assert [get_kind("sonic-vs").container_iface(i) for i in leaf.interfaces[:2]] == ["eth1", "eth2"]
    assert get_kind("frr-switch").container_iface(leaf.interfaces[0]) == leaf.interfaces[0].kernel


def test_imported_routers_forward_as_twins_switches_do() -> None:
    assert get_kind("frr-router").facts.sysctls == get_kind("frr-switch").facts.sysctls
