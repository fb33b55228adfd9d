"""`twin size`: the design literature's worked examples and the infeasible cases, exact numbers (DESIGN §12c)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from twin.cli.app import app
from twin.design.alternatives import plane_counts
from twin.design.fabric_size import size
from twin.design.quantities import parse_ratio, parse_speed, ratio_text, speed_text
from twin.design.sizing import SizeRequest, design_plane, leaf_split
from twin.design.topology_out import pick_sku, scale_down, topology_name, topology_yaml
from twin.model.errors import PlanError
from twin.stages.lab_file import load_lab

REPO = Path(__file__).resolve().parents[2]


def request(gpus: int, per_server: int, nics: int, leaf: int, spine: int, nic: int = 400, port: int = 400,
            **extra: Any) -> SizeRequest:
    return SizeRequest(gpus=gpus, gpus_per_server=per_server, nics_per_server=nics, nic_speed=nic, leaf_ports=leaf,
                       spine_ports=spine, port_speed=port, **extra)


EXAMPLE_A = request(128, 4, 4, 64, 32)          # DESIGN §12c: 32 servers x 4 x 400G, 64-port leaves, 32-port spines
EXAMPLE_B = request(8192, 8, 8, 128, 128)       # DESIGN §1/§12c: 8,192 GPUs, 8 rails, 128 x 400G switches
BLUEPRINT_256K = request(262144, 8, 8, 128, 128)

# (id, request, leaves, spines, links per pair, servers per leaf, oversubscription, bisection Tb/s)
FEASIBLE = [
    ("32x4x400G on 64/32-port, rails", EXAMPLE_A, 4, 4, 8, 32, "1:1", 25.6),
    ("32x4x400G on 64/32-port, clos", request(128, 4, 4, 64, 32, mode="clos"), 4, 4, 8, 8, "1:1", 25.6),
    ("32x4x400G on 64/64-port", request(128, 4, 4, 64, 64), 4, 2, 16, 32, "1:1", 25.6),
    ("8,192 GPUs, 8 rails, 128x400G", EXAMPLE_B, 128, 64, 1, 64, "1:1", 1638.4),
    ("8,192 GPUs as a clos", request(8192, 8, 8, 128, 128, mode="clos"), 128, 64, 1, 8, "1:1", 1638.4),
    # 3:1 on 64 ports: 48 down, 16 up; 6 eight-NIC servers per leaf, 43 leaves; 16 spines of 64 ports
    ("2,048 GPUs at 3:1", request(2048, 8, 8, 64, 64, oversubscription=3.0, mode="clos"), 43, 16, 1, 6, "3:1",
     137.6),
    # 800G ports broken out into 2 x 400G NIC links: 64 NICs per leaf, 2 rail groups, 32 uplinks over 8 spines
    ("400G NICs on 800G ports", request(1024, 8, 8, 64, 64, port=800), 16, 8, 4, 64, "1:1", 204.8),
    # 32 planes: every 400G NIC split into 4 x 100G, each plane 128 leaves + 64 spines
    ("262,144 GPUs on 32 planes", request(262144, 8, 8, 128, 128, planes=32), 4096, 2048, 1, 256, "1:1", 52428.8),
    ("one leaf is enough", request(16, 8, 1, 64, 64, mode="clos"), 1, 0, 0, 2, "1:1", 0.4),
]


@pytest.mark.parametrize(("req", "leaves", "spines", "per_pair", "per_leaf", "ratio", "bisection"),
                         [case[1:] for case in FEASIBLE], ids=[case[0] for case in FEASIBLE])
def test_worked_examples(req: SizeRequest, leaves: int, spines: int, per_pair: int, per_leaf: int, ratio: str,
                         bisection: float) -> None:
    r = size(req)
    assert r.feasible, r.reason
    assert (r.leaves, r.spines, r.links_per_pair, r.servers_per_leaf, r.oversubscription) == (
        leaves, spines, per_pair, per_leaf, ratio)
    assert r.bisection_tbps == pytest.approx(bisection)
    assert r.reason == ""
    # beside the fewest spines, the most (one link per pair) when the answer has more than one link per pair
    assert [a.kind for a in r.alternatives] == (["more-spines"] if per_pair > 1 else [])


def test_more_spines_beside_the_fewest() -> None:
    """DESIGN §12c's 4 leaves x 32 uplinks on 32-port spines: 4 spines x 8 links, or up to 32 spines x 1."""
    r = size(EXAMPLE_A)
    assert (r.spines, r.links_per_pair, r.ecmp_width) == (4, 8, 32)
    (alt,) = r.alternatives
    assert alt.kind == "more-spines" and alt.switches == 4 + 32
    assert alt.details == {"spines": 32, "spines_per_plane": 32, "links_per_pair": 1, "spine_ports_used": 4,
                           "spine_loss_share": 0.03125, "fewest_spines": 4, "fewest_spines_loss_share": 0.25,
                           "spine_counts": "4, 8, 16, 32"}
    for spines in (4, 8, 16, 32):        # each count that fits: it divides the uplinks, its spines hold every leaf
        assert 32 % spines == 0 and r.leaves * (32 // spines) <= EXAMPLE_A.spine_ports
    assert "a spine lost takes 1 of a leaf's 32 uplinks (3.12 %) instead of 8 (25 %)" in alt.summary
    assert "also buildable: 8, 16 spines" in alt.summary


def test_more_spines_counts_every_plane() -> None:
    """2 planes of 2 rails: per plane 4 leaves of 32 uplinks, 4 spines x 8 links or up to 32 spines x 1."""
    r = size(request(256, 4, 4, 64, 32, planes=2))
    assert (r.leaves, r.spines, r.links_per_pair) == (8, 8, 8)
    (alt,) = r.alternatives
    assert (alt.details["spines"], alt.details["spines_per_plane"], alt.details["spine_counts"]) == (
        64, 32, "8, 16, 32, 64")
    assert alt.switches == (4 + 32) * 2
    assert "64 spines in all" in alt.summary and "72 switches instead of 16" in alt.summary


def test_worked_example_has_the_most_spines_already() -> None:
    r = size(EXAMPLE_B)
    assert (r.leaves, r.spines, r.links_per_pair, r.oversubscription) == (128, 64, 1, "1:1")
    assert r.alternatives == []


# (id, request, leaves needed, largest two-tier GPUs, words the reason must hold)
INFEASIBLE = [
    ("the 256K blueprint", BLUEPRINT_256K, 4096, 8192, "a 128-port spine reaches at most 128 leaves"),
    ("one server past 8,192 GPUs", request(8200, 8, 8, 128, 128), 136, 8192, "1,025 servers"),
    ("eight NICs on 8-port clos leaves", request(64, 8, 8, 8, 8, mode="clos"), 0, 0,
     "a server's 8 NIC ports do not fit on one leaf's 4 NIC-facing ports"),
]


@pytest.mark.parametrize(("req", "leaves", "largest", "words"), [case[1:] for case in INFEASIBLE],
                         ids=[case[0] for case in INFEASIBLE])
def test_cannot_be_built(req: SizeRequest, leaves: int, largest: int, words: str) -> None:
    r = size(req)
    assert not r.feasible
    assert r.leaves == leaves
    assert r.spines is None and r.links_per_pair is None and r.bisection_tbps is None
    assert r.max_two_tier.gpus == largest
    assert words in r.reason


def test_blueprint_256k_arithmetic_and_alternatives() -> None:
    r = size(BLUEPRINT_256K)
    assert r.servers == 32768 and r.pods == 512
    assert (r.max_two_tier.servers, r.max_two_tier.leaves, r.max_two_tier.spines) == (1024, 128, 64)
    assert "two tiers of these switches: at most 8,192 GPUs, 262,144 asked for" in r.reason
    assert any("4,096 leaves needed (32x): cannot be built in two tiers" in line for line in r.arithmetic)
    alts = {a.kind: a for a in r.alternatives}
    assert alts["planes"].details == {"planes": 32, "leaves": 4096, "spines": 2048, "leaves_per_plane": 128,
                                      "spines_per_plane": 64, "links_per_pair": 1, "link_speed": "100G",
                                      "breakout": 4}
    assert alts["planes"].switches == 6144
    # three tiers: 64 pods of 64 leaves + 64 spines, 64 x 64 x 64 / 128 = 2,048 super-spines; k^3/4 = 524,288 GPUs
    assert alts["three-tier"].details == {"pods": 64, "leaves": 4096, "spines": 4096, "super_spines": 2048,
                                          "leaves_per_pod": 64, "spines_per_pod": 64, "max_gpus": 524288}
    assert alts["three-tier"].switches == 10240
    # two tiers need 8 x ceil(32,768 / (r/2)) <= r leaves: r = 728 ports of 400G (291.2 Tb/s)
    assert alts["radix"].details["radix"] == 728
    assert alts["radix"].details["switch_capacity"] == "291.2T"


def test_blueprint_claim_of_256_spines_and_512_leaves_is_refused() -> None:
    r = size(BLUEPRINT_256K.model_copy(update={"claim_leaves": 512, "claim_spines": 256}))
    assert r.claim is not None and not r.claim.ok
    assert r.claim.problems == [
        "512 leaves x 64 NIC-facing ports = 32,768 NIC links, but 32,768 servers x 8 NIC ports need 262,144 (8x more)",
        "a 128-port spine reaches at most 128 leaves, not 512: in two tiers every spine must reach every leaf",
        "a leaf has 64 uplinks, so it reaches at most 64 of the 256 spines: in two tiers every leaf must reach every "
        "spine",
        "the port counts balance (512 x 64 leaf uplinks = 256 x 128 spine ports = 32,768), yet a leaf reaches only "
        "64 of 256 spines: leaves that share no spine are joined only through another tier, so this is not a "
        "two-tier fabric",
    ]


def test_a_claim_that_holds() -> None:
    r = size(EXAMPLE_B.model_copy(update={"claim_leaves": 128, "claim_spines": 64}))
    assert r.claim is not None and r.claim.ok and r.claim.problems == []


def test_cables_and_optics() -> None:
    a = size(EXAMPLE_A)
    server, fabric = a.cables
    assert (server.between, server.links, server.speed, server.cables, server.transceivers) == (
        "server-leaf", 128, "400G", 128, 256)
    assert server.medium == "optical"           # rail leaves serve servers of many racks
    assert (fabric.between, fabric.links, fabric.transceivers) == ("leaf-spine", 128, 256)   # 2 per fabric link
    assert a.optics == 512
    clos = size(request(128, 4, 4, 64, 32, mode="clos"))
    assert clos.cables[0].medium == "copper DAC" and clos.cables[0].transceivers == 0
    assert clos.optics == 256
    breakout = size(request(1024, 8, 8, 64, 64, port=800)).cables[0]
    assert (breakout.links, breakout.cables, breakout.transceivers) == (1024, 512, 1536)
    assert "1x800G to 2x400G breakout" in breakout.medium


def test_largest_two_tier_fabric_is_half_the_leaf_ports_times_the_spine_ports() -> None:
    r = size(request(1, 1, 1, 64, 32))  # one NIC per server: P/2 x Q NIC ports
    assert r.max_two_tier.servers == 32 * 32
    assert size(EXAMPLE_A).max_two_tier.gpus == 1024    # 32 leaves = 8 rail groups x 32 servers x 4 GPUs


@pytest.mark.parametrize(("ports", "ratio", "split"), [(64, 1.0, (32, 32)), (64, 3.0, (48, 16)),
                                                        (128, 1.0, (64, 64)), (64, 1.5, (38, 26))])
def test_leaf_split(ports: int, ratio: float, split: tuple[int, int]) -> None:
    assert leaf_split(ports, ratio) == split


@pytest.mark.parametrize(("text", "gbps"), [("400G", 400), ("400Gb/s", 400), ("800g", 800), ("1.6T", 1600),
                                            ("100", 100), ("25G", 25)])
def test_parse_speed(text: str, gbps: int) -> None:
    assert parse_speed(text) == gbps


@pytest.mark.parametrize("text", ["fast", "400M", "0G", "12.5G", ""])
def test_parse_speed_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=r"Gb/s|link speed"):
        parse_speed(text)


