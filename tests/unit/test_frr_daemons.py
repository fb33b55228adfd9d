"""FRR daemons of imported routers: parsing `daemons` files, skipping what this kernel cannot run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from twin.model.errors import RuntimeBackendError
from twin.switch.frr import frr_daemons
from twin.switch.frr.frr_daemons import (
    bgp_established,
    daemon_command,
    launch_later,
    parse_daemons_file,
    prepare_boot,
    split_supported,
    switch_daemons,
    vtysh,
)
from twin.switch.frr.frr_split import per_daemon_configs, route_map_owners

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


@pytest.mark.parametrize(("bfd", "daemons"), [(True, ["zebra", "bgpd", "staticd", "bfdd"]),
                                               (False, ["zebra", "bgpd", "staticd"])])
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


@pytest.mark.parametrize("daemon", ["zebra", "bgpd", "bfdd", "staticd", "ospfd"])
def test_daemon_vty_listens_on_localhost_only(daemon: str, tmp_path: Path) -> None:
    """SONiC starts its FRR daemons with `-A 127.0.0.1`; without -A, FRR's TCP vty (2601, 2605,
    2617, ...) listens on every address of the node, where GPU servers reach it."""
    cmd = daemon_command(daemon, "ns", tmp_path)
    assert cmd[cmd.index("-A") + 1] == "127.0.0.1"
    assert cmd.count("-A") == 1 and "-P" not in cmd


@pytest.mark.parametrize(("daemon", "has_buffer"), [("zebra", True), ("bgpd", False)])
def test_zebra_gets_netlink_buffer(daemon: str, has_buffer: bool, tmp_path: Path) -> None:
    assert ("-s" in daemon_command(daemon, "ns", tmp_path)) is has_buffer


def test_vtysh(tmp_path: Path) -> None:
    assert vtysh(tmp_path, "-c", "show bgp summary json") == [
        "vtysh", "--vty_socket", str(tmp_path), "-c", "show bgp summary json"]


RENDERED = """! Rendered by twin
frr version 8.4
frr defaults traditional
hostname leaf1
log syslog informational
service integrated-vtysh-config
!
no zebra nexthop kernel enable
!
route-map RM_SET_SRC permit 10
 set src 10.1.4.1
exit
!
ip protocol bgp route-map RM_SET_SRC
!
router bgp 65101
 neighbor 10.0.0.64 remote-as 65100
 neighbor 10.0.0.64 bfd
 !
 address-family ipv4 unicast
  maximum-paths 4
 exit-address-family
exit
!
bfd
 profile fast
  transmit-interval 300
 exit
