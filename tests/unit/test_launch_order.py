"""The launch order (twin.runtime.launch_order): BGP speakers in waves where no two neighbours share
one, each wave prepared and launched after the one before; a node launches as soon as it is
prepared while the first bgpd is in its first second; a failure ends every wait."""

from __future__ import annotations

import threading
import time
from ipaddress import IPv4Address
from pathlib import Path

import pytest

from twin.model.plan import NeighborPlan, NodePlan
from twin.runtime.launch_order import LaunchOrder, start_nodes, waves
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]


def _nodes(sessions: list[tuple[str, str]], alone: tuple[str, ...] = ()) -> list[NodePlan]:
    """Nodes in order of first mention, with a BGP session per pair; `alone`: nodes with none."""
    names = list(dict.fromkeys([n for pair in sessions for n in pair]))
    neighbors: dict[str, list[NeighborPlan]] = {n: [] for n in names}
    for a, b in sessions:
        for me, peer in ((a, b), (b, a)):
            neighbors[me].append(NeighborPlan(ip=IPv4Address("10.0.0.1"), asn=65000, name=peer,
                                              local_addr=IPv4Address("10.0.0.0"), iface="Ethernet0"))
    return ([NodePlan(name=n, role="leaf", kind="switch", index=i, neighbors=neighbors[n])
             for i, n in enumerate(names)]
            + [NodePlan(name=n, role="server", kind="host", index=i) for i, n in enumerate(alone)])


def _by_name(nodes: list[NodePlan]) -> dict[str, NodePlan]:
    return {n.name: n for n in nodes}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_clos_launches_its_spines_then_its_leaves_and_its_servers_in_no_wave() -> None:
    plan = load_lab(REPO / "labs" / "default.yaml").plan
    wave = waves(plan.nodes)
    assert {n: w for n, w in wave.items() if n.startswith("spine")} == {f"spine{i}": 0 for i in range(1, 5)}
    assert {n: w for n, w in wave.items() if n.startswith("leaf")} == {f"leaf{i}": 1 for i in range(1, 9)}
    assert not [n for n in wave if n.startswith("server")]
    ordered = [n.name for n in LaunchOrder(plan.nodes).ordered(plan.nodes)]
    assert ordered[:4] == [f"spine{i}" for i in range(1, 5)]
    assert ordered[4:12] == [f"leaf{i}" for i in range(1, 9)]
    assert sorted(ordered[12:]) == sorted(n.name for n in plan.nodes if n.role == "server")


def test_no_two_neighbours_share_a_wave_in_three_tiers_or_a_triangle() -> None:
    three_tier = _nodes([("super1", "spine1"), ("super1", "spine2"), ("super2", "spine1"), ("super2", "spine2"),
                         ("spine1", "leaf1"), ("spine2", "leaf1"), ("spine1", "leaf2"), ("spine2", "leaf2")])
    assert waves(three_tier) == {"super1": 0, "spine1": 1, "super2": 0, "spine2": 1, "leaf1": 0, "leaf2": 0}
    assert waves(_nodes([("a", "b"), ("b", "c"), ("c", "a")])) == {"a": 0, "b": 1, "c": 2}


def test_the_first_node_launches_early_and_nodes_ready_a_second_later_wait_for_the_rest() -> None:
    nodes = _nodes([("spine1", "leaf1")], alone=("server1", "server2"))
    n = _by_name(nodes)
    clock = Clock()
    order = LaunchOrder(nodes, window=1.0, clock=clock)
    assert order.early(n["spine1"])
    clock.now += 0.3
    order.launched(n["spine1"], 0.3)
    clock.now += 0.2
    assert order.early(n["leaf1"])       # 0.5 s in, and a launch takes 0.3 s: listening before 1 s
    clock.now += 0.3
    assert not order.early(n["server1"])  # 0.8 s in: launched, it would run only after the second
    clock.now += 0.5
    assert not order.early(n["server2"])