@pytest.mark.parametrize(("text", "ratio"), [("1:1", 1.0), ("3:1", 3.0), ("1.5:1", 1.5), ("2", 2.0), ("6:2", 3.0)])
def test_parse_ratio(text: str, ratio: float) -> None:
    assert parse_ratio(text) == ratio


@pytest.mark.parametrize("text", ["1:2", "x", "1:0"])
def test_parse_ratio_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_ratio(text)


def test_speed_and_ratio_text() -> None:
    assert (speed_text(400), speed_text(1600), speed_text(51200)) == ("400G", "1.6T", "51.2T")
    assert (ratio_text(1.0), ratio_text(3.0), ratio_text(4 / 3)) == ("1:1", "3:1", "1.33:1")


@pytest.mark.parametrize(("planes", "field", "words"), [
    (3, "--planes", "neither divide the 8 rails"),
    (8 * 3, "--planes", "split each 400G NIC into 3 ports"),
])
def test_bad_plane_counts(planes: int, field: str, words: str) -> None:
    with pytest.raises(PlanError) as err:
        size(EXAMPLE_B.model_copy(update={"planes": planes}))
    assert err.value.problems[0].field == field
    assert words in str(err.value)


def test_port_slower_than_nic_is_refused() -> None:
    with pytest.raises(PlanError, match=r"--port-speed.*multiple of the link speed"):
        size(request(64, 8, 8, 64, 64, nic=400, port=200))


