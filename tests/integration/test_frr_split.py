"""twin.switch.frr.frr_split against FRR itself: each route-map line twin knows goes to the daemons that
vtysh sends it to, read back from a real zebra's and bgpd's running-config."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import unique

from twin.host.processes import stop_processes
from twin.switch.frr.frr_daemons import FRR_BIN, daemon_command, vtysh, wait_for_sockets
from twin.switch.frr.frr_split import ROUTE_MAP_LINES, route_map_owners

# One line for each entry of ROUTE_MAP_LINES (the test below checks none is missing)
SAMPLES = [
    "description hello", "on-match next", "call OTHER", "continue 20",
    "match interface eth0", "match tag 5", "match metric 5", "match ip address prefix-list PL",
    "match ipv6 address prefix-list P6", "match ip next-hop prefix-list PL", "set metric 10", "set tag 7",
    "set ip next-hop 10.0.0.1", "set ipv6 next-hop local fe80::1",
    "set src 10.1.0.2", "match source-protocol bgp", "match source-instance 5",
    "match ip address prefix-len 24", "match ipv6 address prefix-len 64", "match ip next-hop prefix-len 24",
    "match ip next-hop address 10.0.0.1", "match ip route-source RS", "match ipv6 next-hop prefix-list P6",
    "match community CL", "match large-community LCL", "match extcommunity ECL", "match as-path AP",
    "match peer 10.0.0.1", "match origin igp", "match local-preference 100",
    "match mac address MACL", "match probability 50", "match source-vrf red",
    "set community 65000:1 additive", "set comm-list CL delete", "set large-community 1:2:3",
    "set large-comm-list LCL delete", "set extcommunity bandwidth 100", "set local-preference 200",
    "set weight 5", "set as-path prepend 65000", "set origin igp", "set originator-id 10.0.0.1",
    "set aggregator as 65000 10.0.0.1", "set atomic-aggregate", "set ip next-hop peer-address",
    "set ip next-hop unchanged", "set ipv6 next-hop prefer-global", "set label-index 5", "set distance 50",
]
# how running-config shows a line where it is not as written
SHOWN = {"continue 20": "on-match goto 20"}
# `match alias` needs a BGP alias defined first: its sample is loaded after one
ALIAS = "match alias twin"


@pytest.fixture(scope="module")
def frr() -> Iterator[Path]:
    """A zebra and a bgpd with no config, in a namespace of their own (their run directory where the
    frr user reaches it: pytest's are root's own)."""
    ns, rundir = unique("split"), Path(tempfile.mkdtemp(prefix="twin-split-", dir="/run"))
    rundir.chmod(0o755)
    shutil.chown(rundir, "frr", "frr")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for d in ("zebra", "bgpd"):
            subprocess.run(["ip", "netns", "exec", ns, *daemon_command(d, ns, rundir)], check=True)
            wait_for_sockets(rundir, [d], files=["zserv.api"])
        yield rundir
    finally:
        stop_processes([int(p.read_text()) for p in rundir.glob("*.pid")])
        subprocess.run(["ip", "netns", "del", ns], check=False)
        shutil.rmtree(rundir, ignore_errors=True)


def _entry_lines(rundir: Path, daemon: str, route_map: str) -> list[str]:
    conf = subprocess.run(vtysh(rundir, "-d", daemon, "-c", "show running-config"), capture_output=True,
                          text=True, check=True).stdout.splitlines()
    start = conf.index(f"route-map {route_map} permit 10")
    return [line.strip() for line in conf[start + 1:conf.index("exit", start)]]


def test_every_entry_has_a_sample() -> None:
    covered = {max((first for first, _ in ROUTE_MAP_LINES if tuple(s.split()[:len(first)]) == first), key=len)
               for s in [*SAMPLES, ALIAS]}
    assert covered == {first for first, _ in ROUTE_MAP_LINES}


@pytest.mark.skipif(not (FRR_BIN / "bgpd").exists(), reason="FRR is not installed")
@pytest.mark.parametrize("line", [*SAMPLES, ALIAS])
def test_route_map_line_goes_where_vtysh_sends_it(frr: Path, line: str) -> None:
    name = "T_" + "_".join(line.split()[:4]).replace(":", "_").replace(".", "_")
    before = ["bgp community alias 65000:7 twin"] if line == ALIAS else []
    subprocess.run(vtysh(frr, "-c", "configure terminal", *(a for b in before for a in ("-c", b)),
                         "-c", f"route-map {name} permit 10", "-c", line), capture_output=True, check=True)
    took = {d for d in ("zebra", "bgpd") if SHOWN.get(line, line) in _entry_lines(frr, d, name)}
    assert took == route_map_owners(line), f"FRR sent '{line}' to {sorted(took)}"
