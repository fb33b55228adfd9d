"""A cold reboot of one of twin's own switches, as gNOI System.Reboot COLD asks for it.

On SONiC, sonic-gnmi (gnmi_server/gnoi_system.go: Reboot) hands the request to the reboot backend
(sonic-framework rebootbackend: RebootBE::handle_reboot_request, RebootThread::Start), which
answers at once and reboots in a thread of its own. The switch then goes down and comes back as
`config-setup` boots it: CONFIG_DB loaded from the saved /etc/sonic/config_db.json (a change that
was never saved is gone), the kernel and FRR programmed from it.

twin's switch does the same in its namespace, in the background (`SwitchReboot.start`):
- power off: every front-panel port goes down (neighbours lose carrier, their BGP and BFD
  sessions drop), FRR's daemons stop (zebra withdraws its routes), the kernel forgets what was
  programmed (addresses, VLAN bridges; twin.switch.config.kernel);
- boot: CONFIG_DB := the run directory's config_db.json (twin.switch.redis.redis_server.config_load),
  the kernel programmed from it (kernel_lines, as the runtime does at `twin up`), FRR started and
  loaded from it (twin.switch.frr.frr_daemons.start_frr), and the config daemon told that this is
  what is programmed now.
The switch's redis keeps running (the agent's config daemon and state producers hold connections
to it); its STATE_DB and APPL_DB follow the ports and sessions going down and up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from twin.host.processes import stop_processes
from twin.host.shell import ip_batch, netns_argv, run
from twin.model.agent import AgentSwitch
from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr
from twin.switch.config.cfgmgr import ConfigDaemon
from twin.switch.config.kernel import kernel_changes, kernel_lines
from twin.switch.frr.frr_daemons import KNOWN, daemon_env, start_frr
from twin.switch.redis import redis_server
from twin.switch.redis.sonic_redis import as_stored

Launch = Callable[[list[str]], None]
log = logging.getLogger("twin.reboot")


class RebootInProgress(Exception):
    """A reboot of this switch is already under way."""


@dataclass(frozen=True)
class RebootState:
    """What gNOI RebootStatus reports (sonic-framework rebootbackend: RebootThread's status)."""

    active: bool = False
    when_ns: int = 0       # when the last reboot started, nanoseconds since the epoch
    reason: str = ""       # the RebootRequest's message
    count: int = 0         # reboots since the agent started
    method: str = ""       # "COLD"
    succeeded: bool | None = None  # None until a reboot has finished
    message: str = ""      # why it failed


def running_daemons(rundir: Path) -> list[str]:
    """The FRR daemons the switch was started with (their pid files), zebra first."""
    return [d for d in KNOWN if (rundir / f"{d}.pid").exists()]


def _pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def netns_launcher(netns: str) -> Launch:
    """Start an FRR daemon inside `netns`, as the netns runtime does."""
    def launch(argv: list[str]) -> None:
        run(netns_argv(netns, argv), env=daemon_env())
    return launch


class SwitchReboot:
    """Cold reboots of one twin switch, one at a time, each on a thread of its own."""

    def __init__(self, daemon: ConfigDaemon, ports: list[str], launch: Launch | None = None) -> None:
        self.daemon = daemon
        self.kernel_ports = [daemon.ifmap.get(p, p) for p in ports]
        self.launch = launch or netns_launcher(daemon.netns)
        self._lock = threading.Lock()
        self._state = RebootState()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_settings(cls, sw: AgentSwitch, daemon: ConfigDaemon) -> SwitchReboot:
        """For one agent.json switch entry (twin.lab.agent._switch_entry)."""
        return cls(daemon, list(sw.ports))

    @property
    def rundir(self) -> Path:
        return self.daemon.rundir

    def state(self) -> RebootState:
        with self._lock:
            return self._state

    def start(self, method: str, reason: str) -> None:
        """Begin a reboot in the background; RebootInProgress while one runs."""
        with self._lock:
            if self._state.active:
                raise RebootInProgress(self.daemon.name)
            self._state = RebootState(active=True, when_ns=time.time_ns(), reason=reason,
                                      count=self._state.count + 1, method=method)
            self._thread = threading.Thread(target=self._run, name=f"reboot-{self.daemon.name}", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the reboot under way (if any) has finished."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        try:
            self.reboot()
        except Exception as exc:  # reported through RebootStatus, as the backend does
            log.exception("%s: reboot failed", self.daemon.name)
            self._finish(False, str(exc))
        else:
            self._finish(True, "")

    def _finish(self, succeeded: bool, message: str) -> None:
        with self._lock:
            self._state = replace(self._state, active=False, succeeded=succeeded, message=message)

    # -- the reboot itself ---------------------------------------------------------------------

    def reboot(self) -> None:
        """Power off and boot from the saved config, holding the config daemon's lock so no Set
        or CONFIG_DB event is programmed half-way (they are, against the booted switch, after)."""
        daemon = self.daemon
        with daemon.lock:
            frr = running_daemons(self.rundir)
            log.info("%s: cold reboot (FRR daemons %s)", daemon.name, ", ".join(frr))
            self.power_off(frr)
            saved = self.load_saved_config()
            self.boot(saved, frr)
        log.info("%s: booted from %s", daemon.name, self.rundir / "config_db.json")

    def power_off(self, frr: list[str]) -> None:
        """Links down first (what neighbours see of a switch losing power), then FRR stops and the
        kernel drops what was programmed from CONFIG_DB."""
        ip_batch([f"link set dev {p} down" for p in self.kernel_ports], netns=self.daemon.netns, force=True)
        pids = [p for d in frr if (p := _pid(self.rundir / f"{d}.pid")) is not None]
        stop_processes(pids)
        for leftover in [*(f"{d}.vty" for d in frr), "zserv.api"]:
            (self.rundir / leftover).unlink(missing_ok=True)  # a killed daemon leaves its sockets
        ip_batch(kernel_changes(self.daemon.programmed, {}, self.daemon.ifmap), netns=self.daemon.netns,
                 force=True)

    def load_saved_config(self) -> ConfigDb:
        """CONFIG_DB := config_db.json, as `config-setup` loads it at boot; unsaved changes go."""
        saved = configdb.load(self.rundir / "config_db.json")
        redis_server.config_load(self.daemon.db, saved)
        self.daemon.set_cache(saved)
        return saved

    def boot(self, saved: ConfigDb, frr: list[str]) -> None:
        """The kernel and FRR programmed from `saved` whole, as at `twin up`."""
        daemon = self.daemon
        ip_batch(kernel_lines(saved, daemon.ifmap), netns=daemon.netns, force=True)
        daemon.programmed = as_stored(saved)
        daemon._save_programmed()  # (ConfigDaemon has no public way to say "programmed whole")
        for warning in start_frr(self.rundir, daemon.netns, frr, render_frr(saved, daemon.templates), self.launch):
            log.warning("%s: %s", daemon.name, warning)
