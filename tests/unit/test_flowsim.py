"""The flow-level model of a collective: fair shares, the event loop, the sends of each collective and the
figures, against cases worked out by hand (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from twin.model.plan import Plan
from twin.model.traffic import Flow, Gpu, LinkLoad, Metrics, TrafficReport
from twin.report.traffic import traffic_markdown, traffic_table
from twin.stages.lab_file import load_lab
from twin.traffic import completion, metrics
from twin.traffic.collectives import algo_factor, schedule
from twin.traffic.export import flows_document
from twin.traffic.fairshare import max_min
from twin.traffic.flowsim import Outage, Transfer, simulate
from twin.traffic.gpus import lab_gpus
from twin.traffic.links import capacities
from twin.traffic.resolve import Hop
from twin.traffic.resolve import Path as FlowPath

LABS = Path(__file__).resolve().parents[2] / "labs"
MIB = 2**20


@pytest.fixture(scope="module")
def clos() -> Plan:
    return load_lab(LABS / "default.yaml").plan


# -- max-min fair shares ----------------------------------------------------------------------------

def test_flows_sharing_a_link_split_it_and_the_rest_goes_to_the_others() -> None:
    # f0 crosses L1 and L2, f1 only L1, f2 only L2: L1 (1) is f0's and f1's bottleneck, f2 gets L2's rest
    assert max_min([("L1", "L2"), ("L1",), ("L2",)], {"L1": 1.0, "L2": 2.0}) == pytest.approx([0.5, 0.5, 1.5])
    assert max_min([("L1",), None, ("nowhere",)], {"L1": 1.0}) == [1.0, 0.0, 0.0]


# -- the event loop: 1 Mb/s moves 1000 bits a millisecond --------------------------------------------

def test_two_flows_sharing_a_link_end_together() -> None:
    timings = simulate([Transfer(1000.0, ("L",)), Transfer(1000.0, ("L",))], {"L": 1.0})
    assert [x for t in timings for x in (t.start_ms, t.end_ms)] == pytest.approx([0.0, 2.0, 0.0, 2.0])


def test_a_flow_that_finishes_first_leaves_its_share_to_the_other() -> None:
    # both at 0.5 until the small one ends at 2 ms (the big one has moved 1000 of 3000), then 2000 at 1
    timings = simulate([Transfer(1000.0, ("L",)), Transfer(3000.0, ("L",))], {"L": 1.0})
    assert [t.end_ms for t in timings] == [pytest.approx(2.0), pytest.approx(4.0)]


def test_a_send_starts_when_what_it_waits_for_has_ended() -> None:
    timings = simulate([Transfer(2000.0, ("L1",)), Transfer(1000.0, ("L2",), after=(0,))], {"L1": 1.0, "L2": 1.0})
    assert (timings[1].start_ms, timings[1].end_ms) == pytest.approx((2.0, 3.0))


def test_a_fault_on_one_of_two_paths_stalls_only_the_flow_that_crossed_it() -> None:
    # A on L1 (lost), B on L2; the fabric needs 5 ms, then A moves onto L2 beside B
    transfers = [Transfer(1000.0, ("L1",)), Transfer(8000.0, ("L2",))]
    outage = Outage(5.0, frozenset({0}), [("L2",), ("L2",)])
    a, b = simulate(transfers, {"L1": 1.0, "L2": 1.0}, outage)
    assert (a.end_ms, a.waited_ms) == pytest.approx((7.0, 5.0))   # 1000 at 0.5 after the outage
    assert (b.end_ms, b.waited_ms) == pytest.approx((9.0, 0.0))   # 5000 alone, 1000 shared, 2000 alone
    # B small: it is done before the outage ends, and A runs alone on L2 afterwards
    a, b = simulate([Transfer(1000.0, ("L1",)), Transfer(1000.0, ("L2",))], {"L1": 1.0, "L2": 1.0}, outage)
    assert (a.end_ms, b.end_ms) == pytest.approx((6.0, 1.0))


def test_a_send_that_starts_after_the_outage_takes_the_new_path_without_waiting() -> None:
    transfers = [Transfer(10000.0, ("L2",)), Transfer(1000.0, ("L1",), after=(0,))]
    _, second = simulate(transfers, {"L1": 1.0, "L2": 1.0}, Outage(5.0, frozenset({1}), [("L2",), ("L2",)]))
    assert (second.start_ms, second.end_ms, second.waited_ms) == pytest.approx((10.0, 11.0, 0.0))


def test_a_flow_left_without_a_path_never_ends_and_nor_does_what_waits_for_it() -> None:
    transfers = [Transfer(1000.0, ("L1",)), Transfer(1000.0, ("L2",), after=(0,)), Transfer(1000.0, ("L2",))]
    outage = Outage(1.0, frozenset({0}), [None, None, ("L2",)])
    lost, waiting, other = simulate(transfers, {"L1": 1.0, "L2": 1.0}, outage)
    assert (lost.end_ms, waiting.start_ms, waiting.end_ms) == (None, None, None)
    assert other.end_ms == pytest.approx(1.0)


# -- the collectives' sends -------------------------------------------------------------------------

@pytest.mark.parametrize(("collective", "n", "factor"), [
    ("AllReduce", 4, 1.5), ("AllReduce", 2, 1.0), ("AllGather", 4, 0.75), ("ReduceScatter", 8, 0.875),
    ("AllToAll", 16, 0.9375), ("SendRecv", 16, 1.0),
])
def test_algo_factor_is_the_drafts(collective: str, n: int, factor: float) -> None:
    assert algo_factor(collective, n) == factor


def _gpu(server: str, leaf: str = "l1") -> Gpu:
    return Gpu(server=server, index=0, ip=f"10.0.0.{server[-1]}", nic="eth1", leaf=leaf, leaf_port="p",
               speed_mbps=400000)


def _ring_flows(servers: list[str], qps: int) -> list[Flow]:
    return [Flow(src=f"{a}/0", dst=f"{b}/0", qp=q, src_ip="x", dst_ip="y", sport=49152 + q)
            for a, b in zip(servers, servers[1:] + servers[:1], strict=True) for q in range(qps)]


@pytest.mark.parametrize(("pattern", "steps"), [("ring-allreduce", 6), ("all-gather", 3), ("reduce-scatter", 3)])
def test_a_ring_of_four_runs_its_steps_each_waiting_for_the_chunk_before(pattern: str, steps: int) -> None:
    servers = ["s1", "s2", "s3", "s4"]
    gpus = {f"{s}/0": _gpu(s) for s in servers}
    flows = _ring_flows(servers, 2)
    sched = schedule(pattern, flows, gpus, 128 * MIB)   # type: ignore[arg-type]
    assert sched.n == 4 and len(sched.sends) == steps * 4 * 2
    assert sorted({s.step for s in sched.sends}) == list(range(steps))
    assert {s.bytes for s in sched.sends} == {128 * MIB // 4 // 2}   # S/n per step, over 2 QPs
    for send in sched.sends:
        if send.step == 0:
            assert send.after == ()
            continue
        waits = [sched.sends[i] for i in send.after]
        into = flows[send.flow].src
        assert {(flows[w.flow].dst, w.step) for w in waits[:2]} == {(into, send.step - 1)}   # both QPs into it
        assert (waits[2].flow, waits[2].step) == (send.flow, send.step - 1)                  # its own last one


def test_all_to_all_sends_each_peer_its_share_and_counts_every_gpu() -> None:
    gpus = {f"s{i}/0": _gpu(f"s{i}") for i in range(1, 5)}
    flows = [Flow(src=a, dst=b, qp=0, src_ip="x", dst_ip="y", sport=49152) for a in gpus for b in gpus if a != b]
    sched = schedule("all-to-all", flows, gpus, 128 * MIB)
    assert (sched.collective, sched.n, sched.algo_factor) == ("AllToAll", 4, 0.75)
    assert {s.bytes for s in sched.sends} == {32 * MIB} and all(not s.after for s in sched.sends)


# -- the figures on the default lab's plan -----------------------------------------------------------

def _via(plan: Plan, a: Gpu, b: Gpu, spine: str) -> FlowPath:
    """GPU a to GPU b through `spine` (or straight through their leaf)."""
    hops = [Hop(a.server, a.nic, a.leaf, a.leaf_port)]
    if a.leaf != b.leaf:
        up = next(i for i in plan.node(a.leaf).interfaces if i.peer_node == spine)
        down = next(i for i in plan.node(spine).interfaces if i.peer_node == b.leaf)
        hops += [Hop(a.leaf, up.kernel, spine, plan.node(spine).iface(up.peer_iface).kernel),
                 Hop(spine, down.kernel, b.leaf, plan.node(b.leaf).iface(down.peer_iface).kernel)]
    hops.append(Hop(b.leaf, b.leaf_port, b.server, b.nic))
    return FlowPath(hops=hops, complete=True)


def test_ring_allreduce_on_idle_links_runs_at_line_rate_and_a_spine_loss_stalls_only_the_spines_flows(
        clos: Plan) -> None:
    every = {g.name: g for g in lab_gpus(clos)}
    servers = ["server1", "server2", "server3", "server4"]     # leaf1, leaf1, leaf2, leaf2
    gpus = {f"{s}/0": every[f"{s}/0"] for s in servers}
    flows = _ring_flows(servers, 1)
    sched = schedule("ring-allreduce", flows, gpus, 128 * MIB)
    before = [_via(clos, gpus[f.src], gpus[f.dst], "spine1") for f in flows]
    during = [_via(clos, gpus[f.src], gpus[f.dst], "spine2") for f in flows]
    caps = capacities(clos, gpus.values())
    step_ms = 32 * MIB * 8 / 400e9 * 1e3                      # S/4 at 400 Gb/s
    normal = completion.run(clos, sched, flows, gpus, before, caps)
    assert normal.figures.completion_ms == pytest.approx(6 * step_ms, abs=1e-5)
    assert normal.figures.busbw_gbps == pytest.approx(400, abs=0.01)   # algbw x 2(n-1)/n: the line rate
    fault = completion.Fault(10.0, {"spine1"}, set(), during)
    hit = completion.run(clos, sched, flows, gpus, before, caps, fault)
    assert hit.figures.completion_ms == pytest.approx(10 + 6 * step_ms, abs=1e-5)
    crossed = {(r.src, r.dst) for r in hit.rows if r.waited_ms > 0}
    assert crossed == {("server2/0", "server3/0"), ("server4/0", "server1/0")}     # the two that cross a spine
    assert all(r.waited_ms == pytest.approx(10.0) and r.step == 0 for r in hit.rows if r.waited_ms > 0)
    assert all(r.new_path is not None and {("spine2", "leaf1"), ("spine2", "leaf2")} & set(r.new_path)
               for r in hit.rows if r.waited_ms > 0)
    later = [r for r in hit.rows if r.step > 0 and (r.src, r.dst) in crossed]
    assert later and all(("leaf1", "spine2") in r.path or ("leaf2", "spine2") in r.path for r in later)


def test_no_flow_across_the_fault_means_no_outage_charged(clos: Plan) -> None:
    every = {g.name: g for g in lab_gpus(clos)}
    gpus = {n: every[n] for n in ("server1/0", "server2/0")}        # both on leaf1: no spine in any path
    flows = _ring_flows(["server1", "server2"], 2)
    sched = schedule("ring-allreduce", flows, gpus, 128 * MIB)
    paths = [_via(clos, gpus[f.src], gpus[f.dst], "spine1") for f in flows]
    caps = capacities(clos, gpus.values())
    normal = completion.run(clos, sched, flows, gpus, paths, caps)
    hit = completion.run(clos, sched, flows, gpus, paths, caps, completion.Fault(12026.0, {"spine1"}, set(), paths))
    assert hit.figures.completion_ms == normal.figures.completion_ms and not any(r.waited_ms for r in hit.rows)
    assert metrics.jct(normal.figures.completion_ms, hit.figures.completion_ms, 1000) == (0.0, 0.0)


def test_per_rail_and_per_pod_figures_on_a_rail_lab() -> None:
    rail = load_lab(LABS / "rail.yaml").plan
    every = {g.name: g for g in lab_gpus(rail)}
    gpus = {n: every[n] for n in ("pod1-server1/0", "pod1-server2/0", "pod1-server1/1", "pod1-server2/1")}
    flows = [Flow(src=a, dst=b, qp=0, src_ip="x", dst_ip="y", sport=49152) for a, b in
             (("pod1-server1/0", "pod1-server2/0"), ("pod1-server2/0", "pod1-server1/0"),
              ("pod1-server1/1", "pod1-server2/1"), ("pod1-server2/1", "pod1-server1/1"))]
    sched = schedule("ring-allreduce", flows, gpus, 128 * MIB)
    paths = [_via(rail, gpus[f.src], gpus[f.dst], "spine1") for f in flows]
    out = completion.run(rail, sched, flows, gpus, paths, capacities(rail, gpus.values()))
    assert set(out.figures.by_rail) == {"1", "2"} and set(out.figures.by_pod) == {"1"}
    assert out.figures.by_rail["1"].gpus == 2 and out.figures.by_pod["1"].gpus == 4
    assert out.figures.by_rail["1"].completion_ms == out.figures.completion_ms


# -- what people read: the console table, Markdown and the packet simulator's file -------------------

def _report(clos: Plan) -> TrafficReport:
    every = {g.name: g for g in lab_gpus(clos)}
    a, b = every["server1/0"], every["server3/0"]
    flows = [Flow(src=a.name, dst=b.name, qp=0, src_ip=a.ip, dst_ip=b.ip, sport=50000)]
    m = metrics.measure(clos, flows, [_via(clos, a, b, "spine1")], {a.name: a, b.name: b})
    long = LinkLoad(a="pod1-rail4", b="spine4", a_port="Ethernet32", b_port="Ethernet4", flows=4, load=1.0)
    m = m.model_copy(update={"uplink_loads": [long]})
    figures = {k: getattr(m, k) for k in Metrics.model_fields if k in TrafficReport.model_fields}
    return TrafficReport.model_validate({**figures, "lab": "x", "pattern": "pairs", "qps": 1, "gpus": 2,
                                         "uplinks": m.uplinks, "flows": 1, "before": m,
                                         "paths": {f"{a.name}->{b.name}#0:50000": []}})


def test_the_console_table_folds_instead_of_cutting_and_says_it_is_a_model(clos: Plan) -> None:
    console = Console(width=80, record=True)
    console.print(traffic_table(_report(clos)))
    text = console.export_text()
    assert "…" not in text and "pod1-rail4->spine4" in text
    assert "model: SendRecv, n=2, 128 MiB per rank" in text
    assert "| before | 2.684 ms | 400 | 400 | 100% |" in traffic_markdown(_report(clos))


def test_the_export_lists_links_gpus_and_every_send_with_its_5_tuple(clos: Plan) -> None:
    doc = flows_document(clos, _report(clos))
    assert (doc["format"], doc["version"], doc["fault"]) == ("twin-flows", 1, None)
    assert len(doc["links"]) == 2 * len(clos.links) and {lk["capacity_gbps"] for lk in doc["links"]} == {400}
    (flow,) = doc["flows"]
    assert (flow["sport"], flow["dport"], flow["bytes"], flow["after"]) == (50000, 4791, 128 * MIB, [])
    assert flow["path"][0] == ("server1", "leaf1") and flow["path"][-1] == ("leaf2", "server3")
    assert [g["name"] for g in doc["gpus"]] == ["server1/0", "server3/0"]
