"""portsorch's flap counters (twin.switch.state.flaps) and `show interfaces flap` over them, held to
sonic-utilities 202505's own expected outputs (tests/interfaces_test.py, from its mock APPL_DB)."""

from __future__ import annotations

import calendar
import time
from pathlib import Path

from test_switch_shell import FakeSwitch

from twin.switch.cli import show_cli
from twin.switch.state.flaps import FlapCounter, stamp

T0 = calendar.timegm((2025, 1, 17, 0, 4, 42))   # Fri Jan 17 00:04:42 2025 UTC (sonic-utilities' mock says Sat)


def test_every_oper_change_counts_and_is_stamped_in_utc() -> None:
    flaps = FlapCounter()
    assert flaps.observe("Ethernet0", "down", T0) == {"flap_count": "0"}   # a port starts down, at 0
    assert flaps.observe("Ethernet0", "up", T0 + 10) == {"flap_count": "1", "last_up_time": stamp(T0 + 10)}
    assert flaps.observe("Ethernet0", "up", T0 + 20) == {"flap_count": "1", "last_up_time": stamp(T0 + 10)}
    assert flaps.observe("Ethernet0", "down", T0 + 30)["flap_count"] == "2"
    back = flaps.observe("Ethernet0", "up", T0 + 31)          # a link that went down and came back: two
    assert back == {"flap_count": "3", "last_down_time": "Fri Jan 17 00:05:12 2025",
                    "last_up_time": "Fri Jan 17 00:05:13 2025"}
    assert flaps.observe("Ethernet4", "up", T0)["flap_count"] == "1"        # found up: its first flap


def test_the_stamp_is_portsorch_s_format() -> None:
    assert stamp(T0) == "Fri Jan 17 00:04:42 2025"
    assert time.strptime(stamp(T0), "%a %b %d %H:%M:%S %Y")


def test_a_restarted_producer_goes_on_from_appl_db() -> None:
    flaps = FlapCounter()
    flaps.seed({"Ethernet0": {"oper_status": "up", "flap_count": "7", "last_up_time": "Sat Jan 20 00:04:42 2025"},
                "Ethernet4": {"oper_status": "up"}})
    assert flaps.observe("Ethernet0", "up", T0) == {"flap_count": "7", "last_up_time": "Sat Jan 20 00:04:42 2025"}
    assert flaps.observe("Ethernet0", "down", T0)["flap_count"] == "8"      # went down while it was away
    assert flaps.observe("Ethernet4", "up", T0)["flap_count"] == "1"        # no count kept: from 0


APPL = {"Ethernet0": {"oper_status": "down", "admin_status": "up", "flap_count": "3",
                      "last_up_time": "Sat Jan 18 00:08:42 2025", "last_down_time": "Sat Jan 17 00:04:42 2025"},
        "Ethernet128": {"oper_status": "up", "admin_status": "up", "flap_count": "7",
                        "last_up_time": "Sat Jan 20 00:04:42 2025", "last_down_time": "Sat Jan 19 00:04:42 2025"},
        "Ethernet136": {"oper_status": "up", "admin_status": "up"}}


def test_show_interfaces_flap_prints_what_sonic_prints(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path, appl=APPL)
    one = show_cli.run_show(fake, ["interfaces", "flap", "Ethernet0"])
    assert one.status == 0 and one.out == (
        "Interface      Flap Count  Admin    Oper    Link Down TimeStamp(UTC)    Link Up TimeStamp(UTC)\n"
        "-----------  ------------  -------  ------  --------------------------  ------------------------\n"
        "Ethernet0               3  Up       Down    Sat Jan 17 00:04:42 2025    Sat Jan 18 00:08:42 2025\n")
    never = show_cli.run_show(fake, ["interfaces", "flap", "Ethernet4"])
    assert never.out == (
        "Interface    Flap Count    Admin    Oper     Link Down TimeStamp(UTC)    Link Up TimeStamp(UTC)\n"
        "-----------  ------------  -------  -------  --------------------------  ------------------------\n"
        "Ethernet4    Never         Unknown  Unknown  Never                       Never\n")
    every = show_cli.run_show(fake, ["int", "flap"]).out.splitlines()
    assert [line.split()[0] for line in every[2:]] == ["Ethernet0", "Ethernet4", "Ethernet128", "Ethernet132",
                                                      "Ethernet136", "Ethernet140"]
    assert every[4].split()[:4] == ["Ethernet128", "7", "Up", "Up"] and every[6].split() == \
        ["Ethernet136", "Never", "Up", "Up", "Never", "Never"]
    bad = show_cli.run_show(fake, ["interfaces", "flap", "Ethernet5"])
    assert bad.status == 2 and "Error: Invalid interface name Ethernet5" in bad.err
