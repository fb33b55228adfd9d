"""Export of a plan as a containerlab topology, and the containerlab command lines and inspect output."""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from twin.export.containerlab import schema_found, validate_clab, write_clab
from twin.kinds.facts import ClabKind
from twin.kinds.frr_switch import SWITCH_SYSCTLS
from twin.kinds.host import HOST_SYSCTLS
from twin.kinds.sonic_vs import missing_ports, sonic_vs_iface, sonic_vs_port
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.runtime.clab.topology import FRR_INIT, clab_topology, daemons_file, default_image
from twin.stages.lab_file import load_lab
from twin.stages.load.clab_import import sonic_iface
from twin.stages.render.config_db import build_config_db, dumps
from twin.switch.frr.frr_daemons import parse_daemons_file

REPO = Path(__file__).resolve().parents[2]
LABS = ["default", "rail"]
KINDS: list[ClabKind] = ["linux", "sonic-vs"]
needs_schema = pytest.mark.skipif(not schema_found(), reason="containerlab's clab.schema.json was not found "
                                  "(set TWIN_CLAB_SCHEMA or TWIN_SONIC_REFERENCE)")


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    return {name: load_lab(REPO / f"labs/{name}.yaml").plan for name in [*LABS, "frr01"]}


def _topology(plan: Plan, kind: ClabKind, **kw: Any) -> dict[str, Any]:
    return clab_topology(plan, kind=kind, image=default_image(kind), files_dir="lab-files", **kw)


# -- schema --------------------------------------------------------------------------------------

@needs_schema
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lab", [*LABS, "frr01"])
def test_generated_topology_validates(plans: dict[str, Plan], lab: str, kind: ClabKind) -> None:
    assert validate_clab(_topology(plans[lab], kind)) == []


@needs_schema
def test_static_management_addresses_validate(plans: dict[str, Plan]) -> None:
    assert validate_clab(_topology(plans["default"], "linux", mgmt_subnet="172.30.7.0/24")) == []


@needs_schema
def test_schema_errors_name_the_path_and_the_closest_alternative() -> None:
    doc = {"name": "bad name", "topology": {
        "nodes": {"a": {"kind": "linux", "mgmt-ipv4": "10.0.0"}},
        "links": [{"endpoints": ["a:eth1", "b"], "colour": "red"}]}}
    errors = validate_clab(doc)
    assert "name: 'bad name' does not match '^[a-zA-Z0-9][a-zA-Z0-9-._]*$'" in errors
    assert any(e.startswith("topology/nodes/a/mgmt-ipv4: '10.0.0' does not match") for e in errors)
    assert "topology/links/0: Additional properties are not allowed ('colour' was unexpected)" in errors
    assert any(e.startswith("topology/links/0/endpoints/1: 'b' does not match") for e in errors)
    assert len(errors) == 4


def test_without_a_schema_validation_is_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TWIN_CLAB_SCHEMA", str(tmp_path / "absent.json"))
    assert not schema_found()
    assert validate_clab({"not": "a topology"}) == []


def test_schema_references_are_never_fetched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    schema = tmp_path / "remote.json"
    schema.write_text(json.dumps({"$schema": "http://json-schema.org/draft-07/schema#",
                                  "$id": "https://example.invalid/clab.json",
                                  "properties": {"name": {"$ref": "https://example.invalid/name.json"}}}))
    monkeypatch.setenv("TWIN_CLAB_SCHEMA", str(schema))
    with pytest.raises(TwinError, match="nothing is fetched"):
        validate_clab({"name": "x"})


def test_write_clab_refuses_an_invalid_topology_and_writes_nothing(
        plans: dict[str, Plan], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    schema = tmp_path / "strict.json"
    schema.write_text(json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "required": ["colour"]}))
    monkeypatch.setenv("TWIN_CLAB_SCHEMA", str(schema))
    out = tmp_path / "out" / "lab.clab.yml"
    with pytest.raises(TwinError, match="'colour' is a required property"):
        write_clab(plans["default"], out, kind="linux", image="twin-switch:test")
    assert not out.parent.exists()


# -- SONiC port names and containerlab's sonic-vs interfaces ------------------------------------

@pytest.mark.parametrize(("port", "iface"), [("Ethernet0", "eth1"), ("Ethernet4", "eth2"),
                                             ("Ethernet124", "eth32"), ("Ethernet128", "eth33")])