exit
!
end
"""


def test_per_daemon_configs_give_each_block_to_its_daemons_only() -> None:
    files = per_daemon_configs(RENDERED, ["zebra", "bgpd", "bfdd"])
    assert files is not None
    common = "frr version 8.4\nfrr defaults traditional\nhostname leaf1\nlog syslog informational\n"
    assert files["zebra"] == (common + "no zebra nexthop kernel enable\n"
                              + "route-map RM_SET_SRC permit 10\n set src 10.1.4.1\nexit\n"
                              + "ip protocol bgp route-map RM_SET_SRC\n")
    # `set src` is zebra's: bgpd gets the entry without it, as vtysh sends it (bgpd logged
    # "No such command" for it at every start)
    assert files["bgpd"] == common + "route-map RM_SET_SRC permit 10\nexit\n" + (
        "router bgp 65101\n neighbor 10.0.0.64 remote-as 65100\n neighbor 10.0.0.64 bfd\n"
        " address-family ipv4 unicast\n  maximum-paths 4\n exit-address-family\nexit\n")
    # bgpd never sees the bfd block: its `exit` would end config mode before `router bgp`
    assert files["bfdd"] == common + "bfd\n profile fast\n  transmit-interval 300\n exit\nexit\n"


@pytest.mark.parametrize(("conf", "daemons"), [
    ("hostname r1\nrouter ospf\n network 10.0.0.0/8 area 0\nexit\n", ["zebra", "bgpd"]),  # owner unknown
    ("hostname r1\nbfd\n profile x\nexit\n", ["zebra", "bgpd"]),                           # bfdd not running
    ("hostname r1\nip route 10.0.0.0/8 blackhole\n", ["zebra", "bgpd"]),                    # staticd not running
    ("hostname r1\nip forwarding\n", ["zebra", "bgpd", "staticd"]),                           # not in the table
    ("route-map RM permit 10\n set frobnicate 1\nexit\n", ["zebra", "bgpd"]),              # a line unknown
])
def test_per_daemon_configs_refuse_what_they_cannot_place(conf: str, daemons: list[str]) -> None:
    assert per_daemon_configs(conf, daemons) is None


def test_route_map_lines_go_to_the_daemons_that_know_them() -> None:
    rendered = ("route-map FROM_BGP_PEER_V4 permit 10\n match ip address prefix-list PL_LoopbackV4\n"
                " set community 65000:1 additive\n set src 10.1.0.1\n on-match next\nexit\n")
    files = per_daemon_configs(rendered, ["zebra", "bgpd"])
    assert files is not None
    assert files["zebra"] == ("route-map FROM_BGP_PEER_V4 permit 10\n match ip address prefix-list PL_LoopbackV4\n"
                              " set src 10.1.0.1\n on-match next\nexit\n")
    assert files["bgpd"] == ("route-map FROM_BGP_PEER_V4 permit 10\n match ip address prefix-list PL_LoopbackV4\n"
                             " set community 65000:1 additive\n on-match next\nexit\n")


@pytest.mark.parametrize(("line", "owners"), [
    ("set ip next-hop 10.0.0.1", {"zebra", "bgpd"}),          # FRR's own (lib)
    ("set ip next-hop peer-address", {"bgpd"}),               # the longest match decides
    ("match ip next-hop prefix-len 24", {"zebra"}),
    ("match ip next-hop prefix-list PL", {"zebra", "bgpd"}),
    ("set ipv6 next-hop local fe80::1", {"zebra", "bgpd"}),
    ("set ipv6 next-hop prefer-global", {"bgpd"}),
])
def test_route_map_owners_longest_match(line: str, owners: set[str]) -> None:
    assert route_map_owners(line) == owners


def test_daemon_command_reads_its_config_file_only_when_given(tmp_path: Path) -> None:
    assert "-f" not in daemon_command("bgpd", "ns", tmp_path)
    cmd = daemon_command("bgpd", "ns", tmp_path, tmp_path / "bgpd.conf")
    assert cmd[cmd.index("-f") + 1] == str(tmp_path / "bgpd.conf")


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="vtysh (FRR) is not installed")
def test_prepared_boot_starts_each_daemon_with_its_file_and_bad_config_is_refused_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launched: list[list[str]] = []
    monkeypatch.setattr(frr_daemons, "wait_for_sockets", lambda *a, **k: None)
    monkeypatch.setattr(frr_daemons, "split_supported", lambda daemons: (list(daemons), []))
    boot = prepare_boot(tmp_path, ["zebra", "bgpd", "bfdd"], RENDERED)
    assert launched == []   # prepared: files written, nothing started
    assert boot.launch("ns", launched.append) == [] and boot.left == []
    assert [(argv[0].rsplit("/", 1)[1], argv[argv.index("-f") + 1]) for argv in launched] == [
        (d, str(tmp_path / f"{d}.conf")) for d in ("zebra", "bgpd", "bfdd")]
    assert (tmp_path / "frr.conf").read_text().startswith(RENDERED)
    assert "log timestamp precision 6" in (tmp_path / "bgpd.conf").read_text()   # the runtime lines too
    launched.clear()
    # bfdd left for later: its file is written, it starts only with launch_later
    boot = prepare_boot(tmp_path, ["zebra", "bgpd", "bfdd"], RENDERED, later=("bfdd",))
    assert boot.launch("ns", launched.append) == [] and boot.left == ["bfdd"]
    assert [argv[0].rsplit("/", 1)[1] for argv in launched] == ["zebra", "bgpd"]
    assert "bfd" in (tmp_path / "bfdd.conf").read_text()
    launched.clear()
    launch_later(tmp_path, "ns", ["bfdd"], launched.append)
    assert [(argv[0].rsplit("/", 1)[1], argv[argv.index("-f") + 1]) for argv in launched] == [
        ("bfdd", str(tmp_path / "bfdd.conf"))]
    with pytest.raises(RuntimeBackendError, match=r"FRR rejected .*frr\.conf.*Unknown command"):
        prepare_boot(tmp_path, ["zebra", "bgpd"], "hostname r1\nrouter bgp 1\n no such command\nexit\n")


def _summary(*states: str) -> dict[str, object]:
    return {"ipv4Unicast": {"peers": {f"10.0.0.{i}": {"state": s} for i, s in enumerate(states)}}}


@pytest.mark.parametrize(("answer", "established"), [
    (_summary("Established", "Established"), True),
    (_summary("Established", "Active"), False),
    ({}, True),                     # no BGP session configured
    ({"ipv4Unicast": {"peers": {}}, "ipv6Unicast": {"peers": {"fc00::1": {"state": "Connect"}}}}, False),
    (None, False),                  # bgpd does not answer
])
def test_bgp_established_needs_every_configured_session(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        answer: object, established: bool) -> None:
    asked: list[tuple[Path, str, str]] = []

    def ask_json(rundir: Path, daemon: str, command: str, timeout: float = 30) -> object:
        asked.append((rundir, daemon, command))
        return answer

    monkeypatch.setattr(frr_daemons, "ask_json", ask_json)
    assert bgp_established(tmp_path) is established
    assert asked == [(tmp_path, "bgpd", "show bgp summary json")]
