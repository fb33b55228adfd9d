"""A twin switch's services as gNOI KillProcess stops and restarts them.

On SONiC, sonic-gnmi's KillProcess (gnmi_server/gnoi_system.go: KillOrRestartProcess) asks the host
over D-Bus (sonic_service_client: StopService, RestartService), and sonic-host-services' systemd
module (host_modules/systemd_service.py) runs `systemctl stop NAME` or `systemctl reset-failed NAME`
then `systemctl restart NAME` for the services it manages (ALLOWED_SERVICES: snmp, swss, dhcp_relay,
radv, restapi, lldp, sshd, pmon, rsyslog, telemetry), answering every other name with its own
refusal, which sonic-gnmi passes on as the call's error.

A twin switch has one counterpart of a SONiC service: `bgp`, the bgp container (FRR's daemons).
A restart restarts them as `systemctl restart bgp` (and `twin frr restart`) does
(twin.switch.restart.frr_restart: FRR started again from what the config daemon last programmed);
a stop stops them as `systemctl stop bgp` does. SONiC's host module does not manage bgp; twin does,
so that the restart can be driven over gNOI (docs/differences.md). Every other name, SONiC's
managed services included (a twin switch runs no snmp, lldp, pmon, ...), is refused with the host
module's words for a service it does not manage.

Both hold the config daemon's lock, as a reboot does: nothing is programmed into FRR half-way.
"""

from __future__ import annotations

import logging
from pathlib import Path

from twin.model.errors import TwinError
from twin.switch.config.cfgmgr import ConfigDaemon
from twin.switch.restart.frr_restart import restart_frr, stop_frr
from twin.switch.restart.reboot import Launch, running_daemons

BGP = "bgp"
NO_SERVICE = "Dbus {verb} called with no service specified"
NOT_MANAGED = {"stop_service": "Dbus does not support {} service management",
               "restart_service": "Dbus does not support {} service restart"}
log = logging.getLogger("twin.services")


def refusal(verb: str, service: str) -> str | None:
    """systemd_service.py's answer before it runs systemctl (`verb` stop_service or
    restart_service), for the services a twin switch has (bgp); None: the service is managed."""
    if not service:
        return NO_SERVICE.format(verb=verb)
    if service != BGP:
        return NOT_MANAGED[verb].format(service)
    return None


class SwitchServices:
    """Stop and restart one twin switch's services; each answers None, or the error the host
    module would return (sonic-gnmi's KillProcess error)."""

    def __init__(self, daemon: ConfigDaemon, launch: Launch) -> None:
        self.daemon, self.launch = daemon, launch
        self._stopped: list[str] = []   # the FRR daemons a stop stopped, for the restart after it

    @property
    def rundir(self) -> Path:
        return self.daemon.rundir

    def stop_service(self, service: str) -> str | None:
        refused = refusal("stop_service", service)
        if refused is not None:
            return refused
        with self.daemon.lock:
            daemons = running_daemons(self.rundir)
            stopped = stop_frr(self.rundir, self.daemon.netns)
            if stopped:
                self._stopped = daemons
        log.info("%s: systemctl stop bgp: stopped %s", self.daemon.name, ", ".join(stopped) or "nothing (not running)")
        return None

    def restart_service(self, service: str) -> str | None:
        refused = refusal("restart_service", service)
        if refused is not None:
            return refused
        with self.daemon.lock:
            daemons = running_daemons(self.rundir) or self._stopped
            if not daemons:
                return f"Job for {service}.service failed: {self.daemon.name} names no FRR daemons to start"
            try:
                result = restart_frr(self.daemon.name, self.daemon.netns, self.rundir, daemons, self.launch,
                                     self.daemon.templates)
            except (TwinError, OSError) as error:
                log.exception("%s: systemctl restart bgp failed", self.daemon.name)
                return f"Job for {service}.service failed: {error}"
            self._stopped = []
        for warning in result.warnings:
            log.warning("%s: %s", self.daemon.name, warning)
        log.info("%s: systemctl restart bgp: %s started in %.1f s", self.daemon.name, ", ".join(result.started),
                 result.seconds)
        return None
