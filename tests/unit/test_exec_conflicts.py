"""Hosts whose `exec:` lines address them against twin's plan are refused at load, with the fix."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from twin.model.errors import PlanError
from twin.stages.exec_conflicts import IpCommand, ip_commands
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

CLOS = Path(__file__).parent / "data/clab/sonic-clos.clab.yml"


def _lab(tmp_path: Path, h1_exec: list[str], h2_exec: list[str] | None = None) -> Path:
    data = yaml.safe_load(CLOS.read_text())
    data["topology"]["nodes"]["h1"]["exec"] = h1_exec
    if h2_exec is not None:
        data["topology"]["nodes"]["h2"]["exec"] = h2_exec
    path = tmp_path / "lab.clab.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _problems(path: Path) -> list[Any]:
    with pytest.raises(PlanError) as err:
        plan_topology(load_topology(path))
    return err.value.problems


def test_exec_lines_that_follow_the_plan_plan() -> None:
    plan = plan_topology(load_topology(CLOS))
    assert str(plan.node("h1").iface("eth1").address) == "10.2.0.1/31"
    assert str(plan.node("leaf1").iface("Ethernet0").address) == "10.2.0.0/31"
    assert str(plan.node("h2").iface("eth1").address) == "10.2.0.129/31"


def test_an_address_of_another_subnet_is_refused_naming_node_line_plan_and_fix(tmp_path: Path) -> None:
    path = _lab(tmp_path, ["ip link set eth1 up", "ip addr add 192.168.11.2/24 dev eth1"])
    (p,) = _problems(path)
    assert (p.file, p.field, p.line) == (str(path), "nodes.h1.exec.1", _line_of(path, "192.168.11.2/24"))
    assert p.message == ("h1: exec line 'ip addr add 192.168.11.2/24 dev eth1' gives eth1 192.168.11.2/24, but "
                         "twin plans 10.2.0.1/31 for eth1 (its link to leaf1:Ethernet0, which twin addresses "
                         "10.2.0.0/31)")
    assert p.fix == ("write 'ip addr add 10.2.0.1/31 dev eth1' instead, or give leaf1 its own config_db.json so "
                     "twin plans nothing on that link")


@pytest.mark.parametrize("line", ["ip addr add 10.2.0.1/24 dev eth1", "ip address add 10.2.0.1 dev eth1",
                                  "ip -4 a add dev eth1 10.2.0.0/31", "ip addr replace 10.2.0.3/31 dev eth1",
                                  "ip link set eth1 up && sudo ip addr add 10.9.9.9/31 dev eth1"])
def test_every_spelling_of_a_wrong_address_is_refused(tmp_path: Path, line: str) -> None:
    (p,) = _problems(_lab(tmp_path, [line]))
    assert p.message.startswith(f"h1: exec line '{line}' gives eth1 ")
    assert "but twin plans 10.2.0.1/31 for eth1" in p.message


def test_a_gateway_that_is_not_the_leafs_is_refused(tmp_path: Path) -> None:
    path = _lab(tmp_path, ["ip addr add 10.2.0.1/31 dev eth1", "ip route add 10.0.0.0/8 via 10.2.0.3 dev eth1"])
    (p,) = _problems(path)
    assert (p.field, p.line) == ("nodes.h1.exec.1", _line_of(path, "via 10.2.0.3"))
    assert p.message == ("h1: exec line 'ip route add 10.0.0.0/8 via 10.2.0.3 dev eth1' routes via 10.2.0.3, but "
                         "twin plans 10.2.0.0 for leaf1:Ethernet0, h1's gateway on eth1")
    assert p.fix == "route via 10.2.0.0 instead (ip route add 10.0.0.0/8 via 10.2.0.0 dev eth1)"


def test_a_default_route_no_nic_reaches_is_refused(tmp_path: Path) -> None:
    (p,) = _problems(_lab(tmp_path, ["ip addr add 10.2.0.1/31 dev eth1", "ip route add default via 192.168.1.1"]))
    assert p.message == ("h1: exec line 'ip route add default via 192.168.1.1' routes via 192.168.1.1, which no NIC "
                         "of h1 reaches: twin plans its gateways as 10.2.0.0 (leaf1) on eth1")


def test_an_address_twin_plans_for_another_node_is_refused(tmp_path: Path) -> None:
    (p,) = _problems(_lab(tmp_path, ["ip addr add 10.2.0.1/31 dev eth1", "ip addr add 10.1.0.1/32 dev lo"]))
    assert p.message == "h1: exec line 'ip addr add 10.1.0.1/32 dev lo' gives lo 10.1.0.1, the address twin plans " \
                        "for spine1's loopback"


def test_every_conflict_of_every_host_is_reported_at_once(tmp_path: Path) -> None:
    problems = _problems(_lab(tmp_path, ["ip addr add 192.168.11.2/24 dev eth1",
                                         "ip route add 192.168.0.0/16 via 192.168.11.1 dev eth1"],
                              ["ip addr add 192.168.12.2/24 dev eth1"]))
    assert [p.field for p in problems] == ["nodes.h1.exec.0", "nodes.h1.exec.1", "nodes.h2.exec.0"]


def test_extra_addresses_beside_the_planned_one_are_accepted(tmp_path: Path) -> None:
    plan = plan_topology(load_topology(_lab(tmp_path, [
        "ip link set eth1 up", "ip addr add 10.2.0.1/31 dev eth1", "ip addr add 192.168.50.1/32 dev eth1",
        "ip addr add 2001:db8::1/64 dev eth1", "ip route add 10.0.0.0/8 via 10.2.0.0",
        "ip route add 172.16.0.0/12 dev eth1", "echo ip addr add 1.2.3.4/24 dev eth1 > note"])))
    assert len(plan.node("h1").exec) == 7


def test_exec_lines_from_a_group_name_the_nodes_exec(tmp_path: Path) -> None:
    data = yaml.safe_load(CLOS.read_text())
    topo = data["topology"]
    topo["groups"] = {"hosts": {"exec": ["ip addr add 192.168.0.2/24 dev eth1"]}}
    topo["nodes"]["h1"] = {"kind": "linux", "group": "hosts", "exec": ["ip link set eth1 up"]}
    path = tmp_path / "lab.clab.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    (p,) = _problems(path)
    assert p.field == "nodes.h1.exec"
    assert "exec line 'ip addr add 192.168.0.2/24 dev eth1'" in p.message


def test_ip_commands() -> None:
    assert ip_commands("ip -4 addr add 10.0.0.1/31 dev eth1 label eth1:1") == [
        IpCommand("address", "10.0.0.1/31", "eth1", None)]
    assert ip_commands("ip route replace default via 10.0.0.0 dev eth1 metric 10; ip r add 1.0.0.0/8 via 2.2.2.2") == [
        IpCommand("route", "default", "eth1", "10.0.0.0"), IpCommand("route", "1.0.0.0/8", None, "2.2.2.2")]
    assert ip_commands("ip addr show dev eth1") == []
    assert ip_commands("ip link set eth1 up") == []
    assert ip_commands("sh -c 'unterminated") == []


def test_a_conflict_exits_2_before_anything_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from twin.cli.app import main

    path = _lab(tmp_path, ["ip addr add 192.168.11.2/24 dev eth1"])
    monkeypatch.setattr(sys, "argv", ["twin", "plan", str(path)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "Traceback" not in err
    assert f"{path}:{_line_of(path, '192.168.11.2')}: nodes.h1.exec.0: h1: exec line" in err
    assert "write 'ip addr add 10.2.0.1/31 dev eth1' instead" in err
