"""The switch's system commands that read its clock and boot time: `date`, `uptime`, and its system
files (`cat FILE`, `awk PROGRAM FILE`).

sonic-mgmt reads a DUT's boot time as `date +"%Y-%m-%d %H:%M:%S" -u` less `awk '{print $1}' /proc/uptime`
(tests/common/devices/sonic.py: get_up_time), or as `uptime -s`. A twin switch's clock is the host's; its
uptime counts from its own boot (twin.switch.system_files), not the host's. The files are the few a
switch's system holds that SONiC's tests read: /proc/uptime, /etc/hostname and /etc/sonic/config_db.json.
Pure but for the clock and the files, which are arguments.
"""

from __future__ import annotations

import datetime
import time
from pathlib import Path

from twin.switch.cli.cli_output import Output
from twin.switch.system_files import HOSTNAME_FILE, proc_uptime, uptime_seconds

FILES = ("/proc/uptime", "/etc/hostname", "/etc/sonic/config_db.json")
DATE_DEFAULT = "%a %b %e %H:%M:%S %Z %Y"     # `date` in the C locale
DATE_HELP = "Try 'date --help' for more information.\n"
UPTIME_USAGE = ("\nUsage:\n uptime [options]\n\nOptions:\n -p, --pretty   show uptime in pretty format\n"
                " -h, --help     display this help and exit\n -s, --since    system up since\n"
                " -V, --version  output version information and exit\n\nFor more details see uptime(1).\n")


def run_date(args: list[str], now: float | None = None) -> Output:
    """`date [-u] [+FORMAT]` (coreutils'); setting the clock is refused as for a user without the right."""
    utc, fmt = False, DATE_DEFAULT
    for arg in args:
        if arg in ("-u", "--utc", "--universal"):
            utc = True
        elif arg.startswith("+"):
            fmt = arg[1:]
        elif arg in ("-s", "--set") or arg.startswith("--set="):
            return Output(err="date: cannot set date: Operation not permitted\n", status=1)
        elif arg.startswith("-"):
            return Output(err=f"date: invalid option -- '{arg.lstrip('-')[:1]}'\n{DATE_HELP}", status=1)
        else:
            return Output(err=f"date: invalid date '{arg}'\n", status=1)
    when = time.time() if now is None else now
    moment = (datetime.datetime.fromtimestamp(when, datetime.UTC) if utc
              else datetime.datetime.fromtimestamp(when).astimezone())
    return Output(out=moment.strftime(fmt) + "\n")


def _load() -> str:
    try:
        return ", ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "0.00, 0.00, 0.00"


def uptime_line(seconds: float, now: float | None = None) -> str:
    """procps' `uptime`: ' HH:MM:SS up [D days, ]H:MM,  1 user,  load average: ...' (N min under an hour)."""
    secs = int(seconds)
    days, hours, minutes = secs // 86400, secs % 86400 // 3600, secs % 3600 // 60
    up = (f"{days} day{'s' if days != 1 else ''}, " if days else "") + \
        (f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min")
    clock = time.strftime("%H:%M:%S", time.localtime(time.time() if now is None else now))
    return f" {clock} up {up},  1 user,  load average: {_load()}"


def pretty_uptime(seconds: float) -> str:
    """`uptime -p`: 'up 1 week, 2 days, 3 hours, 4 minutes' ('up 0 minutes' at first)."""
    secs = int(seconds)
    parts = [(secs // 604800, "week"), (secs % 604800 // 86400, "day"), (secs % 86400 // 3600, "hour"),
             (secs % 3600 // 60, "minute")]
    words = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in parts if n]
    return f"up {', '.join(words) or '0 minutes'}"


def run_uptime(args: list[str], rundir: Path, now: float | None = None) -> Output:
    """`uptime [-p | -s]` of the switch."""
    when = time.time() if now is None else now
    seconds = uptime_seconds(rundir, when)
    if not args:
        return Output(out=uptime_line(seconds, when) + "\n")
    if args in (["-p"], ["--pretty"]):
        return Output(out=pretty_uptime(seconds) + "\n")
    if args in (["-s"], ["--since"]):
        return Output(out=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when - seconds)) + "\n")
    if args in (["-h"], ["--help"]):
        return Output(out=UPTIME_USAGE)
    return Output(err=f"uptime: invalid option -- '{args[0].lstrip('-')[:1]}'\n{UPTIME_USAGE}", status=1)


def read_file(path: str, rundir: Path, now: float | None = None) -> Output:
    """One of the switch's FILES as `cat` prints it."""
    if path == "/proc/uptime":
        return Output(out=proc_uptime(rundir, now))
    local = {"/etc/hostname": HOSTNAME_FILE, "/etc/sonic/config_db.json": "config_db.json"}.get(path)
    if local is None:
        return Output(err=f"cat: {path}: reading it is not available on this switch (it reads "
                          f"{', '.join(FILES)})\n", status=1)
    try:
        return Output(out=(rundir / local).read_text())
    except FileNotFoundError:
        return Output(err=f"cat: {path}: No such file or directory\n", status=1)