def test_plane_counts_are_divisors_and_multiples_of_the_rails() -> None:
    assert plane_counts(EXAMPLE_B)[:6] == [2, 4, 8, 16, 32, 40]


# -- -o: the topology it writes plans, and --scale-down keeps the shape --------------------------------------------


def write_topology(tmp_path: Path, req: SizeRequest, factor: int, name: str = "sized") -> Path:
    shape, plane = design_plane(req)
    path = tmp_path / f"{name}.yaml"
    path.write_text(topology_yaml(name, req, shape, plane, scale_down(req, shape, plane, factor), "twin size (test)"))
    return path


@pytest.mark.parametrize(("req", "factor", "kind", "switches", "servers", "max_paths"), [
    (EXAMPLE_A, 1, "rail", 8, 32, 32),
    (EXAMPLE_A, 4, "rail", 8, 8, 32),
    (request(128, 4, 4, 64, 32, mode="clos"), 2, "clos", 6, 16, 32),
    (EXAMPLE_B, 16, "rail", 72, 64, 64),
    (request(2048, 8, 8, 64, 64, oversubscription=3.0, mode="clos"), 8, "clos", 22, 36, 16),
], ids=["a", "a/4", "a clos/2", "b/16", "3:1 clos/8"])
def test_written_topology_plans(tmp_path: Path, req: SizeRequest, factor: int, kind: str, switches: int,
                                servers: int, max_paths: int) -> None:
    plan = load_lab(write_topology(tmp_path, req, factor)).plan
    assert plan.kind == kind
    assert (len(plan.switches), len(plan.hosts), plan.max_paths) == (switches, servers, max_paths)


