"""FRR's running config against what CONFIG_DB renders (twin.switch.frr.frr_drift), the frr-config check
that judges it (twin.checks.frr_config), the kernel read back in CONFIG_DB's words
(twin.switch.config.kernel_state), and a config daemon that reconciles from what the switch runs instead
of what programmed.json says (twin.switch.config.cfgmgr).

The running configs in data/frr_drift are FRR 8.4's own output (each daemon's `show running-config`
on a mini lab's leaf1) for the CONFIG_DBs beside them, in SONiC's two dialects."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from twin.checks.frr_config import FrrConfigInput, FrrRunsConfigDb
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr
from twin.switch.config import cfgmgr
from twin.switch.config.cfgmgr import ConfigDaemon
from twin.switch.config.kernel import kernel_changes
from twin.switch.config.kernel_state import observed
from twin.switch.frr.frr_drift import Drift, canonical, converge_lines, describe, drift, parse
from twin.switch.frr.leftover_writers import is_writer

DATA = Path(__file__).parent / "data" / "frr_drift"
NEIGHBOR = " neighbor 10.0.0.64 description spine1\n"


def _config(dialect: str) -> ConfigDb:
    db: ConfigDb = json.loads((DATA / f"leaf1-{dialect}.json").read_text())
    return db


def _running(dialect: str) -> str:
    return (DATA / f"leaf1-{dialect}.running").read_text()


def _messages(found: list[Drift], config: ConfigDb) -> list[str]:
    return [describe(d, config) for d in found]


@pytest.mark.parametrize("dialect", ["frrcfgd", "bgpcfgd"])
def test_frr_running_what_either_dialect_renders_is_no_drift(dialect: str) -> None:
    """FRR shows lines in its own form (sequence numbers on lists, `address-family ipv4 unicast`,
    `network` inside the address family, peer-group members outside it, maximum-paths 256 hidden)."""
    assert drift(render_frr(_config(dialect)), _running(dialect)) == []


def test_an_empty_address_family_is_no_drift() -> None:
    """SONiC's frrcfgd templates render empty `address-family ipv6 unicast` and `l2vpn evpn` blocks,
    which FRR does not show."""
    rendered = render_frr(_config("frrcfgd")).replace(
        " exit-address-family\n", " exit-address-family\n address-family ipv6 unicast\n exit-address-family\n"
                                   " address-family l2vpn evpn\n exit-address-family\n", 1)
    assert "address-family l2vpn evpn" in rendered
    assert drift(rendered, _running("frrcfgd")) == []


def test_a_neighbor_shut_down_behind_config_db_is_named_by_its_admin_status() -> None:
    config = _config("frrcfgd")
    running = _running("frrcfgd").replace(NEIGHBOR, NEIGHBOR + " neighbor 10.0.0.64 shutdown\n")
    found = drift(render_frr(config), running)
    assert _messages(found, config) == [
        "BGP_NEIGHBOR|default|10.0.0.64 admin_status=up but FRR has 'neighbor 10.0.0.64 shutdown' "
        "(in 'router bgp 65101')"]
    assert converge_lines(found) == ["router bgp 65101", " no neighbor 10.0.0.64 shutdown", "exit"]


def test_a_neighbor_config_db_shuts_down_that_frr_runs_is_named() -> None:
    config = _config("frrcfgd")
    config["BGP_NEIGHBOR"]["default|10.0.0.64"]["admin_status"] = "down"
    found = drift(render_frr(config), _running("frrcfgd"))
    assert _messages(found, config) == [
        "BGP_NEIGHBOR|default|10.0.0.64 admin_status=down but FRR has no 'neighbor 10.0.0.64 shutdown' "
        "(in 'router bgp 65101')"]
    assert converge_lines(found) == ["router bgp 65101", " neighbor 10.0.0.64 shutdown", "exit"]


def test_lines_in_an_address_family_are_sent_inside_it_and_fields_named() -> None:
    config = _config("frrcfgd")
    running = (_running("frrcfgd").replace("  maximum-paths 2\n", "  network 10.9.9.0/24\n")
               .replace(" neighbor 10.0.0.66 description spine2\n", ""))
    found = drift(render_frr(config), running)
    assert _messages(found, config) == [
        "BGP_NEIGHBOR|default|10.0.0.66 name=spine2 but FRR has no 'neighbor 10.0.0.66 description spine2' "
        "(in 'router bgp 65101')",
        "BGP_GLOBALS_AF|default|ipv4_unicast max_ebgp_paths=2 but FRR has no 'maximum-paths 2' "
        "(in 'router bgp 65101 > address-family ipv4 unicast')",
        "FRR has 'network 10.9.9.0/24' (in 'router bgp 65101 > address-family ipv4 unicast'), "
        "which CONFIG_DB does not render"]
    assert converge_lines(found) == [
        "router bgp 65101", " address-family ipv4 unicast", "  no network 10.9.9.0/24", " exit",
        " neighbor 10.0.0.66 description spine2", " address-family ipv4 unicast", "  maximum-paths 2", " exit",
        "exit"]


# -- converging, on a model of FRR: a set of lines in their blocks ------------------------------

def _apply(have: set[tuple[str, ...]], lines: list[str]) -> set[tuple[str, ...]]:
    """What a set-of-lines FRR holds after `lines` (in FRR's form): a line adds itself, `no X`
    removes X and, for a block, everything in it."""
    have = set(have)
    stack: list[str] = []
    for raw in lines:
        depth = (len(raw) - len(raw.lstrip()))
        del stack[depth:]
        line = raw.strip()
        if line == "exit":
            continue
        if line.startswith("no "):
            gone = canonical((*stack, line[3:]))
            assert gone is not None
            have = {p for p in have if p[:len(gone)] != gone}
        else:
            added = canonical((*stack, line))
            if added is not None:
                have.add(added)
            stack.append(line)
    return have


def _keys(text: str) -> set[tuple[str, ...]]:
    return {k for k, _ in parse(text)}


@pytest.mark.parametrize("edit", [
    lambda t: t.replace(NEIGHBOR, NEIGHBOR + " neighbor 10.0.0.64 shutdown\n"),
    lambda t: t.replace(" neighbor 10.0.0.66 bfd\n", ""),
    lambda t: t.replace("  network 10.1.4.1/32\n", "  network 10.7.0.0/16\n"),
    lambda t: t + "route-map STRAY permit 5\n set local-preference 7\nexit\nip prefix-list X seq 5 permit 1.2.3.0/24\n",
    lambda t: t.replace("router bgp 65101\n", "router bgp 65101\n neighbor 10.9.9.9 remote-as 7\n"),
])
def test_converge_lines_bring_frr_to_what_config_db_renders(edit: Any) -> None:
    rendered = render_frr(_config("frrcfgd"))
    running = edit(_running("frrcfgd"))
    found = drift(rendered, running)
    assert found
    assert _apply(_keys(running), converge_lines(found)) == _keys(rendered)


def test_a_dialect_switch_leaves_nothing_of_the_other_dialect() -> None:
    """From bgpcfgd's config to frrcfgd's: its route-maps, lists and community lists go too."""
    rendered = render_frr(_config("frrcfgd"))
    found = drift(rendered, _running("bgpcfgd"))
    lines = converge_lines(found)
    assert "no route-map CHECK_IDF_ISOLATION permit 10" in lines
    assert "no ip prefix-list DEFAULT_IPV4 seq 5 permit 0.0.0.0/0" in lines
    assert not any("set community" in line for line in lines), "a removed route-map takes its lines with it"


# -- the check ------------------------------------------------------------------------------------

def test_the_check_names_each_switch_and_each_line() -> None:
    config = _config("frrcfgd")
    drifted = _running("frrcfgd").replace(NEIGHBOR, NEIGHBOR + " neighbor 10.0.0.64 shutdown\n")
    facts = {"config_db": config, "rendered": render_frr(config)}
    check = FrrRunsConfigDb(FrrConfigInput(switches=["leaf1", "leaf2", "leaf3"]))
    result = check.evaluate({"leaf1": {"frr_config": {**facts, "running": drifted}},
                             "leaf2": {"frr_config": {**facts, "running": _running("frrcfgd")}},
                             "leaf3": {"frr_config": {"running": None, "why": "FRR's daemons do not answer"}}})
    assert result.status == "failure"
    assert [(i.subject, i.status, i.message) for i in result.items] == [
        ("leaf1", "failure", "BGP_NEIGHBOR|default|10.0.0.64 admin_status=up but FRR has "
                             "'neighbor 10.0.0.64 shutdown' (in 'router bgp 65101')"),
        ("leaf2", "success", "FRR runs what CONFIG_DB renders"),
        ("leaf3", "skipped", "FRR's running config not compared: FRR's daemons do not answer")]


# -- the kernel, read back ------------------------------------------------------------------------

def _link(name: str, mtu: int, up: bool, *addrs: str, master: str | None = None) -> dict[str, Any]:
    info = [{"family": "inet6" if ":" in a else "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
             "scope": "link" if a.startswith("fe80") else "global"} for a in addrs]
    link: dict[str, Any] = {"ifname": name, "mtu": mtu, "flags": ["BROADCAST", *(["UP"] if up else [])],
                            "addr_info": info}
    if master:
        link["master"] = master
    return link


def test_the_kernel_is_converged_from_what_it_holds() -> None:
    config = _config("frrcfgd")
    links = [_link("lo", 65536, True, "127.0.0.1/8", "10.1.4.1/32", "::1/128"),
             _link("eth0", 1500, True, "172.20.1.4/24"),
             _link("Ethernet0", 1500, True, "fe80::1/64"),                       # MTU lost, address gone
             _link("Ethernet128", 9100, False, "10.0.0.65/31", "10.99.0.1/24"),  # down, a stray address
             _link("Ethernet132", 9100, True, "10.0.0.67/31")]
    assert kernel_changes(observed(links, config), config) == [
        "link set dev Ethernet0 mtu 9100", "link set dev Ethernet128 up",
        "address del 10.99.0.1/24 dev Ethernet128", "address add 10.2.0.0/31 dev Ethernet0"]


def test_a_kernel_that_holds_what_config_db_says_needs_nothing() -> None:
    config = _config("frrcfgd")
    links = [_link("lo", 65536, True, "127.0.0.1/8", "10.1.4.1/32"), _link("Ethernet0", 9100, True, "10.2.0.0/31"),
             _link("Ethernet128", 9100, True, "10.0.0.65/31"), _link("Ethernet132", 9100, True, "10.0.0.67/31")]
    assert kernel_changes(observed(links, config), config) == []


def test_vlan_members_read_back_tagged_or_not() -> None:
    config: ConfigDb = {"PORT": {"Ethernet0": {"admin_status": "up"}, "Ethernet4": {"admin_status": "up"}},
                        "VLAN": {"Vlan10": {}}, "VLAN_MEMBER": {"Vlan10|Ethernet0": {"tagging_mode": "untagged"}}}
    links = [_link("eth1", 9100, True, master="Vlan10"), _link("eth2.10", 9100, True, master="Vlan10"),
             _link("Vlan10", 9100, True, "10.5.0.1/24"), _link("eth2", 9100, True)]
    seen = observed(links, config, {"Ethernet0": "eth1", "Ethernet4": "eth2"})
    assert seen["VLAN_MEMBER"] == {"Vlan10|Ethernet0": {"tagging_mode": "untagged"},
                                   "Vlan10|Ethernet4": {"tagging_mode": "tagged"}}
    assert kernel_changes(seen, config, {"Ethernet0": "eth1", "Ethernet4": "eth2"}) == [
        "link delete dev eth2.10", "address del 10.5.0.1/24 dev Vlan10"]


# -- leftover writers -----------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "writer"), [
    (["vtysh", "--vty_socket", "/run/twin/l/nodes/leaf1", "-f", "/run/twin/l/nodes/leaf1/tmpx.conf"], True),
    (["ip", "-n", "tw.l.leaf1", "-force", "-b", "-"], True),
    (["/usr/bin/python3", "/usr/lib/frr/frr-reload.py", "--reload", "--vty_socket", "/run/twin/l/nodes/leaf1"], True),
    (["vtysh", "--vty_socket", "/run/twin/other/nodes/leaf1", "-c", "show bgp summary json"], False),
    (["ip", "-n", "tw.other.leaf1", "link"], False),
    (["bgpd", "-A", "127.0.0.1", "--vty_socket", "/run/twin/l/nodes/leaf1"], False),
    (["vtysh", "--vty_socket", "/run/twin/l/nodes/leaf1"], False),           # a user's interactive vtysh
    (["ip", "-n", "tw.l.leaf1", "monitor", "link"], False),
])
def test_leftover_writers_are_the_programs_that_program_these_switches(argv: list[str], writer: bool) -> None:
    assert is_writer(argv, {"/run/twin/l/nodes/leaf1"}, {"tw.l.leaf1"}) is writer


# -- the config daemon ------------------------------------------------------------------------------

class _Db:
    def __init__(self, config: ConfigDb) -> None:
        self.config = config

    def get_config(self) -> ConfigDb:
        return copy.deepcopy(self.config)


def test_a_restarted_daemon_converges_frr_whatever_programmed_json_says(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug: an agent killed after telling FRR `neighbor X shutdown` and before writing
    programmed.json; CONFIG_DB (put back to the saved config) and programmed.json agree, FRR does not."""
    config = _config("frrcfgd")
    (tmp_path / "programmed.json").write_text(json.dumps(config))
    frr = {"running": _running("frrcfgd").replace(NEIGHBOR, NEIGHBOR + " neighbor 10.0.0.64 shutdown\n")}
    sent: list[list[str]] = []

    def vtysh(lines: list[str], tolerant: bool) -> None:
        sent.append(lines)
        if " no neighbor 10.0.0.64 shutdown" in lines:
            frr["running"] = _running("frrcfgd")

    links = [_link("lo", 65536, True, "10.1.4.1/32"), _link("Ethernet0", 9100, True, "10.2.0.0/31"),
             _link("Ethernet128", 9100, True, "10.0.0.65/31"), _link("Ethernet132", 9100, True, "10.0.0.67/31")]
    monkeypatch.setattr(cfgmgr, "running_config", lambda rundir: frr["running"])
    monkeypatch.setattr(cfgmgr, "read_links", lambda netns: links)
    daemon = ConfigDaemon("leaf1", "tw.t.leaf1", tmp_path, _Db(config), reconcile=True)  # type: ignore[arg-type]
    assert daemon.programmed == config
    daemon._vtysh = vtysh  # type: ignore[method-assign]
    daemon._kernel = lambda lines, tolerant: sent.append(lines) if lines else None  # type: ignore[method-assign]
    daemon.start()
    assert sent == [["router bgp 65101", " no neighbor 10.0.0.64 shutdown", "exit"]]
    assert daemon.started.is_set()
    assert drift(render_frr(config), frr["running"]) == []


def test_a_daemon_started_with_the_switch_trusts_what_boot_programmed(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """At `twin up` FRR may not run yet when the daemon starts: it is not read."""
    config = _config("frrcfgd")
    (tmp_path / "programmed.json").write_text(json.dumps(config))
    monkeypatch.setattr(cfgmgr, "running_config", lambda rundir: pytest.fail("FRR read at boot"))
    daemon = ConfigDaemon("leaf1", "tw.t.leaf1", tmp_path, _Db(config))  # type: ignore[arg-type]
    daemon._vtysh = lambda lines, tolerant: pytest.fail(f"sent {lines}")  # type: ignore[method-assign]
    daemon._kernel = lambda lines, tolerant: pytest.fail(f"sent {lines}") if lines else None  # type: ignore[method-assign]
    daemon.start()
    assert daemon.started.is_set()


def test_a_dialect_change_also_removes_what_the_other_dialect_left(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """bgpcfgd -> frrcfgd: BGP is rendered whole again, then bgpcfgd's route-maps and lists, outside
    BGP, are removed (SONiC restarts the bgp container for such a change)."""
    classic, unified = _config("bgpcfgd"), _config("frrcfgd")
    (tmp_path / "programmed.json").write_text(json.dumps(classic))
    leftovers = "\n".join(line for line in _running("bgpcfgd").split("!\n")
                          if line.startswith(("route-map", "ip prefix-list", "bgp community-list")))
    frr = {"running": _running("frrcfgd") + leftovers}
    sent: list[list[str]] = []

    def vtysh(lines: list[str], tolerant: bool) -> None:
        sent.append(lines)
        if "no route-map CHECK_IDF_ISOLATION permit 10" in lines:
            frr["running"] = _running("frrcfgd")

    monkeypatch.setattr(cfgmgr, "running_config", lambda rundir: frr["running"])
    daemon = ConfigDaemon("leaf1", "tw.t.leaf1", tmp_path, _Db(unified))  # type: ignore[arg-type]
    daemon._vtysh = vtysh  # type: ignore[method-assign]
    daemon._kernel = lambda lines, tolerant: None  # type: ignore[method-assign]
    daemon.program(unified)
    assert sent[0] == ["no router bgp"] and sent[1] == render_frr(unified).splitlines()
    assert "no route-map CHECK_IDF_ISOLATION permit 10" in sent[2] and len(sent) == 3
    assert drift(render_frr(unified), frr["running"]) == []
