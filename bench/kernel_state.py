"""What an earlier bench run can leave behind that skews the next one, read from the kernel.

- Processes still alive in a network namespace other than the host's (the bench's own) (an earlier floor's or lab's
  bgpd, zebra, redis-server, ...), and named namespaces (`ip netns`): a run must start without them.
- Namespaces the kernel is still destroying: `ip netns delete` returns at once and the kernel tears
  the namespace and its veths down later (its cleanup_net work), holding the rtnl lock that every
  `ip` command of the next run needs. At 64 x 128 a run leaves about 200 namespaces and 8,000 veth
  pairs. Nothing in /proc counts namespaces being destroyed (slabinfo's net_namespace count, tried,
  did not fall back to its level before a run even 10 minutes after it), but a kernel worker running
  that work is named for it (`kworker/u8:1+netns`: `+` and the workqueue it executes). `wait_for_rtnl`
  waits until no worker runs it and a command taking the rtnl lock (`ip link show dev lo`) answers at
  once, several times in a row. (After a 64 x 128 lab with egress queues, that worker ran for 240 s
  of CPU: each tc filter block removed is looked up in a list of every block on the host.)
- The kernel's neighbour tables (shared by every namespace) refusing entries: `table_fulls` of
  /proc/net/stat/arp_cache and ndisc_cache, summed over CPUs, rises when a table was full
  ("neighbor table overflow"). A run during which it rose did not measure what it claims.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

NEIGH_STATS = {"ipv4": Path("/proc/net/stat/arp_cache"), "ipv6": Path("/proc/net/stat/ndisc_cache")}
RTNL_QUICK_MS = 50.0   # `ip link show dev lo` on an idle machine: ~3 ms
RTNL_IN_A_ROW = 4


def table_fulls(text: str) -> int:
    """The table_fulls column of one /proc/net/stat/*_cache file (one hex row per CPU), summed."""
    lines = text.splitlines()
    if not lines:
        return 0
    column = lines[0].split().index("table_fulls")
    return sum(int(row.split()[column], 16) for row in lines[1:] if row.strip())


def neighbour_table_fulls() -> dict[str, int]:
    """Times each family's neighbour table was full since boot."""
    out = {}
    for family, path in NEIGH_STATS.items():
        try:
            out[family] = table_fulls(path.read_text())
        except (OSError, ValueError):
            out[family] = 0
    return out


def netns_cleanup_running() -> bool:
    """Whether a kernel worker is destroying namespaces now (its name says `+netns`)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if "+netns" in (entry / "comm").read_text():
                    return True
            except OSError:
                continue
    return False


def rtnl_ms() -> float:
    """Milliseconds `ip link show dev lo` takes: the process's start plus the rtnl lock's wait."""
    start = time.monotonic()
    subprocess.run(["ip", "link", "show", "dev", "lo"], capture_output=True, check=False)
    return (time.monotonic() - start) * 1000


def processes_in_other_namespaces() -> list[str]:
    """`PID COMM` of every process whose network namespace is not the host's (the bench's own: PID 1's
    may not be readable, as in a VM whose init hides its namespaces)."""
    try:
        host = os.readlink("/proc/self/ns/net")
    except OSError:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns/net") != host:
                found.append(f"{entry.name} {(entry / 'comm').read_text().strip()}")
        except OSError:
            continue   # gone meanwhile, or a kernel thread
    return sorted(found, key=lambda s: int(s.split()[0]))


def named_namespaces() -> list[str]:
    proc = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return sorted(line.split()[0] for line in proc.stdout.splitlines() if line.strip())


def wait_for_rtnl(probe: Callable[[], float] = rtnl_ms, quick_ms: float = RTNL_QUICK_MS,
                  in_a_row: int = RTNL_IN_A_ROW, timeout: float = 900.0, poll: float = 0.5,
                  cleaning: Callable[[], bool] = netns_cleanup_running) -> dict[str, float]:
    """Wait until `in_a_row` probes in a row find no namespace being destroyed and answer within
    `quick_ms` (an earlier run's namespaces are gone), at most `timeout` seconds: the seconds waited
    and the slowest probe."""
    start, quick, slowest = time.monotonic(), 0, 0.0
    while time.monotonic() - start < timeout:
        took = probe()
        slowest = max(slowest, took)
        quick = quick + 1 if took <= quick_ms and not cleaning() else 0
        if quick >= in_a_row:
            break
        time.sleep(poll)
    return {"seconds_waiting_for_rtnl": round(time.monotonic() - start, 2), "slowest_rtnl_probe_ms": round(slowest, 1)}


def clean_start() -> dict[str, object]:
    """Before a run: wait for the kernel to be done with an earlier run's namespaces, then say what
    an earlier run left (processes in other namespaces, named namespaces)."""
    return {**wait_for_rtnl(), "processes_in_other_namespaces": processes_in_other_namespaces(),
            "named_namespaces": named_namespaces()}


def is_clean(start: dict[str, object]) -> bool:
    return not (start["processes_in_other_namespaces"] or start["named_namespaces"])
