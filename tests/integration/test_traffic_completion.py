"""The flow-level model of `twin traffic` and `twin drill --traffic` on a small running lab: one pod of two
rail leaves under two spines, three two-NIC servers. Rings stay on their rail leaf; an all-to-all crosses
rails through the spines, and with one spine lost each leaf's cross-rail traffic (1.5 x line rate) has
one uplink of line rate left: the collective must slow down, and an outage must be charged only to the
flows whose path crossed the spine. Every figure is checked against what the JSON's own flows and links
allow."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import running_lab, twin, twin_json

pytestmark = pytest.mark.needs_root

SIZE = 64 * 2**20


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("flowlab")
    (folder / "fabric.yaml").write_text("name: fab\nkind: rail\nrail: {pods: 1, rails: 2, spines: 2, "
                                        "servers_per_pod: 3}\n")
    (folder / "lab.yaml").write_text(f"name: fab\ntopology: {folder / 'fabric.yaml'}\nruntime: netns\n")
    with running_lab(folder / "lab.yaml", "fl", check_clean=True) as name:
        yield name


def link_bound_ms(figures: dict[str, Any], links: list[dict[str, Any]]) -> float:
    """The least time the figures' flow table can take: the busiest link's bits at its line rate."""
    capacity = {(lk["a"], lk["b"], lk["a_port"], lk["b_port"]): lk["capacity_gbps"] for lk in links}
    bits: dict[tuple[str, str, str, str], float] = defaultdict(float)
    for row in figures["flow_table"]:
        for (a, b), (pa, pb) in zip(row["path"], row["ports"], strict=True):
            bits[(a, b, pa, pb)] += row["bytes"] * 8
    return max(b / (capacity[key] * 1e6) for key, b in bits.items())


def check_figures(figures: dict[str, Any], links: list[dict[str, Any]] | None) -> None:
    """completion is the last send's end, at least what the busiest link allows (sends that keep their path:
    `links` given); algbw and busbw follow."""
    ends = [row["end_ms"] for row in figures["flow_table"]]
    assert figures["completion_ms"] == pytest.approx(max(ends), abs=1e-5)
    if links is not None:
        assert figures["completion_ms"] >= link_bound_ms(figures, links) * (1 - 1e-6)
    algbw = figures["message_bytes"] * 8 / (figures["completion_ms"] * 1e6)
    assert figures["algbw_gbps"] == pytest.approx(algbw, abs=1e-2)
    assert figures["busbw_gbps"] == pytest.approx(algbw * figures["algo_factor"], abs=1e-2)


def crosses(row: dict[str, Any], spine: str) -> bool:
    return any(spine in hop for hop in row["path"])


def test_a_spine_loss_drill_slows_all_to_all_and_charges_only_the_spines_flows(lab: str, tmp_path: Path) -> None:
    export = tmp_path / "flows.json"
    doc = twin_json("drill", "spine-loss", "--target", "spine1", "--name", lab, "--traffic", "all-to-all",
                    "--traffic-qps", "4", "--seed-mode", "per-switch", "--traffic-message-size", "64M",
                    "--traffic-export", str(export), timeout=300)
    assert doc["passed"] and doc["restored"], doc["violations"]
    t = doc["traffic"]
    before, during, after, failure = t["before"], t["during"], t["after"], t["failure_iteration"]
    assert (t["collective"], t["n"], t["message_bytes"], t["algo_factor"]) == ("AllToAll", 6, SIZE, 0.833333)
    for figures in (before, during, after):
        check_figures(figures, figures["links"])
    check_figures(failure, None)       # its sends change path halfway
    flows = {(lk["a"], lk["b"]): lk["flows"] for lk in before["links"]}
    assert any(lk["flows"] > flows.get((lk["a"], lk["b"]), 0) for lk in during["links"])   # a link's count rose
    assert during["busbw_gbps"] < before["busbw_gbps"] and during["busbw_share"] < before["busbw_share"]
    assert during["completion_ms"] >= before["completion_ms"] * 4 / 3 * (1 - 1e-6)   # 1.5 B over 1 uplink, not 2
    assert after["completion_ms"] == before["completion_ms"]
    # the outage is the probe's, and only the flows that crossed spine1 stood still for it
    outage = t["outage_ms"]
    assert outage == doc["loss_ms"] == failure["outage_ms"]
    crossed = [crosses(row, "spine1") for row in before["flow_table"]]
    assert any(crossed) and not all(crossed)
    for row, hit in zip(failure["flow_table"], crossed, strict=True):
        assert row["waited_ms"] == pytest.approx(outage if hit else 0.0, abs=1e-5), row
        if hit:
            assert row["end_ms"] >= outage
    assert t["blast_radius"]["crossed_flows"] == len({(r["src"], r["dst"], r["qp"])
                                                      for r, hit in zip(before["flow_table"], crossed, strict=True)
                                                      if hit})
    assert t["jct_extra_ms"] == pytest.approx(failure["completion_ms"] - before["completion_ms"], abs=1e-5)
    assert t["jct_extra_ms"] > 0 and failure["busbw_gbps"] < before["busbw_gbps"]
    # the packet simulator's file: the same sends, their 5-tuples, and where they go once spine1 is gone
    sim = json.loads(export.read_text())
    assert (sim["format"], sim["version"], sim["collective"], sim["fault"]["name"]) == \
        ("twin-flows", 1, "AllToAll", "spine-loss:spine1")
    assert len(sim["flows"]) == len(before["flow_table"]) and all(f["sport"] >= 0xC000 for f in sim["flows"])
    assert not any(crosses({"path": f["path_during"]}, "spine1") for f in sim["flows"])
    assert sim["fault"]["failed_nodes"] == ["spine1"]


def test_a_fault_run_charges_its_convergence_only_to_the_flows_that_crossed(lab: str) -> None:
    t = twin_json("traffic", "all-to-all", "--name", lab, "--qps", "4", "--seed-mode", "per-switch",
                  "--fault", "spine-loss:spine1", "--message-size", "64M", timeout=300)
    failure, before = t["failure_iteration"], t["before"]
    assert t["outage_ms"] > 0
    crossed = [crosses(row, "spine1") for row in before["flow_table"]]
    waited = [row["waited_ms"] for row in failure["flow_table"]]
    assert [w > 0 for w in waited] == crossed and all(w == pytest.approx(failure["outage_ms"]) for w in waited if w)
    assert failure["completion_ms"] >= t["outage_ms"] and failure["busbw_share"] < before["busbw_share"]
    check_figures(failure, None)
    for row, hit in zip(failure["flow_table"], crossed, strict=True):
        if hit:    # it moves nothing during the outage, then at most its NIC's line rate
            assert row["end_ms"] >= t["outage_ms"] + row["bytes"] * 8 / (failure["line_rate_gbps"] * 1e6) - 1e-5


def test_a_ring_that_crosses_no_spine_is_charged_nothing_for_a_spine_loss(lab: str) -> None:
    doc = twin_json("drill", "spine-loss", "--target", "spine1", "--name", lab, "--traffic", "ring-allreduce",
                    "--traffic-qps", "2", "--seed-mode", "per-switch", timeout=300)
    t = doc["traffic"]
    assert not any(crosses(row, "spine") for row in t["before"]["flow_table"])
    assert (t["collective"], t["n"], t["algo_factor"]) == ("AllReduce", 3, 1.333333)
    assert {row["step"] for row in t["flow_table"]} == set(range(4))          # 2(n-1) steps
    failure = t["failure_iteration"]
    assert failure["completion_ms"] == t["before"]["completion_ms"]
    assert (t["jct_extra_ms"], t["jct_overhead"], t["blast_radius"]["crossed_flows"]) == (0.0, 0.0, 0)
    assert t["busbw_share"] == failure["busbw_share"] == 1.0
    assert set(t["by_rail"]) == {"1", "2"} and set(t["by_pod"]) == {"1"}
    assert t["by_rail"]["1"]["gpus"] == 3 and t["by_pod"]["1"]["gpus"] == 6


def test_all_gather_and_reduce_scatter_are_rings_of_n_minus_1_steps(lab: str) -> None:
    for pattern, collective in (("all-gather", "AllGather"), ("reduce-scatter", "ReduceScatter")):
        t = twin_json("traffic", pattern, "--name", lab, "--qps", "1", "--message-size", "3M")
        assert (t["collective"], t["n"], t["message_bytes"]) == (collective, 3, 3 * 2**20)
        assert len(t["flow_table"]) == 2 * 3 * 2 and {r["bytes"] for r in t["flow_table"]} == {2**20}
        assert t["busbw_share"] == 1.0       # each rail's ring on its own leaf: nothing shared
        check_figures(t, t["links"])


def test_bad_message_sizes_exit_2(lab: str) -> None:
    for size in ("12Q", "0", "1", "2048G"):
        proc = twin("traffic", "all-to-all", "--name", lab, "--message-size", size, check=False)
        assert proc.returncode == 2 and "--message-size" in proc.stderr and "Traceback" not in proc.stderr
