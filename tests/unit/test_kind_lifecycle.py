"""A node kind owns its start (twin.kinds.protocol): runtimes prepare a node with its kind's `prepare`,
the containerlab topology takes its `exec:` lines from its kind's `clab_exec`, both found through the
registry; a kind a runtime cannot start says so, naming the node and the kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.kinds import frr_router, host
from twin.kinds.facts import ClabKind
from twin.kinds.linux_start import links_up
from twin.kinds.protocol import NodeKind, NodeLaunch, NodeStart
from twin.kinds.registry import KINDS, clab_switch_kind, get_kind, kind_of, switch_kind
from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan, Plan
from twin.runtime import bringup
from twin.runtime.clab.topology import clab_topology, default_image
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    """The default lab (switches, servers) and frr01 (imported routers, hosts with exec lines)."""
    return {name: load_lab(REPO / f"labs/{name}.yaml").plan for name in ("default", "frr01")}


class RecordingProcesses:
    """A NodeProcesses that records what a kind asks of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def prepare_rundir(self, lab: str, node: NodePlan, rundir: Path) -> None:
        self.calls.append(("rundir", node.name, str(rundir)))

    def mgmt_lines(self, mgmt_ip: str, plen: int) -> list[str]:
        return [f"address add {mgmt_ip}/{plen} dev eth0"]

    def start_daemon(self, lab: str, node: NodePlan, argv: list[str]) -> None:
        self.calls.append(("daemon", node.name, *argv))

    def exec_line(self, lab: str, node: NodePlan, line: str) -> str:
        self.calls.append(("exec", node.name, line))
        return f"{node.name}: ran {line}"


def _start(plan: Plan, node: str, kind: NodeKind, mgmt_ip: str = "") -> NodeStart:
    """A node of a lab that does not exist (no namespace of that name: nothing on the machine is touched)."""
    return NodeStart("nolab", plan, plan.node(node), kind, f"tw.nolab.{node}", mgmt_ip, 24, None)


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, list[str]]]:
    """The `ip -b` batches and sysctls the kinds' preparations run, recorded, not run."""
    ran: list[tuple[str, str, list[str]]] = []
    for module in (host, frr_router):
        monkeypatch.setattr(module, "ip_batch", lambda lines, netns: ran.append(("ip", netns, list(lines))))
        monkeypatch.setattr(module, "sysctl", lambda netns, values: ran.append(
            ("sysctl", netns, [f"{k}={v}" for k, v in values.items()])))
    return ran


