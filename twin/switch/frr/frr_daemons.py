"""Which FRR daemons a node runs and how to start them inside a namespace (FRR 8.4)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from twin.host import userfile
from twin.host.poll import poll_until, wait_until
from twin.model.errors import RuntimeBackendError
from twin.model.plan import NodePlan
from twin.switch.frr.frr_check import CHECK
from twin.switch.frr.frr_split import per_daemon_configs
from twin.switch.frr.frr_vty import ask_json

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
    """zebra, bgpd and staticd (STATIC_ROUTE), as SONiC's bgp container runs them, and bfdd for BFD."""
    return ["zebra", "bgpd", "staticd", *(["bfdd"] if bfd else [])]


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


VTY_ADDRESS = "127.0.0.1"  # SONiC's supervisord starts zebra, bgpd, bfdd and staticd with `-A 127.0.0.1`


def daemon_command(daemon: str, pathspace: str, rundir: Path, config: Path | None = None,
                   extra: Sequence[str] = ()) -> list[str]:
    """FRR forbids dots in -N, so the namespace name `tw.lab.node` becomes `tw_lab_node`. With
    `config` the daemon reads that file as it starts (`-f`); without, it starts with no config.
    The daemon's TCP vty (2601 zebra, 2605 bgpd, 2617 bfdd, ...) listens on the node's 127.0.0.1
    only, as SONiC's does (`-A`; FRR's default is every address): GPU servers reach a switch's
    data-plane addresses, never its daemons' vty; vtysh uses the unix sockets in `rundir`."""
    cmd = [str(FRR_BIN / daemon), "-N", pathspace.replace(".", "_"), "-u", "frr", "-g", "frr", "-d",
           "-A", VTY_ADDRESS, "-i", str(rundir / f"{daemon}.pid"), "--vty_socket", str(rundir),
           "-z", str(rundir / "zserv.api"), "--log", f"file:{rundir / f'{daemon}.log'}"]
    if config is not None:
        cmd += ["-f", str(config)]
    if daemon == "zebra":
        cmd += ["-s", "16777216"]
    return cmd + list(extra)


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
    wanted = [f"{d}.vty" for d in daemons] + list(files)

    def missing() -> list[str]:
        return [f for f in wanted if not (rundir / f).exists()]

    wait_until(lambda: not missing(), timeout, 0.02, lambda: RuntimeBackendError(
        f"FRR daemons did not start in {rundir}: {', '.join(missing())} (see {rundir}/*.log)"))