def test_scale_down_keeps_spines_rails_and_links_per_pair() -> None:
    shape, plane = design_plane(EXAMPLE_B)
    full, small = scale_down(EXAMPLE_B, shape, plane, 1), scale_down(EXAMPLE_B, shape, plane, 16)
    assert (full.pods, full.leaves, full.servers) == (16, 128, 1024)
    assert (small.pods, small.leaves, small.servers) == (1, 8, 64)
    assert (small.spines, small.links_per_pair, small.rails) == (full.spines, full.links_per_pair, full.rails)
    clos_req = request(8192, 8, 8, 128, 128, mode="clos")
    shape, plane = design_plane(clos_req)
    scaled = scale_down(clos_req, shape, plane, 32)
    assert (scaled.leaves, scaled.servers_per_group, scaled.spines) == (4, 8, 64)
    assert scale_down(clos_req, shape, plane, 1000).leaves == 2   # traffic must still cross the spines


def test_written_topology_matches_the_design(tmp_path: Path) -> None:
    doc = yaml.safe_load(write_topology(tmp_path, EXAMPLE_A, 1).read_text())
    assert doc["rail"] == {"pods": 1, "rails": 4, "spines": 4, "servers_per_pod": 32, "links_per_spine": 8}
    assert doc["fabric"] == {"hwsku": "Arista-7060X6-64PE-B-O128", "radix": 64}


def test_no_topology_for_what_cannot_be_built() -> None:
    shape, plane = design_plane(BLUEPRINT_256K)
    with pytest.raises(PlanError, match="cannot be built in two tiers"):
        topology_yaml("x", BLUEPRINT_256K, shape, plane, scale_down(BLUEPRINT_256K, shape, plane, 1), "t")


def test_no_topology_with_breakout_ports() -> None:
    req = request(1024, 8, 8, 64, 64, port=800)
    shape, plane = design_plane(req)
    with pytest.raises(PlanError, match="no breakout ports"):
        topology_yaml("x", req, shape, plane, scale_down(req, shape, plane, 1), "t")


def test_sku_by_speed() -> None:
    assert pick_sku(400, 128) == "Arista-7060X6-64PE-B-O128"
    assert pick_sku(800, 64) == "Arista-7060X6-64PE-B-P64"
    with pytest.raises(PlanError, match="no switch model"):
        pick_sku(100, 64)
    with pytest.raises(PlanError, match="256 ports of 400G"):
        pick_sku(400, 256)