@pytest.mark.parametrize("name", list(KINDS))
def test_prepare_linux_node_asks_the_nodes_kind(name: str, plans: dict[str, Plan], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    kind = get_kind(name)
    plan = plans["frr01" if kind.facts.plan_kind == "router" else "default"]
    node = next(n for n in plan.nodes if n.kind == kind.facts.plan_kind)
    asked: list[Path] = []

    def prepare(start: NodeStart, procs: object, rundir: Path) -> NodeLaunch:
        asked.append(rundir)
        return lambda: [f"{start.node.name} launched by {start.kind.facts.name}"]

    monkeypatch.setattr(kind, "prepare", prepare)
    launch = bringup.prepare_linux_node(_start(plan, node.name, kind), RecordingProcesses())
    assert launch() == [f"{node.name} launched by {name}"]
    assert asked == [tmp_path / "nolab" / "nodes" / node.name] and asked[0].is_dir()


@pytest.mark.parametrize("clab_kind", ["linux", "sonic-vs"])
def test_the_topology_takes_every_nodes_exec_lines_from_its_kind(clab_kind: ClabKind, plans: dict[str, Plan],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KINDS:
        kind = get_kind(name)
        monkeypatch.setattr(kind, "clab_exec", lambda plan, node, name=name: [f"{name} starts {node.name}"])
    for plan in plans.values():
        nodes = clab_topology(plan, kind=clab_kind, image=default_image(clab_kind), files_dir="f")["topology"]["nodes"]
        for node in plan.nodes:
            kind = kind_of(node, clab_switch_kind(clab_kind))
            assert nodes[node.name]["exec"] == [f"{kind.facts.name} starts {node.name}"]


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_gives_exec_lines_for_its_nodes(name: str, plans: dict[str, Plan]) -> None:
    kind = get_kind(name)
    plan = plans["frr01" if kind.facts.plan_kind == "router" else "default"]
    for node in (n for n in plan.nodes if n.kind == kind.facts.plan_kind):
        lines = kind.clab_exec(plan, node)
        assert lines and all(isinstance(line, str) and line for line in lines), node.name
        assert lines[:len(kind.facts.sysctls)] == [f"sysctl -w {k}={v}" for k, v in kind.facts.sysctls.items()]


def test_a_server_is_addressed_by_its_kind_and_has_nothing_to_launch(plans: dict[str, Plan],
                                                                    machine: list[tuple[str, str, list[str]]],
                                                                    tmp_path: Path) -> None:
    plan = plans["default"]
    procs = RecordingProcesses()
    launch = get_kind("host").prepare(_start(plan, "server1", get_kind("host")), procs, tmp_path)
    assert machine == [("sysctl", "tw.nolab.server1", [f"{k}={v}" for k, v in host.FACTS.sysctls.items()]),
                       ("ip", "tw.nolab.server1", host.server_lines(plan.node("server1")))]
    assert launch() == [] and procs.calls == []


def test_an_imported_hosts_exec_lines_are_its_launch_in_order(plans: dict[str, Plan],
                                                              machine: list[tuple[str, str, list[str]]],
                                                              tmp_path: Path) -> None:
    plan = plans["frr01"]
    node = next(n for n in plan.nodes if n.kind == "host" and n.exec)
    procs = RecordingProcesses()
    launch = get_kind("host").prepare(_start(plan, node.name, get_kind("host")), procs, tmp_path)
    assert machine[1:] == [("ip", f"tw.nolab.{node.name}", links_up(node))]
    assert procs.calls == []  # nothing runs before the launch
    assert launch() == [f"{node.name}: ran {line}" for line in node.exec]
    assert procs.calls == [("exec", node.name, line) for line in node.exec]


def test_a_router_is_prepared_with_its_links_and_management_by_its_kind(plans: dict[str, Plan],
                                                                       machine: list[tuple[str, str, list[str]]],
                                                                       tmp_path: Path) -> None:
    plan = plans["frr01"]
    node = next(n for n in plan.nodes if n.kind == "router")
    procs = RecordingProcesses()
    get_kind("frr-router").prepare(_start(plan, node.name, get_kind("frr-router"), "172.20.1.5"), procs, tmp_path)
    assert machine == [("sysctl", f"tw.nolab.{node.name}", [f"{k}={v}" for k, v in frr_router.FACTS.sysctls.items()]),
                       ("ip", f"tw.nolab.{node.name}", [*links_up(node), "address add 172.20.1.5/24 dev eth0"])]
    assert procs.calls == [("rundir", node.name, str(tmp_path))]  # FRR starts at its launch, not before


def test_a_kind_the_runtime_cannot_start_says_so(plans: dict[str, Plan], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWIN_RUN_DIR", str(tmp_path))
    sonic = switch_kind("docker-sonic-vs:latest")
    with pytest.raises(RuntimeBackendError, match=r"^leaf1: this runtime cannot start a node of kind "
                                                  r"'sonic-vs' \(boot: sonic-vs\)$"):
        bringup.prepare_linux_node(_start(plans["default"], "leaf1", sonic), RecordingProcesses())


def test_a_kind_that_boots_in_its_container_is_booted_by_its_kind(plans: dict[str, Plan],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The container runtimes write what a kind needs before its container exists and let a kind that boots
    whole in its container (SONiC-VS) boot there; the Linux kinds do neither, the runtime prepares them."""
    from twin.kinds import sonic_vs

    booted: list[tuple[str, str, bool]] = []
    written: list[str] = []
    monkeypatch.setattr(sonic_vs, "boot", lambda run_in, ctr, lab, node, supervisord: (
        booted.append((ctr, node.name, supervisord)) or [f"{node.name}: booted"]))
    monkeypatch.setattr(sonic_vs, "write_config", lambda lab, plan, node: written.append(node.name))
    plan = plans["default"]
    for name in KINDS:
        kind = get_kind(name)
        start = _start(plan, "leaf1", kind)
        launch = kind.boot_in_container(start, "ctr-leaf1", lambda argv: "", supervisord=False)
        kind.before_container("nolab", plan, plan.node("leaf1"))
        if kind.facts.boot == "sonic-vs":
            assert launch is not None and launch() == ["leaf1: booted"]
        else:
            assert launch is None
    assert booted == [("ctr-leaf1", "leaf1", False)] and written == ["leaf1"]


def test_the_container_runtimes_ask_the_kind_to_boot_it(plans: dict[str, Plan]) -> None:
    from twin.runtime.clab import deploy
    from twin.runtime.docker import runtime as docker_runtime

    class Booting:   # a kind that boots in its container, records how it was asked
        facts = switch_kind(None).facts

        def __init__(self) -> None:
            self.asked: list[tuple[str, bool]] = []

        def boot_in_container(self, start: NodeStart, container: str, run_in: object,
                              supervisord: bool) -> NodeLaunch | None:
            self.asked.append((container, supervisord))
            return lambda: [f"{start.node.name}: booted in {container}"]

    kind = Booting()
    start = _start(plans["default"], "leaf1", kind)  # type: ignore[arg-type]
    docker = docker_runtime.ContainerPlacement.__new__(docker_runtime.ContainerPlacement)
    assert docker.prepare_node(start)() == ["leaf1: booted in tw-nolab-leaf1"]
    clab = deploy.ClabPlacement.__new__(deploy.ClabPlacement)
    assert clab.prepare_node(start)() == ["leaf1: booted in clab-tw-nolab-leaf1"]
    assert kind.asked == [("tw-nolab-leaf1", True), ("clab-tw-nolab-leaf1", False)]
