"""Which FRR daemons a node runs and how to start them inside a namespace (FRR 8.4)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from twin.host import userfile
from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan

FRR_BIN = Path("/usr/lib/frr")
# Daemons this kernel cannot serve: ldpd needs MPLS, which is not available here.
UNSUPPORTED = {"ldpd": "needs kernel MPLS, which this machine lacks"}
KNOWN = ("zebra", "bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "pimd", "ldpd", "nhrpd",
         "eigrpd", "babeld", "sharpd", "staticd", "pbrd", "bfdd", "fabricd", "vrrpd", "pathd")


def parse_daemons_file(text: str) -> list[str]:
    """The daemons a FRR `daemons` file enables (`bgpd=yes`), zebra always first."""
    enabled = []
    for line in text.splitlines():
        m = re.match(r"\s*([a-z0-9]+d)\s*=\s*(yes|true|1)\s*$", line)
        if m and m.group(1) in KNOWN:
            enabled.append(m.group(1))
    return ["zebra", *[d for d in enabled if d != "zebra"]]


def switch_daemons(bfd: bool) -> list[str]:
    return ["zebra", "bgpd", *(["bfdd"] if bfd else [])]


def node_daemons(node: NodePlan, fabric_bfd: bool) -> list[str]:
    """The FRR daemons a node is started with: a switch's zebra and bgpd, and bfdd when any of
    its sessions (or the fabric) runs BFD; an imported router's `daemons` file (zebra and bgpd
    without one)."""
    if node.kind == "switch":
        bfd = any(fabric_bfd if nb.bfd is None else nb.bfd for nb in node.neighbors)
        return switch_daemons(bfd or fabric_bfd)
    return parse_daemons_file(userfile.read_text(node.daemons)) if node.daemons else ["zebra", "bgpd"]


def split_supported(daemons: list[str]) -> tuple[list[str], list[str]]:
    """(daemons to start, warnings for those skipped)."""
    start, warnings = [], []
    for d in daemons:
        if d in UNSUPPORTED:
            warnings.append(f"skipping {d}: {UNSUPPORTED[d]}")
        elif not (FRR_BIN / d).exists():
            warnings.append(f"skipping {d}: {FRR_BIN / d} is not installed")
        else:
            start.append(d)
    return start, warnings


def daemon_command(daemon: str, pathspace: str, rundir: Path) -> list[str]:
    """FRR forbids dots in -N, so the namespace name `tw.lab.node` becomes `tw_lab_node`."""
    cmd = [str(FRR_BIN / daemon), "-N", pathspace.replace(".", "_"), "-u", "frr", "-g", "frr", "-d",
           "-i", str(rundir / f"{daemon}.pid"), "--vty_socket", str(rundir),
           "-z", str(rundir / "zserv.api"), "--log", f"file:{rundir / f'{daemon}.log'}"]
    if daemon == "zebra":
        cmd += ["-s", "16777216"]
    return cmd


def daemon_env() -> dict[str, str]:
    """Environment for FRR daemons. glibc serves allocations above the mmap threshold from fresh,
    already-zero pages, so FRR's large zeroed per-peer structures stay out of RSS until used."""
    env = dict(os.environ)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", "65536")
    env.setdefault("MALLOC_ARENA_MAX", "2")
    return env


EVENT_LOG = "frr.log"   # every daemon's informational log, microsecond timestamps


def runtime_lines(rundir: Path) -> list[str]:
    """Lines twin adds to every switch's FRR config, outside anything SONiC renders: session and
    route events with microsecond timestamps for drills. FRR 8.4 applies `log timestamp precision`
    to configured log files only, not to the --log targets."""
    return [f"log file {rundir / EVENT_LOG} informational", "log timestamp precision 6"]


def vtysh(rundir: Path, *args: str) -> list[str]:
    return ["vtysh", "--vty_socket", str(rundir), *args]


def wait_for_sockets(rundir: Path, daemons: list[str], timeout: float = 20, files: Sequence[str] = ()) -> None:
    """Until every daemon's vty socket (and `files`) exists in `rundir`; RuntimeBackendError after `timeout`."""
    deadline = time.monotonic() + timeout
    missing = daemons
    wanted = [f"{d}.vty" for d in daemons] + list(files)
    while time.monotonic() < deadline:
        missing = [f for f in wanted if not (rundir / f).exists()]
        if not missing:
            return
        time.sleep(0.02)
    raise RuntimeBackendError(f"FRR daemons did not start in {rundir}: {', '.join(missing)} "
                              f"(see {rundir}/*.log)")


def start_frr(rundir: Path, pathspace: str, daemons: list[str], conf: str,
              launch: Callable[[list[str]], None]) -> list[str]:
    """Boot a node's FRR: the supported daemons start (launch_frr), then `conf` is loaded
    (load_frr). Returns a warning per daemon this machine cannot run; RuntimeBackendError when
    FRR refuses the config."""
    skipped = launch_frr(rundir, pathspace, daemons, launch)
    load_frr(rundir, conf)
    return skipped


def launch_frr(rundir: Path, pathspace: str, daemons: list[str], launch: Callable[[list[str]], None]) -> list[str]:
    """Start the supported `daemons` (zebra first, its zserv socket awaited) and wait for their vty
    sockets. Returns a warning per daemon this machine cannot run."""
    start, skipped = split_supported(daemons)
    for d in start:
        launch(daemon_command(d, pathspace, rundir))
        if d == "zebra":
            # Clients that find no zserv socket retry only seconds later: wait for zebra first.
            wait_for_sockets(rundir, ["zebra"], files=["zserv.api"])
    wait_for_sockets(rundir, start)
    return skipped


def load_frr(rundir: Path, conf: str) -> None:
    """frr.conf := `conf` plus the runtime lines, loaded into the running daemons with vtysh;
    RuntimeBackendError when FRR refuses it."""
    conf_path = rundir / "frr.conf"
    # Session and route events with microsecond timestamps for drills: FRR 8.4 applies
    # `log timestamp precision` to configured log files only, not to the --log targets.
    conf_path.write_text(conf + "\n".join(runtime_lines(rundir)) + "\n")
    proc = subprocess.run(vtysh(rundir, "-f", str(conf_path)), capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeBackendError(f"FRR rejected {conf_path}: {(proc.stdout + proc.stderr).strip()[-800:]}")