@pytest.mark.parametrize(("stem", "name"), [("x", "x"), ("my fabric!", "my-fabric"), ("8k", "f8k"), ("", "sized")])
def test_topology_name(stem: str, name: str) -> None:
    assert topology_name(stem) == name


# -- the command ----------------------------------------------------------------------------------------------------

A_ARGS = ["size", "--gpus", "128", "--gpus-per-server", "4", "--nics-per-server", "4", "--nic-speed", "400G",
          "--leaf-ports", "64", "--spine-ports", "32", "--port-speed", "400G"]


def run(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


def test_cli_json_has_design_fields() -> None:
    result = run([*A_ARGS, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    for field in ("feasible", "leaves", "spines", "servers", "links_per_pair", "servers_per_leaf",
                  "oversubscription", "bisection_tbps", "reason"):
        assert field in doc
    assert (doc["leaves"], doc["spines"], doc["links_per_pair"], doc["servers"]) == (4, 4, 8, 32)
    (alt,) = doc["alternatives"]
    assert (alt["kind"], alt["details"]["spines"], alt["details"]["links_per_pair"]) == ("more-spines", 32, 1)


def test_cli_text_shows_more_spines_beside_the_fewest() -> None:
    result = run(A_ARGS)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "spines 4 (the fewest)" in text
    assert "or more spines 32 spines x 1 link per pair: a spine lost takes 3.12 % of a leaf's uplinks, not 25 %" in text
    assert "alternative: more spines, smaller failure domain: 32 spines" in text


def test_cli_worked_example_says_it_has_the_most_spines() -> None:
    result = run(["size", "--gpus", "8192", "--gpus-per-server", "8", "--leaf-ports", "128", "--json"])
    doc = json.loads(result.stdout)
    assert (doc["feasible"], doc["leaves"], doc["spines"], doc["oversubscription"], doc["alternatives"]) == (
        True, 128, 64, "1:1", [])
    text = " ".join(run(["size", "--gpus", "8192", "--gpus-per-server", "8", "--leaf-ports", "128"]).stdout.split())
    assert "failure domain the most spines already: 1 link per leaf-spine pair" in text


def test_cli_infeasible_exits_1_with_the_arithmetic() -> None:
    result = run(["size", "--gpus", "262144", "--gpus-per-server", "8", "--leaf-ports", "128", "--leaves", "512",
                  "--spines", "256"])
    assert result.exit_code == 1
    assert "cannot be built in two tiers" in result.stdout
    assert "nearest buildable alternatives" in result.stdout
    assert "claim does not hold" in result.stdout


def test_cli_writes_a_topology_twin_plans(tmp_path: Path) -> None:
    out = tmp_path / "lab.yaml"
    result = run([*A_ARGS, "-o", str(out), "--scale-down", "4", "--json"])
    assert result.exit_code == 0, result.output
    written = json.loads(result.stdout)["written"]
    assert written == {"topology": str(out), "scale_down": 4, "leaves": 4, "spines": 4, "servers": 8, "pods": 1,
                       "links_per_pair": 8, "switches": 8, "links": 160, "bgp_sessions": 128, "max_paths": 32}
    assert load_lab(out).plan.name == "lab"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lab.yaml"]   # no temporary file left


def test_cli_does_not_write_what_cannot_be_built(tmp_path: Path) -> None:
    out = tmp_path / "x.yaml"
    result = run(["size", "--gpus", "262144", "--gpus-per-server", "8", "--leaf-ports", "128", "-o", str(out)])
    assert result.exit_code == 1
    assert not out.exists()


@pytest.mark.parametrize(("extra", "words"), [
    (["--scale-down", "2"], "--scale-down: scales the topology that -o writes"),
    (["--nic-speed", "fast"], "--nic-speed: 'fast' is not a link speed"),
    (["--oversubscription", "1:3"], "--oversubscription"),
    (["--gpus", "0"], "--gpus: Input should be greater than or equal to 1"),
])
def test_cli_bad_input_names_the_option(extra: list[str], words: str) -> None:
    result = CliRunner().invoke(app, [*A_ARGS, *extra], standalone_mode=False)
    assert isinstance(result.exception, PlanError)    # main() prints it and exits 2
    assert words in str(result.exception)
