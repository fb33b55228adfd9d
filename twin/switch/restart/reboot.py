"""A reboot of one of twin's own switches, COLD or WARM, as gNOI System.Reboot asks for it.

On SONiC, sonic-gnmi (gnmi_server/gnoi_system.go: Reboot) hands the request to the reboot backend
(sonic-framework rebootbackend: RebootBE::handle_reboot_request, RebootThread::Start), which
answers at once and reboots in a thread of its own. The reboot script stops the switch's services
while SSH and gNMI still answer, then the CPU reboots: its management address answers nothing
until sshd and the gnmi container are up again.
- COLD: the services' stop takes the data plane down (links, routes); the switch boots as
  `config-setup` boots it: CONFIG_DB loaded from the saved /etc/sonic/config_db.json (a change that
  was never saved is gone), the kernel and FRR programmed from it.
- WARM (sonic-utilities' scripts/fast-reboot with REBOOT_TYPE warm-reboot): the bgp service's stop
  kills zebra and bgpd with SIGKILL (sonic-buildimage files/scripts/bgp.sh: "Kill bgpd to start the
  bgp graceful restart procedure"), the ASIC keeps forwarding, redis is dumped and restored, so
  CONFIG_DB after the boot is the running one (config-setup does nothing on a warm boot). Neighbours
  that are BGP graceful-restart helpers keep the switch's routes; the switch's bgpd comes back with
  `bgp graceful-restart preserve-fw-state` (SONiC renders it on a ToRRouter).

twin's switch does the same in its namespace, in the background (`SwitchReboot.start`), in three
phases whose lengths are the lab file's `reboot:` (twin.model.lab.RebootSettings, a model of what a
namespace does not go through):
- shutdown (`shutdown_s`, management up): COLD takes every front-panel port down (neighbours lose
  carrier, their BGP and BFD sessions drop), stops FRR (zebra withdraws its routes) and makes the
  kernel forget what was programmed (addresses, VLAN bridges, the ports' queues and their counters;
  twin.switch.config.kernel and qdisc). WARM kills zebra and bgpd as bgp.sh does and stops FRR's
  other daemons; ports, addresses, queues and the kernel's routes stay: the kernel is twin's
  forwarding plane, as the ASIC is SONiC's.
- down (`boot_s`): eth0, the switch's management port, is down: SSH, gNMI and gNOI do not answer.
- boot: COLD: CONFIG_DB := the run directory's config_db.json (redis_server.config_load), the
  kernel programmed from it (kernel_lines and qdisc_lines, as the runtime does at `twin up`), FRR
  started and loaded from it. WARM: FRR started from the running CONFIG_DB, zebra with `-K` so that it keeps the
  routes its killed predecessor left in the kernel until bgpd has installed them again (SONiC's
  fpmsyncd holds the ASIC's routes across a warm restart the same way, for its 120 s default
  timer). Then eth0 comes up with the routes it had, and the config daemon is told what is
  programmed now. Either way the switch's boot time is the boot's start (a warm reboot boots a new
  kernel by kexec too): its uptime counts from there (twin.switch.system_files).
The switch's redis keeps running (the agent's config daemon and state producers hold connections
to it); its STATE_DB and APPL_DB follow the ports and sessions going down and up. Connections open
when eth0 went down stall, as a client's connection to a rebooting switch does, until the client's
or the server's keepalive ends them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from twin.host.processes import kill_processes, stop_processes
from twin.host.shell import ip_batch, netns_argv, run, tc_batch
from twin.model.agent import AgentSwitch
from twin.model.lab import RebootSettings
from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr
from twin.switch.config.cfgmgr import ConfigDaemon
from twin.switch.config.kernel import kernel_changes, kernel_lines
from twin.switch.config.qdisc import qdisc_changes, qdisc_lines
from twin.switch.frr.frr_daemons import KNOWN, daemon_env, prepare_boot, start_frr
from twin.switch.redis import redis_server
from twin.switch.redis.sonic_redis import as_stored
from twin.switch.system_files import mark_booted, write_hostname

Launch = Callable[[list[str]], None]
log = logging.getLogger("twin.reboot")

MGMT_PORT = "eth0"          # every runtime gives a switch its management address on eth0
WARM_ROUTE_HOLD_S = 120     # fpmsyncd's default warm-restart timer for bgp (WARM_RESTART|bgp bgp_timer)
WARM_KILLED = ("zebra", "bgpd")  # bgp.sh stop on a warm boot: pkill -9 zebra, then pkill -9 bgpd


class RebootInProgress(Exception):
    """A reboot of this switch is already under way."""


@dataclass(frozen=True)
class RebootState:
    """What gNOI RebootStatus reports (sonic-framework rebootbackend: RebootThread's status)."""

    active: bool = False
    when_ns: int = 0       # when the last reboot started, nanoseconds since the epoch
    reason: str = ""       # the RebootRequest's message
    count: int = 0         # reboots since the agent started
    method: str = ""       # "COLD" or "WARM"
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
    """Reboots of one twin switch, one at a time, each on a thread of its own."""

    def __init__(self, daemon: ConfigDaemon, ports: list[str], launch: Launch | None = None,
                 timing: RebootSettings | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.daemon = daemon
        self.kernel_ports = [daemon.ifmap.get(p, p) for p in ports]
        self.launch = launch or netns_launcher(daemon.netns)
        self.timing = timing or RebootSettings()
        self.sleep = sleep
        self._lock = threading.Lock()
        self._state = RebootState()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_settings(cls, sw: AgentSwitch, daemon: ConfigDaemon, timing: RebootSettings) -> SwitchReboot:
        """For one agent.json switch entry (twin.lab.agent._switch_entry) and the lab's `reboot:`."""
        return cls(daemon, list(sw.ports), timing=timing)

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
            self.reboot(self._state.method)
        except Exception as exc:  # reported through RebootStatus, as the backend does
            log.exception("%s: reboot failed", self.daemon.name)
            self._finish(False, str(exc))
        else:
            self._finish(True, "")

    def _finish(self, succeeded: bool, message: str) -> None:
        with self._lock:
            self._state = replace(self._state, active=False, succeeded=succeeded, message=message)

    # -- the reboot itself ---------------------------------------------------------------------

    def reboot(self, method: str) -> None:
        """Shut down, take the management port down, boot (the module's docstring), holding the
        config daemon's lock so no Set or CONFIG_DB event is programmed half-way (they are, against
        the booted switch, after)."""
        daemon = self.daemon
        began = time.monotonic()
        with daemon.lock:
            frr = running_daemons(self.rundir)
            log.info("%s: %s reboot (FRR daemons %s)", daemon.name, method.lower(), ", ".join(frr))
            if method == "WARM":
                self.stop_control_plane(frr)
            else:
                self.power_off(frr)
            self.sleep(max(0.0, self.timing.shutdown_s - (time.monotonic() - began)))
            routes = self.management_down()
            try:
                self.sleep(self.timing.boot_s)
                self.mark_booted()
                if method == "WARM":
                    self.warm_boot(frr)
                else:
                    self.boot(self.load_saved_config(), frr)
            finally:  # a boot that failed (RebootStatus says why) must not leave the switch unreachable
                self.management_up(routes)
        log.info("%s: booted (%s) from %s", daemon.name, method.lower(),
                 "the running CONFIG_DB" if method == "WARM" else self.rundir / "config_db.json")

    def mark_booted(self) -> None:
        """The switch's uptime starts again here, COLD or WARM (a warm reboot boots a new kernel too, by kexec)."""
        mark_booted(self.rundir)

    def management_down(self) -> list[str]:
        """eth0 down: the switch's SSH, gNMI and gNOI stop answering. Returns the routes it carried
        (the kernel drops them with the link), for management_up."""
        netns = self.daemon.netns
        routes = [line.strip() for family in ("-4", "-6")
                  for line in run(netns_argv(netns, ["ip", family, "route", "show", "dev", MGMT_PORT]),
                                  check=False).stdout.splitlines()
                  if line.strip() and "proto kernel" not in line and not line.startswith("fe80::")]
        ip_batch([f"link set dev {MGMT_PORT} down"], netns=netns, force=True)
        log.info("%s: management port %s down", self.daemon.name, MGMT_PORT)
        return routes

    def management_up(self, routes: list[str]) -> None:
        """eth0 up again, with the routes it carried before."""
        ip_batch([f"link set dev {MGMT_PORT} up", *(f"route replace {r} dev {MGMT_PORT}" for r in routes)],
                 netns=self.daemon.netns, force=True)
        log.info("%s: management port %s up", self.daemon.name, MGMT_PORT)

    def power_off(self, frr: list[str]) -> None:
        """Links down first (what neighbours see of a switch losing power), then FRR stops and the
        kernel drops what was programmed from CONFIG_DB."""
        ip_batch([f"link set dev {p} down" for p in self.kernel_ports], netns=self.daemon.netns, force=True)
        pids = [p for d in frr if (p := _pid(self.rundir / f"{d}.pid")) is not None]
        stop_processes(pids)
        self._forget_sockets(frr)
        ip_batch(kernel_changes(self.daemon.programmed, {}, self.daemon.ifmap), netns=self.daemon.netns,
                 force=True)
        if self.daemon.queues:
            tc_batch(qdisc_changes(self.daemon.programmed, {}, self.daemon.ifmap), netns=self.daemon.netns,
                     force=True)

    def stop_control_plane(self, frr: list[str]) -> None:
        """A warm reboot's stop: zebra, then bgpd, killed with SIGKILL (nothing withdrawn: the
        kernel keeps every route, the neighbours see bgpd's TCP sessions end without a
        NOTIFICATION and keep its routes as graceful-restart helpers), then FRR's other daemons
        stopped as `docker stop bgp` stops them. Ports and addresses stay."""
        killed = [d for d in WARM_KILLED if d in frr]
        kill_processes([p for d in killed if (p := _pid(self.rundir / f"{d}.pid")) is not None])
        stop_processes([p for d in frr if d not in killed and (p := _pid(self.rundir / f"{d}.pid")) is not None])
        self._forget_sockets(frr)

    def _forget_sockets(self, frr: list[str]) -> None:
        for leftover in [*(f"{d}.vty" for d in frr), "zserv.api"]:
            (self.rundir / leftover).unlink(missing_ok=True)  # a killed daemon leaves its sockets

    def warm_boot(self, frr: list[str]) -> None:
        """FRR started from the running CONFIG_DB (what the config daemon programmed), each daemon
        reading its part as it starts, as at `twin up` (bgpd must know of its graceful restart before
        its first session comes up), zebra keeping the kernel's routes of its killed predecessor for
        WARM_ROUTE_HOLD_S."""
        daemon = self.daemon
        boot = prepare_boot(self.rundir, frr, render_frr(daemon.programmed, daemon.templates))
        for warning in boot.launch(daemon.netns, self.launch, {"zebra": ["-K", str(WARM_ROUTE_HOLD_S)]}):
            log.warning("%s: %s", daemon.name, warning)

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
        if daemon.queues:
            tc_batch(qdisc_lines(saved, daemon.ifmap), netns=daemon.netns, force=True)
        write_hostname(self.rundir, saved)
        daemon.programmed = as_stored(saved)
        daemon._save_programmed()  # (ConfigDaemon has no public way to say "programmed whole")
        for warning in start_frr(self.rundir, daemon.netns, frr, render_frr(saved, daemon.templates), self.launch):
            log.warning("%s: %s", daemon.name, warning)
