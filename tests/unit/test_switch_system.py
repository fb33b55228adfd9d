"""A switch's own system as SONiC's tools read it: /etc/hostname from DEVICE_METADATA, an uptime counted
from the switch's boot, `date`, `uptime`, and `cat`/`awk` of its system files, so that sonic-mgmt's
get_up_time reads the switch's boot and not the host's."""

from __future__ import annotations

import copy
import datetime
import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_cfgmgr_cache import BOOT, FakeDb, _daemon

from twin.switch.cli.cli_filters import Filter
from twin.switch.cli.cli_output import Output
from twin.switch.cli.shell import Clock, Piped, ReadFile, Switch, Text, translate
from twin.switch.cli.sshd import SSH_VERSION, filtered
from twin.switch.cli.system_cli import pretty_uptime, read_file, run_date, run_uptime, uptime_line
from twin.switch.system_files import (
    BOOTED,
    HOSTNAME_FILE,
    booted_at,
    mark_booted,
    proc_uptime,
    uptime_seconds,
    write_hostname,
)

NOW = 1_795_000_000.0   # 2026-11-18 11:06:40 UTC
SONIC_SSH_REGEX = re.compile(r"OpenSSH_[\w\.]+ Debian")   # sonic-mgmt tests/common/reboot.py


def _switch(tmp_path: Path) -> Switch:
    return Switch(name="leaf1", netns="tw.t.leaf1", rundir=tmp_path)


def _run(line: str, tmp_path: Path, now: float) -> str:
    """One line as the switch's SSH session performs it (sshd.Session.perform), with the clock at `now`."""
    piped = translate(line, _switch(tmp_path))
    action, filters = (piped.action, piped.filters) if isinstance(piped, Piped) else (piped, ())
    if isinstance(action, Clock):
        output = run_date(list(action.args), now) if action.tool == "date" else \
            run_uptime(list(action.args), tmp_path, now)
    elif isinstance(action, ReadFile):
        output = read_file(action.path, tmp_path, now)
    else:
        assert isinstance(action, Text), action
        output = action.output
    result = filtered(output, filters)
    assert result.status == 0, result
    return result.out


# -- /etc/hostname ----------------------------------------------------------------------------------------

def test_hostname_file_is_device_metadatas_or_sonic(tmp_path: Path) -> None:
    write_hostname(tmp_path, {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}})
    assert (tmp_path / HOSTNAME_FILE).read_text() == "leaf1\n"
    assert os.stat(tmp_path / HOSTNAME_FILE).st_mode & 0o777 == 0o644
    write_hostname(tmp_path, {})
    assert (tmp_path / HOSTNAME_FILE).read_text() == "sonic\n", "hostname-config.sh's default"


def test_hostname_file_is_not_rewritten_when_it_already_says_so(tmp_path: Path) -> None:
    config = {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}}
    write_hostname(tmp_path, config)
    path = tmp_path / HOSTNAME_FILE
    os.utime(path, (1000, 1000))
    write_hostname(tmp_path, config)
    assert path.stat().st_mtime == 1000


