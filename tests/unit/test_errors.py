"""The catalog of bad inputs: each gets one clear message naming file, line, field and fix."""
# ruff: noqa: E501  (the catalog keeps each YAML case and its message on one line)

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from twin.cli.app import app
from twin.model.errors import PlanError
from twin.stages.lab_file import load_lab

CATALOG: list[tuple[str, str, str]] = [
    ("malformed-yaml", "name: x\nkind: clos\nclos: {spines: 2, leaves: 2\n",
     "{f}:4: (yaml): malformed YAML: expected ',' or '}}', but got '<stream end>'; fix the syntax at that line"),
    ("not-a-mapping", "- a\n- b\n",
     "{f}:1: (document): expected a mapping at the top level; start the file with keys such as 'name:' and 'kind:'"),
    ("unknown-kind", "name: x\nkind: mesh\n",
     "{f}:2: kind: Input should be 'clos', 'rail' or 'explicit' (got 'mesh'); correct the value"),
    ("unknown-field", "name: x\nkind: clos\nclos:\n  spine: 2\n  spines: 2\n  leaves: 2\n",
     "{f}:4: clos.spine: unknown field; remove it or check its spelling"),
    ("kind-without-section", "name: x\nkind: clos\n",
     "{f}:2: kind: kind 'clos' needs a 'clos:' section; add 'clos:' with the fabric's sizes"),
    ("value-out-of-range", "name: x\nkind: clos\nclos: {spines: 0, leaves: 2}\n",
     "{f}:3: clos.spines: Input should be greater than or equal to 1 (got 0); correct the value"),
    ("mtu-out-of-range", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\nfabric: {mtu: 100000}\n",
     "{f}:4: fabric.mtu: Input should be less than or equal to 9216 (got 100000); correct the value"),
    ("bfd-timers-sonic-cannot-express", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\n"
     "fabric:\n  bfd: {enabled: true, interval_ms: 100}\n",
     "{f}:5: fabric.bfd: 'interval_ms' cannot be set: SONiC runs BFD for BGP peers at its own timers (300 ms x 3; "
     "no SONiC table with a YANG model carries others), so a config that asked for other timers would not work on "
     "a switch; remove 'interval_ms' and keep 'enabled'"),
    ("unknown-hwsku", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\nfabric: {hwsku: Foo-64}\n",
     "{f}:4: fabric.hwsku: twin has no port data for hwsku 'Foo-64'; use one of Arista-7060DX5-64S, "
     "Arista-7060X6-64PE-B-O128, Arista-7060X6-64PE-B-P64, Force10-S6000 (or add its port_config.ini rows as "
     "twin/model/hwsku/data/<hwsku>.json)"),
    ("sku-without-buffer-defaults", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\n"
     "fabric: {hwsku: Arista-7060DX5-64S}\n",
     "{f}:4: fabric.hwsku: SONiC ships no buffer defaults for Arista-7060DX5-64S (no buffers_defaults_*.j2 or "
     "pg_profile_lookup.ini in its device folder), so a switch of this SKU builds no lossless priority groups "
     "for RoCE; pick an hwsku with buffer defaults, e.g. Arista-7060X6-64PE-B-O128"),
    ("radix-beyond-the-sku", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\n"
     "fabric: {hwsku: Force10-S6000}\n",
     "{f}:4: fabric.radix: fabric.radix=64 but Force10-S6000 has 32 front-panel ports; set fabric.radix to at "
     "most 32 or pick an hwsku with more ports"),
    ("speed-not-the-skus", "name: x\nkind: clos\nclos: {spines: 1, leaves: 2}\nfabric: {port_speed: 100000}\n",
     "{f}:4: fabric.port_speed: 100000 is not Arista-7060X6-64PE-B-O128's port speed (400000), the only one "
     "SONiC's buffer profile for this SKU covers; remove fabric.port_speed or pick an hwsku of that speed"),
    ("radix-too-small", "name: x\nkind: clos\nclos: {spines: 40, leaves: 2}\n",
     "{f}:3: clos: each leaf needs 40 uplinks but only 32 (half of fabric.radix=64) are uplinks; "
     "raise fabric.radix or use fewer spines/parallel links"),
    ("link-to-unknown-node",
     "name: x\nkind: explicit\nnodes:\n  spine1: {role: spine}\n  leaf1: {role: leaf}\nlinks:\n"
     "  - endpoints: [leaf1, spine9]\n",
     "{f}:7: links.0: link to unknown node 'spine9'; define 'spine9' under nodes: or fix the name"),
    ("self-loop",
     "name: x\nkind: explicit\nnodes:\n  leaf1: {role: leaf}\nlinks:\n  - endpoints: [leaf1:Ethernet0, leaf1:Ethernet4]\n",
     "{f}:6: links.0: self-loop: both ends are on leaf1; connect two different nodes"),
    ("interface-used-twice",
     "name: x\nkind: explicit\nnodes:\n  spine1: {role: spine}\n  leaf1: {role: leaf}\n  leaf2: {role: leaf}\n"
     "links:\n  - endpoints: [leaf1:Ethernet128, spine1:Ethernet0]\n  - endpoints: [leaf2:Ethernet128, spine1:Ethernet0]\n",
     "{f}:9: links.1: interface spine1:Ethernet0 is used by two links (first used on line 8); "
     "give each link its own interface"),
    ("interface-name-too-long",
     "name: x\nkind: explicit\nnodes:\n  leaf1: {role: leaf}\n  h1: {role: server}\nlinks:\n"
     "  - endpoints: [leaf1, h1:averyveryverylongname0]\n",
     "{f}:7: links.0: interface name 'averyveryverylongname0' on h1 is 22 characters; Linux interface names "
     "hold at most 15; use a shorter interface name"),
    ("not-a-sonic-port",
     "name: x\nkind: explicit\nnodes:\n  leaf1: {role: leaf}\n  h1: {role: server}\nlinks:\n"
     "  - endpoints: [leaf1:eth1, h1]\n",
     "{f}:7: links.0: switch port 'eth1' on leaf1 is not a port of Arista-7060X6-64PE-B-O128; use the SKU's port "
     "names (Ethernet0, Ethernet4, Ethernet8, ... as its port_config.ini has them)"),
    ("address-pool-exhausted", "name: x\nkind: clos\nclos: {spines: 2, leaves: 4}\nfabric:\n  fabric_pool: 10.0.0.0/26\n",
     "{f}:5: fabric.fabric_pool: 10.0.0.0/26 is exhausted: it holds 32 /31s and 8 links do not fit (first: "
     "link leaf1:Ethernet128 - spine1:Ethernet0 needs /31 number 32); use a larger fabric.fabric_pool"),
    ("asn-out-of-range",
     "name: x\nkind: explicit\nnodes:\n  spine1: {role: spine, asn: 4294967295}\n  leaf1: {role: leaf}\n"
     "links:\n  - endpoints: [leaf1, spine1]\n",
     "{f}:4: nodes.spine1.asn: ASN 4294967295 is out of range; use a private ASN: 64512-65534 or "
     "4200000000-4294967294"),
    ("asn-range-overflow", "name: x\nkind: clos\nclos: {spines: 2, leaves: 40}\nfabric:\n  leaf_asn_base: 65500\n",
     "{f}:5: fabric.leaf_asn_base: ASNs 65500..65539 run past 65534, the end of the private range; lower "
     "fabric.leaf_asn_base or use 4-byte private ASNs (4200000000 and up)"),
    ("missing-bind-file",
     "name: lab1\ntopology:\n  nodes:\n    r1:\n      kind: linux\n      binds:\n        - r1/frr.conf:/etc/frr/frr.conf\n",
     "{f}:6: nodes.r1.binds: bind file {d}/r1/frr.conf does not exist; create it or fix the path in 'binds:' "
     "(paths are relative to the topology file)"),
    ("lab-topology-missing", "name: l\ntopology: nowhere.yaml\n",
     "{f}:2: topology: topology file {d}/nowhere.yaml does not exist; fix the path (it is relative to the lab file)"),
]


