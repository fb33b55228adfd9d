"""frrcfgd's BGP instance options against FRR itself: for every case of the fidelity catalog
(tests/fidelity/bgp_catalog: every BGP_GLOBALS, BGP_GLOBALS_AF, BGP_NEIGHBOR, BGP_PEER_GROUP, network,
aggregate, redistribution and listen-range leaf twin emulates), a real bgpd booted with twin's rendering,
or changed to it by the lines twin sends on a Set (twin.switch.config.apply.frr_lines), and back, runs
what CONFIG_DB renders: its running config shows no difference (twin.switch.frr.frr_drift), and FRR
refuses none of the lines."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import unique

sys.path.insert(0, str(Path(__file__).parents[1] / "fidelity"))
from bgp_catalog import CASES, config
from policy_catalog import SETS, base

from twin.host.processes import stop_processes
from twin.stages.render.frr import render_frr
from twin.switch.config.apply import frr_lines
from twin.switch.frr.frr_daemons import daemon_command, vtysh, wait_for_sockets
from twin.switch.frr.frr_drift import Drift, drift
from twin.switch.frr.frr_vty import running_config

# Removing a peer group's remote-as deletes the members that took it (FRR's peer_group_remote_as_delete;
# frrcfgd sends the same `no neighbor PG remote-as`): SONiC loses those sessions, and so does the twin
MEMBERS_DELETED = {"peer-group-remote-as", "peer-group-external", "listen-range"}
MEMBERS = ("neighbor 10.0.0.0 remote-as 65100", "neighbor 10.0.0.2 remote-as 65100")


@pytest.fixture(scope="module")
def frr() -> Iterator[Path]:
    """A zebra and a bgpd with no config, in a namespace of their own."""
    ns, rundir = unique("bgpopt"), Path(tempfile.mkdtemp(prefix="twin-bgpopt-", dir="/run"))
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


def _base() -> dict[str, Any]:
    db = base()
    for table, rows in SETS.items():
        db.setdefault(table, {}).update(copy.deepcopy(rows))
    return db


def _send(rundir: Path, lines: list[str]) -> None:
    conf = rundir / "lines.conf"
    conf.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(vtysh(rundir, "-f", str(conf)), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _bgp_drift(rundir: Path, db: dict[str, Any]) -> list[Drift]:
    running = running_config(rundir)
    assert running is not None
    return [d for d in drift(render_frr(db), running) if d.path[0].startswith(("router bgp", "bgp route-map"))]


def _clear(rundir: Path) -> None:
    subprocess.run(vtysh(rundir, "-c", "configure", "-c", "no router bgp", "-c", "no bgp route-map delay-timer"),
                   capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(CASES))
def test_frr_runs_what_the_case_renders_at_boot_and_after_a_set(frr: Path, name: str) -> None:
    old, new = _base(), config(name)
    _clear(frr)
    _send(frr, render_frr(old).splitlines())
    assert _bgp_drift(frr, old) == []
    lines = frr_lines(old, new)
    assert lines is not None
    _send(frr, lines)
    assert _bgp_drift(frr, new) == []
    _send(frr, frr_lines(new, old) or [])
    left = _bgp_drift(frr, old)
    if name in MEMBERS_DELETED:
        assert {d.line for d in left if d.kind == "missing"} >= set(MEMBERS)
    else:
        assert left == []
    _clear(frr)
    _send(frr, render_frr(new).splitlines())
    assert _bgp_drift(frr, new) == []
