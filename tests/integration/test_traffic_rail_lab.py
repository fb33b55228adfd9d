"""`twin traffic` on the rail lab (2 pods x 8 rail leaves, 4 spines, 8-NIC servers): collective flows
resolved through the switches' real forwarding, confirmed with real packets, and under a spine loss."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from labtools import REPO, running_lab, twin, twin_json

pytestmark = pytest.mark.needs_root


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with running_lab(REPO / "labs" / "rail.yaml", "tt", check_clean=True) as name:
        yield name


def traffic(lab: str, *args: str) -> dict[str, Any]:
    doc: dict[str, Any] = twin_json("traffic", *args, "--name", lab, "--seed-mode", "per-switch", timeout=300)
    return doc


def spines_on(path: list[str]) -> list[str]:
    return [n for n in path if "spine" in n]


def test_ring_allreduce_stays_on_its_rail(lab: str) -> None:
    doc = traffic(lab, "ring-allreduce", "--qps", "2")
    assert doc["pattern"] == "ring-allreduce" and doc["qps"] == 2 and doc["flows"] == 32 * 2
    assert doc["before"]["resolved"] == doc["flows"]
    for key, path in doc["paths"].items():
        src, dst = key.split("#")[0].split("->")
        assert src.split("/")[1] == dst.split("/")[1]           # GPU i talks to GPU i: one rail
        same_pod = src.split("-")[0] == dst.split("-")[0]
        assert spines_on(path) == [] if same_pod else len(spines_on(path)) == 1, (key, path)
        leaves = [n for n in path if "rail" in n]
        assert all(leaf.endswith(f"rail{int(src.split('/')[1]) + 1}") for leaf in leaves), (key, path)
    assert {"a", "b", "flows", "load"} <= set(doc["links"][0])
    assert doc["busbw_share"] == 1.0


def test_all_to_all_uses_the_spines_and_the_packets_go_where_the_paths_say(lab: str) -> None:
    doc = traffic(lab, "all-to-all", "--qps", "1", "--confirm")
    assert doc["flows"] == 32 * 24 and doc["before"]["resolved"] == doc["flows"]
    crossing = [p for p in doc["paths"].values() if spines_on(p)]
    assert len(crossing) > doc["flows"] / 2
    assert {s for p in crossing for s in spines_on(p)} == {"spine1", "spine2", "spine3", "spine4"}
    assert doc["uplinks"] == 64 and doc["mmr"] >= 1.0 and 0 < doc["jfi"] <= 1.0
    confirmation = doc["confirmation"]
    assert confirmation["matched"] == confirmation["links"] > 0, confirmation["mismatches"]


def test_a_qps_sweep_spreads_the_flows(lab: str) -> None:
    doc = twin_json("traffic", "all-to-all", "--qps", "1,8", "--name", lab, "--seed-mode", "per-switch", timeout=300)
    one, eight = doc["sweep"]
    assert (one["qps"], eight["qps"]) == (1, 8) and eight["flows"] == 8 * one["flows"]
    assert eight["jfi"] > one["jfi"]     # more entropy, fairer spread


def test_spine_loss_moves_every_flow_off_the_lost_spine(lab: str, tmp_path: Path) -> None:
    doc = traffic(lab, "all-to-all", "--qps", "2", "--fault", "spine-loss:spine1", "--report", str(tmp_path))
    before, during, after = doc["before"], doc["during"], doc["after"]
    assert during["resolved"] == doc["flows"] and during["uplinks"] == 48
    assert not any(lk["a"] == "spine1" or lk["b"] == "spine1" for lk in during["links"])
    mean = {m: sum(lk["load"] for lk in doc[m]["uplink_loads"]) / doc[m]["uplinks"] for m in ("before", "during")}
    assert mean["during"] == pytest.approx(mean["before"] * 64 / 48, rel=1e-3)   # the same load on fewer uplinks
    assert after["uplinks"] == 64 and after["links"] == before["links"]          # restored: the same paths
    radius = doc["blast_radius"]
    assert radius["moved_healthy"] > 0 and 0 < radius["moved_healthy_share"] < 1   # hash-threshold moves others too
    assert doc["outage_ms"] > 0 and doc["jct_overhead"] is not None
    assert sorted(p.suffix for p in tmp_path.iterdir() if p.name != ".twin-written") == [".json", ".md", ".png"]


def _collision(lab: str, tmp_path: Path) -> Path:
    """A pairs file of two GPU pairs whose one flow each the leaf hashes onto the same uplink."""
    doc = traffic(lab, "all-to-all", "--qps", "1")
    first_uplink: dict[str, tuple[str, str]] = {}
    for key, path in doc["paths"].items():
        if spines_on(path):
            src, dst = key.split("#")[0].split("->")
            first_uplink[f"{src}->{dst}"] = (path[1], path[2])    # (leaf, spine)
    for a, b in combinations(sorted(first_uplink), 2):
        src_a, src_b = a.split("->")[0], b.split("->")[0]
        if src_a.split("/")[0] != src_b.split("/")[0] and first_uplink[a] == first_uplink[b]:
            candidate = tmp_path / "pairs.yaml"
            candidate.write_text("pairs:\n" + "".join(f"  - [{p.split('->')[0]}, {p.split('->')[1]}]\n"
                                                      for p in (a, b)))
            shared = traffic(lab, "pairs", str(candidate), "--qps", "1")
            if any(lk["flows"] == 2 and lk["uplink"] for lk in shared["links"]):
                return candidate
    raise AssertionError("no two GPU pairs of different servers share an uplink in this lab")


def test_a_pairs_file_shows_two_flows_hashed_onto_one_uplink(lab: str, tmp_path: Path) -> None:
    pairs = _collision(lab, tmp_path)
    doc = traffic(lab, "pairs", str(pairs), "--qps", "1")
    busiest = max(doc["links"], key=lambda lk: lk["flows"])
    assert busiest["flows"] == 2 and busiest["uplink"] and busiest["load"] == 2.0   # twice its line rate offered
    assert doc["busbw_share"] == 0.5     # two NICs at line rate share one uplink of the same speed
    assert doc["mmr"] == 4.0 and doc["idle_uplinks"] == doc["uplinks"] - 1


def test_bad_input_exits_2(lab: str, tmp_path: Path) -> None:
    for args in (["melt"], ["ring-allreduce", "--qps", "0"], ["ring-allreduce", "--fault", "spine1"],
                 ["pairs"], ["ring-allreduce", "--gpus", "9"], ["ring-allreduce", "--seed-mode", "odd"],
                 ["pairs", str(tmp_path / "p.yaml"), "--gpus", "0"], ["all-to-all", "--qps", "1,2", "--confirm"]):
        proc = twin("traffic", *args, "--name", lab, check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_a_drill_carries_the_patterns_figures_before_during_and_after(lab: str) -> None:
    doc = twin_json("drill", "spine-loss", "--target", "spine2", "--name", lab, "--traffic", "ring-allreduce",
                    "--traffic-qps", "2", "--seed-mode", "per-switch", timeout=300)
    assert doc["passed"] and doc["restored"], doc["violations"]
    traffic = doc["traffic"]
    assert traffic["fault"] == "spine-loss:spine2" and traffic["qps"] == 2
    assert (traffic["before"]["uplinks"], traffic["during"]["uplinks"], traffic["after"]["uplinks"]) == (64, 48, 64)
    assert not any("spine2" in (lk["a"], lk["b"]) for lk in traffic["during"]["links"])
    assert traffic["outage_ms"] == doc["loss_ms"]    # the probe's measured outage sets the JCT overhead
    assert traffic["jct_overhead"] is not None and traffic["jct_overhead"] >= 0