@pytest.mark.parametrize(("case", "text", "expected"), CATALOG, ids=[c[0] for c in CATALOG])
def test_bad_input_gives_exact_message(tmp_path: Path, case: str, text: str, expected: str) -> None:
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    with pytest.raises(PlanError) as err:
        load_lab(path)
    assert str(err.value) == expected.format(f=path, d=tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as err:
        load_lab(tmp_path / "nope.yaml")
    assert str(err.value) == f"{tmp_path}/nope.yaml: (file): file not found; check the path"


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("name: x\nkind: explicit\nnodes:\n  leaf1: {role: leaf}\nlinks:\n"
                    "  - endpoints: [leaf1, ghost]\n  - endpoints: [leaf1:Ethernet0, leaf1:Ethernet4]\n")
    with pytest.raises(PlanError) as err:
        load_lab(path)
    assert len(err.value.problems) == 2


@pytest.mark.parametrize("command", [["plan"], ["up", "--name", "okname"]])
def test_cli_exits_2_without_traceback(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nkind: mesh\n")
    result = CliRunner().invoke(app, [command[0], str(path), *command[1:]], standalone_mode=False)
    assert isinstance(result.exception, PlanError)  # main() turns it into exit 2 (see below)


def test_main_turns_errors_into_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from twin.cli import app as cli

    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nkind: mesh\n")
    monkeypatch.setattr("sys.argv", ["twin", "plan", str(path)])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path}:2: kind: Input should be" in err


@pytest.mark.parametrize("name", ["averyverylongname", "Bad", "a.b", "1lab", ""])
def test_bad_lab_names_are_refused(name: str) -> None:
    from twin.runtime.registry import check_lab_name

    with pytest.raises(PlanError) as err:
        check_lab_name(name)
    assert f"lab name '{name}' is not usable" in str(err.value)
    assert "pick another name with --name" in str(err.value)