def start_frr(rundir: Path, pathspace: str, daemons: list[str], conf: str,
              launch: Callable[[list[str]], None], extra: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Boot a node's FRR: the supported daemons start (launch_frr, each with its `extra` options),
    then `conf` is loaded (load_frr). Returns a warning per daemon this machine cannot run;
    RuntimeBackendError when FRR refuses the config."""
    skipped = launch_frr(rundir, pathspace, daemons, launch, _hostname_files(rundir, conf, daemons), extra)
    load_frr(rundir, conf)
    return skipped


def _hostname_files(rundir: Path, conf: str, daemons: list[str]) -> dict[str, Path]:
    """A daemon takes its hostname only from the file it starts with: a `hostname` line loaded with
    vtysh stays vtysh's, and the daemon would print the host machine's (the namespace shares its
    name). So each starts with `conf`'s hostname line (the switch's, DEVICE_METADATA's); none without one."""
    lines = [line for line in conf.splitlines() if line.startswith("hostname ")]
    if not lines:
        return {}
    path = rundir / "hostname.conf"
    path.write_text(lines[0] + "\n")
    return dict.fromkeys(daemons, path)


@dataclass(frozen=True)
class FrrBoot:
    """A node's FRR checked and its files written (prepare_boot), ready to launch: `now` start at
    launch, each with its file of `configs` (none where the split is not known: then `conf` is
    loaded with vtysh once they run); `left` are for launch_later."""

    rundir: Path
    now: list[str]
    left: list[str]
    configs: dict[str, Path]
    conf: str | None  # loaded with vtysh after the launch (start_frr's way); None: in the daemons' files

    def launch(self, pathspace: str, launch: Callable[[list[str]], None],
               extra: Mapping[str, Sequence[str]] | None = None) -> list[str]:
        """Start the daemons of `now`, each with its `extra` options; returns a warning per daemon
        this machine cannot run."""
        if self.conf is not None:
            return start_frr(self.rundir, pathspace, self.now, self.conf, launch, extra)
        return launch_frr(self.rundir, pathspace, self.now, launch, self.configs, extra)


def prepare_boot(rundir: Path, daemons: list[str], conf: str, later: Collection[str] = ()) -> FrrBoot:
    """Prepare to boot a node's FRR as FRR's split configuration does, each daemon reading its own
    part of `conf` (per_daemon_configs) as it starts: no daemon waits for config pushed after its
    start (bgpd holds new peers for seconds while a vtysh config is pending). frr.conf is written as
    load_frr writes it, and checked by vtysh first (`-C`, twin.switch.frr.frr_check:
    RuntimeBackendError when FRR would refuse it), before anything starts. Where the split is not
    known for every command, start_frr's way: launch, then load with vtysh. The daemons of `later`
    get their file but are left for launch_later to start (only where the split is known)."""
    start, _ = split_supported(daemons)
    full = _write_frr_conf(rundir, conf)
    split = per_daemon_configs(full, start)
    if split is None:
        return FrrBoot(rundir, daemons, [], {}, conf)
    refused = CHECK.refused(rundir / "frr.conf")
    if refused is not None:
        raise RuntimeBackendError(refused)
    for d, text in split.items():
        (rundir / f"{d}.conf").write_text(text)
    left = [d for d in start if d in later and d != "zebra"]
    now = [d for d in daemons if d not in left]
    return FrrBoot(rundir, now, left, _config_files(rundir, now), None)


def launch_later(rundir: Path, pathspace: str, daemons: list[str], launch: Callable[[list[str]], None]) -> None:
    """Start the daemons prepare_boot left for later, each with the file it wrote them."""
    launch_frr(rundir, pathspace, daemons, launch, _config_files(rundir, daemons))


def _config_files(rundir: Path, daemons: Sequence[str]) -> dict[str, Path]:
    return {d: rundir / f"{d}.conf" for d in daemons}


def bgp_established(rundir: Path) -> bool:
    """Whether every BGP session bgpd has configured is Established (True with none); False when
    bgpd does not answer."""
    summary = ask_json(rundir, "bgpd", "show bgp summary json", timeout=5)
    if not isinstance(summary, dict):
        return False
    peers = [peer for family in summary.values() if isinstance(family, dict)
             for peer in (family.get("peers") or {}).values()]
    return all(peer.get("state") == "Established" for peer in peers)


def wait_bgp_established(rundir: Path, timeout: float) -> bool:
    """Until every configured BGP session is Established, at most `timeout` s; whether they are."""
    return poll_until(lambda: bgp_established(rundir), timeout, 0.05)


def launch_frr(rundir: Path, pathspace: str, daemons: list[str], launch: Callable[[list[str]], None],
               configs: Mapping[str, Path] | None = None,
               extra: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Start the supported `daemons` (zebra first, its zserv socket awaited), each with its file of
    `configs` if it has one and its `extra` options, and wait for their vty sockets. Returns a
    warning per daemon this machine cannot run."""
    start, skipped = split_supported(daemons)
    for d in start:
        launch(daemon_command(d, pathspace, rundir, (configs or {}).get(d), (extra or {}).get(d, ())))
        if d == "zebra":
            # Clients that find no zserv socket retry only seconds later: wait for zebra first.
            wait_for_sockets(rundir, ["zebra"], files=["zserv.api"])
    wait_for_sockets(rundir, start)
    return skipped


def _write_frr_conf(rundir: Path, conf: str) -> str:
    """rundir/frr.conf := `conf` plus the runtime lines: session and route events with microsecond
    timestamps for drills (FRR 8.4 applies `log timestamp precision` to configured log files only,
    not to the --log targets). Returns what was written."""
    text = conf + "\n".join(runtime_lines(rundir)) + "\n"
    (rundir / "frr.conf").write_text(text)
    return text


def load_frr(rundir: Path, conf: str) -> None:
    """frr.conf := `conf` plus the runtime lines, loaded into the running daemons with vtysh;
    RuntimeBackendError when FRR refuses it."""
    conf_path = rundir / "frr.conf"
    _write_frr_conf(rundir, conf)
    proc = subprocess.run(vtysh(rundir, "-f", str(conf_path)), capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeBackendError(f"FRR rejected {conf_path}: {(proc.stdout + proc.stderr).strip()[-800:]}")
