"""Collective traffic: QP source ports, patterns, and the draft's metrics on hand-made paths (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.model.errors import PlanError, TwinError
from twin.model.plan import Plan
from twin.model.traffic import Flow, Gpu, LinkLoad, Metrics, TrafficReport, TrafficSlo
from twin.report.traffic import heatmap_png, traffic_markdown
from twin.stages.lab_file import load_lab
from twin.traffic import metrics, patterns
from twin.traffic.gpus import lab_gpus, parse_spec, select
from twin.traffic.judge import judge
from twin.traffic.qp import QpNumbers, flow_label, source_port, udp_sport
from twin.traffic.resolve import Hop
from twin.traffic.resolve import Path as FlowPath
from twin.traffic.run import parse_fault
from twin.traffic.seeds import SAME_SEED, seed_for

LABS = Path(__file__).resolve().parents[2] / "labs"


@pytest.fixture(scope="module")
def rail() -> Plan:
    return load_lab(LABS / "rail.yaml").plan


@pytest.fixture(scope="module")
def clos() -> Plan:
    return load_lab(LABS / "default.yaml").plan


# -- QP source ports (Linux's rdma_get_udp_sport with no flow label) ------------------------------

@pytest.mark.parametrize(("lqpn", "rqpn", "label"), [
    (1, 1, 1),
    (0x100, 0x101, (0x100 * 0x101) & 0xFFFFF),                       # small products are the label
    (0x12345, 0x6789A, (lambda v: (v ^ (v >> 20) ^ ((v ^ (v >> 20)) >> 40)) & 0xFFFFF)(0x12345 * 0x6789A)),
])
def test_flow_label_folds_the_qp_product_at_bits_20_and_40(lqpn: int, rqpn: int, label: int) -> None:
    assert flow_label(lqpn, rqpn) == label


@pytest.mark.parametrize(("label", "port"), [
    (0, 0xC000),
    (0x3FFF, 0xFFFF),
    (0x4000, 0xC001),          # bit 14 folds onto bit 0
    (0xFC000, 0xC03F),         # the six high bits fold onto the low six
    (0x12345, 0xC000 | ((0x12345 & 0x3FFF) ^ ((0x12345 & 0xFC000) >> 14))),
])
def test_udp_source_port_is_the_folded_label_in_the_roce_entropy_range(label: int, port: int) -> None:
    assert udp_sport(label) == port


def test_qp_numbers_are_taken_in_order_at_both_ends_and_a_pair_hashes_alike_both_ways() -> None:
    numbers = QpNumbers()
    assert numbers.connect("a/0", "b/0") == (0x100, 0x100)
    assert numbers.connect("a/0", "c/0") == (0x101, 0x100)
    assert numbers.connect("b/0", "a/0") == (0x101, 0x102)
    assert source_port(0x101, 0x102) == source_port(0x102, 0x101)
    ports = [source_port(0x100 + k, 0x100 + k) for k in range(8)]
    assert len(set(ports)) == 8 and all(0xC000 <= p <= 0xFFFF for p in ports)


# -- GPUs and patterns on the shipped labs -----------------------------------------------------------

def test_rail_lab_gpus_are_nics_on_their_rail_leaves(rail: Plan) -> None:
    gpus = lab_gpus(rail)
    assert len(gpus) == 4 * 8
    first = [g for g in gpus if g.server == gpus[0].server]
    assert [g.index for g in first] == list(range(8))
    assert [g.rail for g in first] == [rail.node(g.leaf).rail for g in first]
    assert len({g.leaf for g in first}) == 8     # every NIC on its own rail leaf


def test_ring_allreduce_is_rail_local(rail: Plan) -> None:
    pairs = patterns.ring_pairs(lab_gpus(rail))
    assert len(pairs) == 32      # 8 rings of 4 servers
    assert all(a.index == b.index and a.rail == b.rail and a.server != b.server for a, b in pairs)
    same_pod = [(a, b) for a, b in pairs if a.pod == b.pod]
    assert same_pod and all(a.leaf == b.leaf for a, b in same_pod)   # same rail, same pod: one leaf


def test_all_to_all_crosses_rails_but_never_stays_in_a_server(rail: Plan) -> None:
    pairs = patterns.all_to_all_pairs(lab_gpus(rail))
    assert len(pairs) == 32 * 24
    assert any(a.index != b.index for a, b in pairs) and all(a.server != b.server for a, b in pairs)


def test_clos_lab_has_one_gpu_per_server(clos: Plan) -> None:
    gpus = lab_gpus(clos)
    assert len(gpus) == 16 and all(g.index == 0 for g in gpus)
    assert len(patterns.ring_pairs(gpus)) == 16


def test_flows_give_each_gpu_pair_its_queue_pairs(clos: Plan) -> None:
    pairs = patterns.ring_pairs(lab_gpus(clos))[:2]
    flows = patterns.flows(pairs, 4)
    assert len(flows) == 8 and {f.dport for f in flows} == {4791}
    assert [f.qp for f in flows[:4]] == [0, 1, 2, 3] and len({f.sport for f in flows}) == 8


@pytest.mark.parametrize(("spec", "wanted"), [("0-3", {0, 1, 2, 3}), ("0,2,4", {0, 2, 4}), ("1-2,6", {1, 2, 6})])
def test_gpu_spec(spec: str, wanted: set[int]) -> None:
    assert parse_spec(spec) == wanted


@pytest.mark.parametrize("spec", ["a", "3-1", "0-", "٣"])
def test_bad_gpu_specs_are_refused(spec: str) -> None:
    with pytest.raises(TwinError, match="--gpus"):
        parse_spec(spec)


def test_selecting_gpus_nobody_has_names_what_there_is(clos: Plan) -> None:
    with pytest.raises(TwinError, match="this lab's servers have GPUs 0"):
        select(lab_gpus(clos), "5")


def test_pairs_file(tmp_path: Path, rail: Plan) -> None:
    path = tmp_path / "pairs.yaml"
    path.write_text("pairs:\n  - [pod1-server1/0, pod2-server1/0]\n  - [pod1-server2/1, pod2-server2/1]\n")
    pairs = patterns.file_pairs(path, lab_gpus(rail))
    assert [(a.name, b.name) for a, b in pairs] == [("pod1-server1/0", "pod2-server1/0"),
                                                   ("pod1-server2/1", "pod2-server2/1")]


@pytest.mark.parametrize(("text", "message"), [
    ("pairs: []\n", "expected a list of GPU pairs"),
    ("pairs:\n  - [server1/0]\n", "a pair is two GPU names"),
    ("pairs:\n  - [pod1-server1/0, server99/0]\n", "no GPU server99/0"),
    ("pairs:\n  - [pod1-server1/0, pod1-server1/0]\n", "cannot send to itself"),
])
def test_bad_pairs_files_name_the_line(tmp_path: Path, rail: Plan, text: str, message: str) -> None:
    path = tmp_path / "pairs.yaml"
    path.write_text(text)
    with pytest.raises(PlanError, match=message) as info:
        patterns.file_pairs(path, lab_gpus(rail))
    assert "pairs.yaml" in str(info.value)


@pytest.mark.parametrize(("text", "kind", "target"), [("spine-loss:spine1", "spine-loss", "spine1"),
                                                       ("link-down:leaf1:spine1", "link-down", "leaf1:spine1")])
def test_fault_spec(text: str, kind: str, target: str) -> None:
    step = parse_fault(text)
    assert (step.kind, step.target) == (kind, target)


@pytest.mark.parametrize("text", ["spine1", "melt:spine1", "spine-loss:"])
def test_bad_fault_specs(text: str) -> None:
    with pytest.raises(TwinError, match="KIND:TARGET"):
        parse_fault(text)


def test_seed_modes() -> None:
    assert seed_for("kernel", "leaf1", "leaf") is None
    assert seed_for("same", "leaf1", "leaf") == seed_for("same", "spine1", "spine") == SAME_SEED
    assert seed_for("per-tier", "leaf1", "leaf") == seed_for("per-tier", "leaf2", "leaf") != \
        seed_for("per-tier", "spine1", "spine")
    assert seed_for("per-switch", "leaf1", "leaf") != seed_for("per-switch", "leaf2", "leaf")


# -- metrics on hand-made paths ----------------------------------------------------------------------

@pytest.mark.parametrize(("values", "mmr", "jfi"), [
    ([1, 1, 1, 1], 1.0, 1.0),
    ([4, 0, 0, 0], 4.0, 0.25),
    ([2, 1, 1, 0], 2.0, 0.6667),
    ([0, 0], None, None),
])
def test_mmr_and_jfi(values: list[float], mmr: float | None, jfi: float | None) -> None:
    assert metrics.mmr(values) == mmr
    assert metrics.jfi(values) == jfi


def _gpu(server: str, leaf: str, port: str, speed: int = 100) -> Gpu:
    return Gpu(server=server, index=0, ip=f"10.9.{server[-1]}.1", nic="eth1", leaf=leaf, leaf_port=port,
               rail=0, speed_mbps=speed)


def _path(*hops: tuple[str, str, str, str]) -> FlowPath:
    return FlowPath(hops=[Hop(*h) for h in hops], complete=True)


def test_max_min_rates_share_a_bottleneck_and_give_the_rest_to_others() -> None:
    caps = {("s1", "eth1", "l1", "p0"): 100.0, ("s2", "eth1", "l1", "p1"): 100.0,
            ("l1", "u1", "sp1", "d1"): 100.0, ("l1", "u2", "sp2", "d2"): 100.0}
    both_on_u1 = [_path(("s1", "eth1", "l1", "p0"), ("l1", "u1", "sp1", "d1")),
                  _path(("s2", "eth1", "l1", "p1"), ("l1", "u1", "sp1", "d1"))]
    assert metrics.max_min_rates(both_on_u1, caps) == pytest.approx([50.0, 50.0])
    spread = [both_on_u1[0], _path(("s2", "eth1", "l1", "p1"), ("l1", "u2", "sp2", "d2"))]
    assert metrics.max_min_rates(spread, caps) == pytest.approx([100.0, 100.0])
    cut = [both_on_u1[0], FlowPath(hops=[Hop("s2", "eth1", "l1", "p1")], complete=False)]
    assert metrics.max_min_rates(cut, caps) == pytest.approx([100.0, 0.0])


def test_blast_radius_counts_losing_pairs_rails_and_healthy_flows_that_moved() -> None:
    gpus = {"s1/0": _gpu("s1", "l1", "p0"), "s2/0": _gpu("s2", "l2", "p0")}
    flows = [Flow(src="s1/0", dst="s2/0", qp=q, src_ip="a", dst_ip="b", sport=49152 + q) for q in range(3)]
    via = {k: ("l1", f"u{k}", f"sp{k}", "d") for k in (1, 2, 3)}
    before = [_path(via[1]), _path(via[2]), _path(via[3])]
    during = [_path(via[2]), _path(via[3]), _path(via[3])]   # sp1 lost: flow 0 moves (fine), flow 1 moves too
    m_before = Metrics(flows=3, resolved=3, links=[], uplinks=3, mmr=1.0, jfi=1.0, idle_uplinks=0, busbw_share=1.0,
                       pair_share={"s1/0->s2/0": 1.0})
    m_during = m_before.model_copy(update={"pair_share": {"s1/0->s2/0": 0.75}, "busbw_share": 0.75})
    radius = metrics.blast_radius(m_before, m_during, flows, gpus, before, during, {"sp1"}, set())
    assert radius.pairs == {"s1/0->s2/0": 0.25} and radius.rails == {"0": 0.25}
    assert (radius.moved_healthy, radius.moved_healthy_share) == (1, 0.5)


@pytest.mark.parametrize(("normal", "failure", "extra", "overhead"), [
    (10.0, 10.0, 0.0, 0.0),
    (10.0, 510.0, 500.0, 0.5),     # the collective ends 500 ms late in a 1 s iteration
    (10.0, None, None, None),      # cut off: the collective cannot finish
    (2000.0, 2500.0, 500.0, 0.25),  # an iteration is at least its collective
])
def test_jct_is_the_failure_iterations_collective_against_a_normal_one(
        normal: float, failure: float | None, extra: float | None, overhead: float | None) -> None:
    assert metrics.jct(normal, failure, 1000) == (extra, overhead)


def test_measure_on_a_plan_counts_uplinks_and_busbw(clos: Plan) -> None:
    gpus = {g.name: g for g in lab_gpus(clos)}
    a, b = gpus["server1/0"], gpus["server3/0"]
    leaf_a, leaf_b = clos.node(a.leaf), clos.node(b.leaf)
    up = next(i for i in leaf_a.interfaces if clos.node(i.peer_node).role == "spine")
    spine = clos.node(up.peer_node)
    down = next(i for i in spine.interfaces if i.peer_node == leaf_b.name)
    flows = [Flow(src=a.name, dst=b.name, qp=q, src_ip=a.ip, dst_ip=b.ip, sport=49152 + q) for q in range(2)]
    path = _path((a.server, a.nic, a.leaf, a.leaf_port),
                 (leaf_a.name, up.kernel, spine.name, spine.iface(up.peer_iface).kernel),
                 (spine.name, down.kernel, leaf_b.name, leaf_b.iface(down.peer_iface).kernel),
                 (leaf_b.name, b.leaf_port, b.server, b.nic))
    m = metrics.measure(clos, flows, [path, path], gpus)
    assert m.uplinks == 4 and m.idle_uplinks == 3 and m.mmr == 4.0 and m.jfi == 0.25
    assert m.busbw_share == 1.0   # two QPs of one NIC on one uplink of the same speed: still line rate
    assert [(lk.a, lk.b, lk.flows, lk.load, lk.capacity_gbps) for lk in m.links] == [   # the fabric's first
        (leaf_a.name, spine.name, 2, 1.0, 400), (spine.name, leaf_b.name, 2, 1.0, 400),
        (leaf_b.name, b.server, 2, 1.0, 400), (a.server, leaf_a.name, 2, 1.0, 400)]
    # the default collective: each GPU pair sends 128 MiB once, split over its 2 QPs at 200 Gb/s each
    assert (m.collective, m.message_bytes, m.algo_factor) == ("SendRecv", 128 * 2**20, 1.0)
    assert m.completion_ms == pytest.approx(128 * 2**20 * 8 / 400e9 * 1e3, abs=1e-6)
    assert m.algbw_gbps == m.busbw_gbps == 400.0 and m.line_rate_gbps == 400
    assert [(r.qp, r.bytes, r.path) for r in m.flow_table] == [
        (q, 64 * 2**20, [(a.server, a.leaf), (leaf_a.name, spine.name), (spine.name, leaf_b.name),
                         (leaf_b.name, b.server)]) for q in range(2)]


def test_judge_and_reports(tmp_path: Path) -> None:
    before = Metrics(flows=4, resolved=4, links=[], uplinks=2, mmr=2.0, jfi=0.5, idle_uplinks=1, busbw_share=1.0,
                     uplink_loads=[LinkLoad(a="leaf1", b="spine1", a_port="E0", b_port="E0", flows=4, load=1.0),
                                   LinkLoad(a="leaf1", b="spine2", a_port="E4", b_port="E0", flows=0, load=0.0)])
    during = before.model_copy(update={"busbw_share": 0.5})
    report = TrafficReport(lab="x", pattern="ring-allreduce", qps=2, gpus=2, flows=4, links=[], mmr=2.0, jfi=0.5,
                           idle_uplinks=1, busbw_share=1.0, uplinks=2, fault="spine-loss:spine2", before=before,
                           during=during, after=before)
    result = judge(report, TrafficSlo(mmr_max=1.5, jfi_min=0.4, busbw_drop_max=0.25))
    assert [i.status for i in result.items] == ["failure", "success", "failure"]
    assert result.status == "failure" and result.measurements["busbw_share_during"] == 0.5
    assert judge(report, TrafficSlo()).status == "success"
    assert "| during | 4/4 | 2.00 | 0.500 | 1/2 | 50% |" in traffic_markdown(report)
    png = tmp_path / "heat.png"
    heatmap_png(report, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("entry", "message"), [
    ("{pattern: all-to-all, fault: spine1}", "'spine1' is not KIND:TARGET"),
    ("{pattern: pairs}", "the pairs pattern takes 'pairs: FILE'"),
    ("{pattern: pairs, pairs: nowhere.yaml}", "pairs file .*nowhere.yaml does not exist"),
    ("{pattern: ring-allreduce, qps: 0}", "qps"),
    ("{pattern: ring-allreduce, slo: {mmr_max: 0.5}}", "mmr_max"),
])
def test_a_labs_traffic_entries_are_checked_with_their_line(tmp_path: Path, entry: str, message: str) -> None:
    lab = tmp_path / "lab.yaml"
    lab.write_text(f"name: t\ntopology: {LABS.parent / 'topologies' / 'clos-4x8.yaml'}\ntraffic:\n  - {entry}\n")
    with pytest.raises(PlanError, match=message) as info:
        load_lab(lab)
    assert "lab.yaml:4" in str(info.value)


def test_a_labs_pairs_file_is_found_next_to_it(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("pairs:\n  - [server1/0, server3/0]\n")
    lab = tmp_path / "lab.yaml"
    lab.write_text(f"name: t\ntopology: {LABS.parent / 'topologies' / 'clos-4x8.yaml'}\n"
                   "traffic:\n  - {pattern: pairs, pairs: p.yaml, fault: 'spine-loss:spine1'}\n")
    (entry,) = load_lab(lab).traffic
    assert entry.pairs == str((tmp_path / "p.yaml").resolve()) and entry.fault == "spine-loss:spine1"