def test_a_node_waits_for_its_earlier_waves_and_follows_them_when_they_are_left_for_later() -> None:
    nodes = _nodes([("spine1", "leaf1"), ("spine2", "leaf1")])
    n = _by_name(nodes)
    clock = Clock()
    order = LaunchOrder(nodes, window=1.0, clock=clock)
    answer: list[bool] = []
    leaf = threading.Thread(target=lambda: answer.append(order.early(n["leaf1"])), daemon=True)
    leaf.start()
    assert order.early(n["spine1"])
    time.sleep(0.05)
    assert not answer                    # spine2 has neither launched nor been left for later
    clock.now += 1.5
    assert not order.early(n["spine2"])  # prepared too late: it launches later, and so does the leaf
    leaf.join(5)
    assert answer == [False]


def test_a_later_launch_waits_for_its_earlier_waves_to_have_launched() -> None:
    nodes = _nodes([("spine1", "leaf1")])
    n = _by_name(nodes)
    order = LaunchOrder(nodes)
    turn: list[bool] = []
    leaf = threading.Thread(target=lambda: turn.append(order.wait_turn(n["leaf1"])), daemon=True)
    leaf.start()
    time.sleep(0.05)
    assert not turn
    order.launched(n["spine1"], 0.1)
    leaf.join(5)
    assert turn == [True]
    assert order.wait_turn(n["spine1"])  # the first wave waits for nothing


def test_an_abort_ends_every_wait() -> None:
    nodes = _nodes([("spine1", "leaf1")])
    n = _by_name(nodes)
    order = LaunchOrder(nodes)
    answers: list[bool] = []
    waiters = [threading.Thread(target=lambda f=f: answers.append(f(n["leaf1"])), daemon=True)
               for f in (order.wait_to_prepare, order.early, order.wait_turn)]
    for w in waiters:
        w.start()
    time.sleep(0.05)
    assert not answers
    order.abort()
    for w in waiters:
        w.join(5)
    assert answers == [False, False, False]


def test_start_nodes_launches_early_what_is_prepared_early_and_the_rest_after_the_hook() -> None:
    """spine1 launches while server1 is still being prepared (server1's preparation waits for it);
    server2, prepared after the window, launches only once every node is prepared."""
    nodes = _nodes([("spine1", "leaf1")], alone=("server1", "server2"))
    events: list[str] = []
    spine_launched = threading.Event()

    def prepare(node: NodePlan) -> None:
        if node.name == "server1":
            assert spine_launched.wait(5), "spine1 did not launch before every node was prepared"
        if node.name == "server2":
            time.sleep(0.2)   # past the window
        events.append(f"prepared {node.name}")

    def launch(node: NodePlan) -> list[str]:
        events.append(f"launch {node.name}")
        if node.name == "spine1":
            spine_launched.set()
        return [f"{node.name}: up"]

    notes = start_nodes(nodes, prepare, launch, lambda: events.append("hook"), lambda: None, lambda: None,
                        window=0.1)
    assert notes == [f"{n.name}: up" for n in nodes]   # in plan order
    assert events.index("launch spine1") < events.index("prepared server1")
    assert events.index("launch leaf1") > events.index("launch spine1")
    assert events.index("hook") < events.index("launch server2")
    assert sorted(e for e in events if e.startswith("launch")) == sorted(f"launch {n.name}" for n in nodes)


@pytest.mark.timeout(30)
def test_a_failed_launch_fails_start_nodes_without_leaving_anything_waiting() -> None:
    nodes = _nodes([("spine1", "leaf1"), ("spine2", "leaf1")], alone=("server1",))
    launched: list[str] = []

    def launch(node: NodePlan) -> list[str]:
        if node.name == "spine2":
            raise RuntimeError("spine2: zebra did not start")
        launched.append(node.name)
        return []

    with pytest.raises(RuntimeError, match="spine2: zebra did not start"):
        start_nodes(nodes, lambda node: None, launch, lambda: None, lambda: None, lambda: None)
    assert "leaf1" not in launched


@pytest.mark.timeout(30)
def test_a_failed_preparation_prepares_no_later_wave() -> None:
    nodes = _nodes([("spine1", "leaf1"), ("spine2", "leaf1")])
    prepared: list[str] = []

    def prepare(node: NodePlan) -> None:
        if node.name == "spine2":
            raise RuntimeError("spine2: redis did not answer")
        prepared.append(node.name)

    with pytest.raises(RuntimeError, match="spine2: redis did not answer"):
        start_nodes(nodes, prepare, lambda node: [], lambda: None, lambda: None, lambda: None)
    assert "leaf1" not in prepared
