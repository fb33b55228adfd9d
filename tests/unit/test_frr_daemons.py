"""FRR daemons of imported routers: parsing `daemons` files, skipping what this kernel cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.switch import frr_daemons
from twin.switch.frr_daemons import daemon_command, parse_daemons_file, split_supported, switch_daemons, vtysh

FRR01 = Path(__file__).resolve().parents[2] / "topologies" / "frr01"



@pytest.mark.parametrize("router", ["router1", "router2", "router3"])
def test_frr01_daemons(router: str) -> None:
    assert parse_daemons_file((FRR01 / router / "daemons").read_text()) == ["zebra", "ospfd", "ldpd"]


@pytest.mark.parametrize(("text", "daemons"), [
    pytest.param("bgpd=yes\nzebra=yes\n", ["zebra", "bgpd"], id="zebra-moved-first"),
    pytest.param("bgpd=no\nospfd=no\n", ["zebra"], id="zebra-even-when-absent"),
    pytest.param("bgpd = yes\nbfdd=yes\n", ["zebra", "bgpd", "bfdd"], id="spaces-and-order"),
    pytest.param("#bgpd=yes\nbgpd_options=\"--daemon -A 127.0.0.1\"\n", ["zebra"], id="comments-and-options"),
    pytest.param("foobard=yes\nisisd=yes\n", ["zebra", "isisd"], id="unknown-daemon-ignored"),
])
def test_parse_daemons_file(text: str, daemons: list[str]) -> None:
    assert parse_daemons_file(text) == daemons


def test_split_supported_skips_ldpd(fake_frr: Path) -> None:
    start, warnings = split_supported(["zebra", "ospfd", "ldpd"])
    assert start == ["zebra", "ospfd"]
    assert len(warnings) == 1
    assert warnings[0].startswith("skipping ldpd")
    assert "MPLS" in warnings[0]


def test_split_supported_skips_missing_binary(fake_frr: Path) -> None:
    (fake_frr / "ospfd").unlink()
    start, warnings = split_supported(["zebra", "ospfd"])
    assert start == ["zebra"]
    assert warnings == [f"skipping ospfd: {fake_frr / 'ospfd'} is not installed"]


@pytest.mark.parametrize(("bfd", "daemons"), [(True, ["zebra", "bgpd", "bfdd"]), (False, ["zebra", "bgpd"])])
def test_switch_daemons(bfd: bool, daemons: list[str]) -> None:
    assert switch_daemons(bfd) == daemons


@pytest.mark.parametrize("daemon", ["zebra", "bgpd", "ospfd"])
def test_daemon_command_pathspace_has_no_dots(daemon: str, tmp_path: Path) -> None:
    cmd = daemon_command(daemon, "tw.lab.node", tmp_path)
    pathspace = cmd[cmd.index("-N") + 1]
    assert pathspace == "tw_lab_node"
    assert "." not in pathspace
    assert cmd[0] == str(frr_daemons.FRR_BIN / daemon)
    assert cmd[cmd.index("-i") + 1] == str(tmp_path / f"{daemon}.pid")
    assert cmd[cmd.index("--vty_socket") + 1] == str(tmp_path)
    assert cmd[cmd.index("-z") + 1] == str(tmp_path / "zserv.api")


@pytest.mark.parametrize(("daemon", "has_buffer"), [("zebra", True), ("bgpd", False)])
def test_zebra_gets_netlink_buffer(daemon: str, has_buffer: bool, tmp_path: Path) -> None:
    assert ("-s" in daemon_command(daemon, "ns", tmp_path)) is has_buffer


def test_vtysh(tmp_path: Path) -> None:
    assert vtysh(tmp_path, "-c", "show bgp summary json") == [
        "vtysh", "--vty_socket", str(tmp_path), "-c", "show bgp summary json"]