def test_sonic_vs_mapping_both_ways(port: str, iface: str) -> None:
    assert sonic_vs_iface(port) == iface
    assert sonic_vs_port(iface) == port


@pytest.mark.parametrize(("port", "message"), [
    ("Ethernet2", "steps of 4"), ("Ethernet", "not a SONiC port name"), ("Ethernet04", "not a SONiC port name"),
    ("eth1", "not a SONiC port name"), ("", "not a SONiC port name"), ("ethernet0", "not a SONiC port name")])
def test_sonic_vs_iface_rejects(port: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sonic_vs_iface(port)


@pytest.mark.parametrize(("iface", "message"), [
    ("eth0", "management interface"), ("Ethernet0", "not a containerlab sonic-vs interface"),
    ("eth", "not a containerlab sonic-vs interface"), ("eth01", "not a containerlab sonic-vs interface"),
    ("e1-1", "not a containerlab sonic-vs interface")])
def test_sonic_vs_port_rejects(iface: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sonic_vs_port(iface)


@pytest.mark.parametrize("n", [1, 2, 17, 64])
def test_mapping_agrees_with_the_clab_importer(n: int) -> None:
    assert sonic_vs_port(f"eth{n}") == sonic_iface(f"eth{n}")


def test_ports_beyond_the_s6000_are_reported_once(plans: dict[str, Plan]) -> None:
    warnings = missing_ports(plans["default"])
    assert len(warnings) == 1
    assert warnings[0].startswith("8 switches use ports beyond Force10-S6000's 32")
    assert "leaf1 (Ethernet128, Ethernet132, Ethernet136, Ethernet140)" in warnings[0]
    assert missing_ports(plans["frr01"]) == []


# -- nodes and links -----------------------------------------------------------------------------

def _expected_endpoint(plan: Plan, kind: ClabKind, node: str, port: str) -> str:
    n = plan.node(node)
    if kind == "sonic-vs" and n.kind == "switch":
        return f"{node}:{sonic_vs_iface(port)}"
    return f"{node}:{n.iface(port).kernel}"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lab", [*LABS, "frr01"])
def test_every_plan_link_appears_once_with_its_interfaces(plans: dict[str, Plan], lab: str, kind: ClabKind) -> None:
    plan = plans[lab]
    links = _topology(plan, kind)["topology"]["links"]
    got = Counter(frozenset(link["endpoints"]) for link in links)
    want = Counter(frozenset({_expected_endpoint(plan, kind, ln.a_node, ln.a_iface),
                              _expected_endpoint(plan, kind, ln.b_node, ln.b_iface)}) for ln in plan.links)
    assert got == want
    assert set(got.values()) == {1}
    ends = [end for link in links for end in link["endpoints"]]
    assert len(ends) == len(set(ends)) == 2 * len(plan.links)


def test_linux_switch_keeps_the_kernel_names(plans: dict[str, Plan]) -> None:
    links = _topology(plans["default"], "linux")["topology"]["links"]
    assert {"endpoints": ["leaf1:Ethernet128", "spine1:Ethernet0"]} in links


def test_sonic_vs_switch_uses_eth_n(plans: dict[str, Plan]) -> None:
    doc = _topology(plans["default"], "sonic-vs")
    assert {"endpoints": ["leaf1:eth33", "spine1:eth1"]} in doc["topology"]["links"]
    leaf1 = doc["topology"]["nodes"]["leaf1"]
    assert leaf1["kind"] == "sonic-vs"
    assert leaf1["image"] == "docker-sonic-vs:latest"
    assert leaf1["binds"] == ["lab-files/leaf1/config_db.json:/var/sonic/config_db.json:ro"]
    assert leaf1["exec"][1:3] == ["cp /var/sonic/config_db.json /etc/sonic/config_db.json",
                                  "config load -y /etc/sonic/config_db.json"]
    server = doc["topology"]["nodes"]["server1"]
    assert (server["kind"], server["image"]) == ("linux", default_image("linux"))


def test_linux_switch_node(plans: dict[str, Plan]) -> None:
    plan = plans["default"]
    leaf1 = _topology(plan, "linux")["topology"]["nodes"]["leaf1"]
    assert leaf1["kind"] == "linux"
    assert leaf1["image"] == default_image("linux")
    assert leaf1["binds"] == ["lab-files/leaf1/frr.conf:/etc/frr/frr.conf",
                              "lab-files/leaf1/daemons:/etc/frr/daemons",
                              "lab-files/leaf1/config_db.json:/etc/sonic/config_db.json:ro"]
    sysctls = [f"sysctl -w {k}={v}" for k, v in SWITCH_SYSCTLS.items()]
    assert leaf1["exec"][:len(sysctls)] == sysctls
    assert leaf1["exec"][-1] == f"{FRR_INIT} start"
    loopback = plan.node("leaf1").loopback
    assert f"ip address add {loopback}/32 dev lo" in leaf1["exec"]
    assert "ip link set dev Ethernet128 mtu 9100 up" in leaf1["exec"]
    assert all(line.startswith(("sysctl -w ", "ip ")) for line in leaf1["exec"][:-1])


def test_server_node_configures_addresses_and_routes(plans: dict[str, Plan]) -> None:
    plan = plans["default"]
    server = _topology(plan, "linux")["topology"]["nodes"]["server1"]
    nic = plan.node("server1").interfaces[0]
    assert nic.address is not None and nic.peer_address is not None
    assert server["exec"][:len(HOST_SYSCTLS)] == [f"sysctl -w {k}={v}" for k, v in HOST_SYSCTLS.items()]
    assert f"ip address add {nic.address} dev eth1" in server["exec"]
    assert f"ip route add default via {nic.peer_address.ip} dev eth1" in server["exec"]
    assert "binds" not in server


def test_imported_hosts_keep_their_exec_lines_and_routers_their_frr(plans: dict[str, Plan]) -> None:
    nodes = _topology(plans["frr01"], "linux")["topology"]["nodes"]
    assert nodes["PC1"]["exec"][-1] == "ip route add 10.10.10.0/24 via 192.168.11.1 dev eth1"
    assert nodes["router1"]["binds"] == ["lab-files/router1/frr.conf:/etc/frr/frr.conf",
                                         "lab-files/router1/daemons:/etc/frr/daemons"]
    assert nodes["router1"]["exec"][-1] == f"{FRR_INIT} start"


@pytest.mark.parametrize("bfd", [True, False])
def test_daemons_file_enables_what_twin_runs(bfd: bool) -> None:
    daemons = ["zebra", "bgpd", *(["bfdd"] if bfd else [])]
    text = daemons_file(daemons)
    assert parse_daemons_file(text) == daemons
    assert "vtysh_enable=yes" in text
    assert ("bfdd=yes" in text) is bfd
    # every daemon's vty on 127.0.0.1 only (frrinit.sh passes <daemon>_options), as SONiC's
    for daemon in ["zebra", "staticd", *daemons[1:]]:
        assert re.search(rf'^{daemon}_options=".*-A 127\.0\.0\.1\b', text, re.M), daemon


def test_management_network_is_named_after_the_lab(plans: dict[str, Plan]) -> None:
    doc = _topology(plans["default"], "linux", lab_name="mylab")
    assert doc["name"] == "mylab"
    assert doc["mgmt"] == {"network": "twin-mylab", "ipv4-subnet": "auto"}
    assert all("mgmt-ipv4" not in node for node in doc["topology"]["nodes"].values())


def test_static_management_addresses(plans: dict[str, Plan]) -> None:
    doc = _topology(plans["default"], "linux", mgmt_subnet="172.30.7.0/24")
    assert doc["mgmt"]["ipv4-subnet"] == "172.30.7.0/24"
    addresses = [IPv4Address(node["mgmt-ipv4"]) for node in doc["topology"]["nodes"].values()]
    assert len(set(addresses)) == len(addresses) == len(plans["default"].nodes)
    assert min(addresses) == IPv4Address("172.30.7.2")
    assert all(a in IPv4Network("172.30.7.0/24") for a in addresses)


@pytest.mark.parametrize(("subnet", "message"), [("172.30.7.0/28", "holds 13 node addresses"),
                                                 ("172.30.7.1/24", "has host bits set"),
                                                 ("nonsense", "give an IPv4 prefix")])
def test_bad_management_subnets(plans: dict[str, Plan], subnet: str, message: str) -> None:
    with pytest.raises(TwinError, match=message):
        _topology(plans["default"], "linux", mgmt_subnet=subnet)


def test_interface_names_containerlab_cannot_create_are_refused(plans: dict[str, Plan]) -> None:
    plan = plans["default"]
    server = plan.node("server1")
    nic = server.interfaces[0].model_copy(update={"kernel": "averyverylongifname"})
    bad = plan.model_copy(update={"nodes": [server.model_copy(update={"interfaces": [nic]}) if n.name == "server1"
                                            else n for n in plan.nodes]})
    with pytest.raises(TwinError, match="server1:eth1: 'averyverylongifname' is not a Linux interface name"):
        _topology(bad, "linux")


# -- writing -------------------------------------------------------------------------------------

def _bind_sources(topo: Path) -> list[tuple[str, Path, str]]:
    doc = yaml.safe_load(topo.read_text())
    return [(name, topo.parent / bind.split(":")[0], bind.split(":", 1)[1])
            for name, node in doc["topology"]["nodes"].items() for bind in node.get("binds", [])]


@pytest.mark.parametrize("kind", KINDS)
def test_binds_point_at_files_that_exist(plans: dict[str, Plan], tmp_path: Path, kind: ClabKind) -> None:
    plan = plans["default"]
    topo = tmp_path / "labs" / "default.clab.yml"
    written = write_clab(plan, topo, kind=kind, image=default_image(kind), lab_name="default")
    assert written[0] == topo
    binds = _bind_sources(topo)
    assert binds, "switches bind their configs"
    for _node, source, _target in binds:
        assert source.is_file(), source
        assert source.parent.parent == tmp_path / "labs" / "default-files"
    assert {source for _n, source, _t in binds} == set(written[1:])
    leaf1 = tmp_path / "labs/default-files/leaf1/config_db.json"
    assert leaf1.read_text() == dumps(build_config_db(plan, plan.node("leaf1")))


@needs_schema
@pytest.mark.parametrize("kind", KINDS)
def test_written_yaml_validates(plans: dict[str, Plan], tmp_path: Path, kind: ClabKind) -> None:
    topo = tmp_path / "rail.clab.yml"
    write_clab(plans["rail"], topo, kind=kind, image=default_image(kind))
    assert validate_clab(yaml.safe_load(topo.read_text())) == []


def test_rewrite_drops_stale_node_folders_only(plans: dict[str, Plan], tmp_path: Path) -> None:
    topo = tmp_path / "default.clab.yml"
    files = tmp_path / "default-files"
    write_clab(plans["rail"], topo, kind="linux", image="twin-switch:test", lab_name="default")  # an earlier export
    (files / "notes").mkdir()
    (files / "notes" / "todo.txt").write_text("mine")
    write_clab(plans["default"], topo, kind="linux", image="twin-switch:test", lab_name="default")
    nodes = {n.name for n in plans["default"].nodes if n.kind in ("switch", "router")}
    assert {p.name for p in files.iterdir() if p.is_dir()} == nodes | {"notes"}
    assert (files / "notes" / "todo.txt").read_text() == "mine"


# -- the command line ----------------------------------------------------------------------------

@pytest.fixture
def cli() -> typer.Typer:
    from twin.cli.export import export_app

    app = typer.Typer()
    app.add_typer(export_app, name="export")
    return app


def test_cli_missing_topology_exits_2(cli: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export", "clab", str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "x.yml")])
    assert result.exit_code == 2
    assert f"error: {tmp_path}/nope.yaml: (file): file not found" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.yml").exists()


def test_cli_writes_and_reports(cli: typer.Typer, tmp_path: Path) -> None:
    out = tmp_path / "default.clab.yml"
    result = CliRunner().invoke(cli, ["export", "clab", str(REPO / "labs/default.yaml"), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["lab"] == "default"
    assert summary["image"] == default_image("linux")
    assert summary["validated"] is schema_found()
    assert yaml.safe_load(out.read_text())["name"] == "default"
    assert all(Path(p).is_file() for p in summary["written"])


def test_cli_says_when_validation_was_skipped(cli: typer.Typer, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWIN_CLAB_SCHEMA", str(tmp_path / "absent.json"))
    result = CliRunner().invoke(cli, ["export", "clab", str(REPO / "labs/default.yaml"), "-o",
                                      str(tmp_path / "d.clab.yml"), "--kind", "sonic-vs"])
    assert result.exit_code == 0, result.output
    assert "schema was not found: topology not validated" in result.stdout
    assert "warning: 8 switches use ports beyond" in result.stderr


# -- sonic-vs: the config is copied in, never bound where start.sh renames it --------------------

BOUND = REPO / "tests/integration/data/clab-bound/bound.clab.yml"


@pytest.fixture(scope="module")
def bound() -> Plan:
    """containerlab's sonic-vs nodes with their own config_db.json bound at /etc/sonic, imported."""
    return load_lab(BOUND).plan


@pytest.mark.parametrize("lab", ["default", "bound"])
def test_no_sonic_vs_node_binds_etc_sonic_config_db(plans: dict[str, Plan], bound: Plan, lab: str) -> None:
    """start.sh (bash -e) mvs a merged file over /etc/sonic/config_db.json: a bind there stops SONiC's boot."""
    plan = bound if lab == "bound" else plans[lab]
    nodes = _topology(plan, "sonic-vs")["topology"]["nodes"]
    sonic = {name: node for name, node in nodes.items() if node["kind"] == "sonic-vs"}
    assert sonic
    for name, node in sonic.items():
        targets = [bind.split(":")[1] for bind in node["binds"]]
        assert targets == ["/var/sonic/config_db.json"], name
        assert node["binds"][0].endswith(":ro")


def test_sonic_vs_exec_waits_for_start_sh_then_copies_loads_and_starts_ports(bound: Plan) -> None:
    sw1 = _topology(bound, "sonic-vs")["topology"]["nodes"]["sw1"]
    wait, cp, load, *ports = sw1["exec"]
    argv = shlex.split(wait)  # containerlab splits exec lines as a shell would, and runs no shell
    assert argv[:2] == ["bash", "-c"] and len(argv) == 3
    assert 'sonic-db-cli CONFIG_DB GET CONFIG_DB_INITIALIZED' in argv[2] and "exit 1" in argv[2]
    assert cp == "cp /var/sonic/config_db.json /etc/sonic/config_db.json"
    assert load == "config load -y /etc/sonic/config_db.json"
    assert ports == ["config interface startup Ethernet0", "config interface startup Ethernet8"]


def test_sonic_vs_exec_starts_only_ports_the_config_has_up(bound: Plan, tmp_path: Path) -> None:
    from twin.kinds.sonic_vs import clab_exec

    db = json.loads((BOUND.parent / "sw1/config_db.json").read_text())
    db["PORT"]["Ethernet8"]["admin_status"] = "down"
    assert clab_exec(bound.node("sw1"), db)[3:] == ["config interface startup Ethernet0"]


def test_export_of_an_imported_lab_binds_the_users_own_configs(bound: Plan, tmp_path: Path) -> None:
    topo = tmp_path / "bound.clab.yml"
    write_clab(bound, topo, kind="sonic-vs", image=default_image("sonic-vs"))
    for switch in ("sw1", "sw2"):
        written = json.loads((tmp_path / f"bound-files/{switch}/config_db.json").read_text())
        assert written == json.loads((BOUND.parent / switch / "config_db.json").read_text())
    doc = yaml.safe_load(topo.read_text())
    assert doc["topology"]["nodes"]["h1"]["exec"][-2:] == ["ip addr add 192.168.1.2/24 dev eth1",
                                                         "ip route add 192.168.0.0/16 via 192.168.1.1 dev eth1"]
    assert validate_clab(doc) == []
    assert missing_ports(bound) == []  # the files name their own (S6000) ports; no hwsku warning


def test_exported_lab_imports_back_to_the_same_plan(bound: Plan, tmp_path: Path) -> None:
    topo = tmp_path / "bound.clab.yml"
    write_clab(bound, topo, kind="sonic-vs", image=default_image("sonic-vs"))
    again = load_lab(topo).plan
    for name in ("sw1", "sw2"):
        a, b = bound.node(name), again.node(name)
        assert b.config_db == tmp_path / f"bound-files/{name}/config_db.json"  # the /var/sonic bind
        assert (a.asn, a.loopback, a.neighbors, a.networks) == (b.asn, b.loopback, b.neighbors, b.networks)
        assert [i.address for i in a.interfaces] == [i.address for i in b.interfaces]
    # the copy-in lines are twin's own, so a second export does not repeat them
    assert _topology(again, "sonic-vs")["topology"]["nodes"]["sw1"]["exec"] == \
        _topology(bound, "sonic-vs")["topology"]["nodes"]["sw1"]["exec"]


def test_linux_kind_runs_the_users_config_too(bound: Plan) -> None:
    sw1 = _topology(bound, "linux")["topology"]["nodes"]["sw1"]
    assert any("10.0.0.0/31" in line and "Ethernet0" in line for line in sw1["exec"])  # its own INTERFACE
    assert not any(" 10.2." in line for line in sw1["exec"])  # nothing from twin's server pool
