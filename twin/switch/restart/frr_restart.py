"""Restart one switch's FRR, as `sudo systemctl restart bgp` restarts SONiC's bgp container.

On SONiC the bgp container's FRR daemons (zebra, bgpd, bfdd, staticd) stop, and when it starts
again its frr.conf is rendered from CONFIG_DB (docker_init.sh: sonic-cfggen -d), after which
bgpcfgd or frrcfgd carries on from CONFIG_DB's events. twin's switch does the same in its
namespace: whatever FRR daemons still run there are stopped (SIGTERM, then SIGKILL), their
leftover sockets removed, the switch's daemons started again (twin.switch.frr.frr_daemons.launch_frr)
and loaded with FRR rendered from what the config daemon last programmed (`programmed.json`,
twin.switch.config.cfgmgr). FRR then holds what the config daemon believes it holds, so its next change
from CONFIG_DB is again a difference against the truth, whether the agent runs or not.

The kernel side (addresses, ports, VLANs) and the switch's redis are not touched: they do not
live in the bgp container. A change the config daemon programs while FRR restarts may be sent
to daemons that are not there yet; `restart_frr` starts over from the newer `programmed.json`
when that happens.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from twin.host.processes import Proc, netns_processes, stop_processes
from twin.model.errors import RuntimeBackendError
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr
from twin.switch.config.cfgmgr import PROGRAMMED, load_programmed
from twin.switch.frr.frr_daemons import KNOWN, launch_frr, load_frr
from twin.switch.restart.reboot import Launch

ATTEMPTS = 3  # restarts from a programmed.json that changed meanwhile, before giving up
log = logging.getLogger("twin.frr_restart")


@dataclass
class FrrRestart:
    """What a restart did."""

    switch: str
    stopped: list[str] = field(default_factory=list)   # "bgpd (pid 1234)" of each daemon stopped
    started: list[str] = field(default_factory=list)   # daemons running again
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def programmed_config(rundir: Path) -> ConfigDb:
    """What the switch's config daemon last programmed (programmed.json), as it reads it at start:
    the saved config_db.json when nothing was recorded."""
    db = load_programmed(rundir)
    if db is not None:
        return db
    raise RuntimeBackendError(f"{rundir.name}: neither {PROGRAMMED} nor config_db.json is readable in {rundir}")


def frr_processes(netns: str, list_processes: Callable[[str], list[Proc]] = netns_processes) -> list[Proc]:
    """FRR's daemons running in the switch's namespace (watchfrr and vtysh are not daemons)."""
    return [p for p in list_processes(netns) if p.name in KNOWN and p.alive]


def stop_frr(rundir: Path, netns: str) -> list[str]:
    """Stop every FRR daemon of the switch and remove the sockets a killed daemon leaves behind."""
    running = frr_processes(netns)
    stop_processes([p.pid for p in running])
    for leftover in [*(f"{d}.vty" for d in KNOWN), "zserv.api"]:
        (rundir / leftover).unlink(missing_ok=True)
    return [f"{p.name} (pid {p.ns_pid})" for p in running]


def restart_frr(name: str, netns: str, rundir: Path, daemons: list[str], launch: Launch,
                templates: Path | None = None) -> FrrRestart:
    """Stop the switch's FRR and start `daemons` again, loaded with FRR rendered (with a SONiC
    release's `templates`, or twin's own renderer) from what the config daemon last programmed."""
    start = time.monotonic()
    result = FrrRestart(switch=name)
    for attempt in range(1, ATTEMPTS + 1):
        stopped = stop_frr(rundir, netns)
        if attempt == 1:
            result.stopped = stopped
        result.warnings = launch_frr(rundir, netns, daemons, launch)
        config = programmed_config(rundir)
        load_frr(rundir, render_frr(config, templates))
        if programmed_config(rundir) == config:
            break
        log.info("%s: CONFIG_DB was programmed while FRR restarted; starting again from it", name)
    else:
        result.warnings.append(f"CONFIG_DB kept changing while FRR restarted ({ATTEMPTS} attempts): FRR may "
                               "lack the latest change; run the restart again")
    result.started = sorted({p.name for p in frr_processes(netns)}, key=KNOWN.index)
    result.seconds = round(time.monotonic() - start, 2)
    return result