def test_the_config_daemon_keeps_etc_hostname_with_device_metadata(tmp_path: Path) -> None:
    sent: list[list[str]] = []
    db = FakeDb({**BOOT, "DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}})
    daemon = _daemon(tmp_path, db, sent)
    daemon.programmed = copy.deepcopy(db.get_config())
    daemon.resync()
    assert (tmp_path / HOSTNAME_FILE).read_text() == "leaf1\n", "written at the daemon's start"
    db.raw["DEVICE_METADATA|localhost"]["hostname"] = "leaf1-renamed"
    daemon.changed({"DEVICE_METADATA|localhost"})
    assert (tmp_path / HOSTNAME_FILE).read_text() == "leaf1-renamed\n"


# -- the boot time and the switch's uptime ------------------------------------------------------------------

def test_uptime_counts_from_the_switchs_boot(tmp_path: Path) -> None:
    mark_booted(tmp_path, NOW - 90.5)
    assert booted_at(tmp_path) == pytest.approx(NOW - 90.5)
    assert uptime_seconds(tmp_path, NOW) == pytest.approx(90.5)
    up, idle = proc_uptime(tmp_path, NOW).split()
    assert float(up) == pytest.approx(90.5) and float(idle) >= 0
    mark_booted(tmp_path, NOW - 2)   # a reboot
    assert uptime_seconds(tmp_path, NOW) == pytest.approx(2)


def test_a_switch_without_the_record_has_the_hosts_uptime(tmp_path: Path) -> None:
    host = float(Path("/proc/uptime").read_text().split()[0])
    assert not (tmp_path / BOOTED).exists()
    assert uptime_seconds(tmp_path) == pytest.approx(host, abs=5)


def test_uptime_formats_as_procps() -> None:
    assert pretty_uptime(0) == "up 0 minutes"
    assert pretty_uptime(3 * 86400 + 3600 + 120) == "up 3 days, 1 hour, 2 minutes"
    assert re.fullmatch(r" \d\d:\d\d:\d\d up 5 min,  1 user,  load average: [\d.]+, [\d.]+, [\d.]+",
                        uptime_line(5 * 60 + 7, NOW))
    assert " up 1 day,  2:03, " in uptime_line(86400 + 2 * 3600 + 3 * 60, NOW)


def test_uptime_options(tmp_path: Path) -> None:
    mark_booted(tmp_path, NOW - 7200)
    since = datetime.datetime.fromtimestamp(NOW - 7200).strftime("%Y-%m-%d %H:%M:%S")
    assert run_uptime(["-s"], tmp_path, NOW).out == f"{since}\n"
    assert run_uptime(["-p"], tmp_path, NOW).out == "up 2 hours\n"
    assert run_uptime(["-x"], tmp_path, NOW).status == 1


def test_date_formats_and_refuses_to_set_the_clock() -> None:
    assert run_date(["+%Y-%m-%d %H:%M:%S", "-u"], NOW).out == \
        datetime.datetime.fromtimestamp(NOW, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S") + "\n"
    assert run_date(["-u"], NOW).out.endswith(" UTC 2026\n")
    assert run_date(["-s", "2020-01-01"], NOW).status == 1
    assert run_date(["--bogus"], NOW).status == 1


# -- the shell's words for them ---------------------------------------------------------------------------

def test_sonic_mgmts_commands_translate(tmp_path: Path) -> None:
    sw = _switch(tmp_path)
    assert translate('date +"%Y-%m-%d %H:%M:%S" -u', sw) == Clock("date", ("+%Y-%m-%d %H:%M:%S", "-u"))
    assert translate("uptime -s", sw) == Clock("uptime", ("-s",))
    assert translate("awk '{print $1}' /proc/uptime", sw) == \
        Piped(ReadFile("/proc/uptime"), (Filter("awk", ("{print $1}",)),))
    assert translate("cat /etc/hostname | wc -l", sw) == Piped(ReadFile("/etc/hostname"), (Filter("wc", ("-l",)),))


@pytest.mark.parametrize("line", [
    "cat /etc/shadow", "cat", "cat /proc/uptime /etc/shadow", "awk '{print $1}' /etc/shadow",
    "awk 'BEGIN{system(\"id\")}' /proc/uptime", "awk '{print $1}'", "show version | awk '{system(\"id\")}'",
])
def test_files_and_programs_beyond_the_switchs_system_files_are_refused(line: str, tmp_path: Path) -> None:
    action = translate(line, _switch(tmp_path))
    assert isinstance(action, Text) and action.output.status in (1, 2), action


def test_sonic_mgmts_get_up_time_reads_the_switchs_boot(tmp_path: Path) -> None:
    """get_up_time(utc_timezone=True): `date -u` less /proc/uptime, as the switch's shell answers them."""
    mark_booted(tmp_path, NOW - 3600.25)
    now = datetime.datetime.strptime(_run('date +"%Y-%m-%d %H:%M:%S" -u', tmp_path, NOW).strip(), "%Y-%m-%d %H:%M:%S")
    uptime = float(_run("awk '{print $1}' /proc/uptime", tmp_path, NOW).strip())
    booted = now - datetime.timedelta(seconds=uptime)
    expected = datetime.datetime.fromtimestamp(NOW - 3600.25, datetime.UTC).replace(tzinfo=None)
    assert abs((booted - expected).total_seconds()) < 1.01
    mark_booted(tmp_path, NOW + 60)   # rebooted a minute later
    later = datetime.datetime.strptime(_run('date +"%Y-%m-%d %H:%M:%S" -u', tmp_path, NOW + 90).strip(),
                                       "%Y-%m-%d %H:%M:%S") - \
        datetime.timedelta(seconds=float(_run("awk '{print $1}' /proc/uptime", tmp_path, NOW + 90).strip()))
    assert later > booted, "sonic-mgmt's 'uptime did not reset'"


def test_cat_reads_the_switchs_files(tmp_path: Path) -> None:
    write_hostname(tmp_path, {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}})
    assert _run("cat /etc/hostname", tmp_path, NOW) == "leaf1\n"
    missing: Any = read_file("/etc/sonic/config_db.json", tmp_path, NOW)
    assert isinstance(missing, Output) and missing.status == 1 and "No such file" in missing.err


def test_the_ssh_banner_is_sonics_sshds() -> None:
    """What sonic-mgmt's reboot waits for on the SSH port (tests/common/reboot.py SONIC_SSH_REGEX)."""
    assert SONIC_SSH_REGEX.search(f"SSH-2.0-{SSH_VERSION}")
