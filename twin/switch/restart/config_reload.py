"""`config reload` on one of twin's own switches: services stopped, CONFIG_DB replaced, services started.

sonic-utilities' `config reload` (config/main.py: reload) stops sonic.target (swss, syncd, bgp, ...),
flushes CONFIG_DB and writes the file into it (`sonic-cfggen -j FILE --write-to-db`), then restarts
sonic.target: the ports come up again from PORT, and the bgp container renders FRR afresh from the
new CONFIG_DB (docker_init.sh), so nothing of the previous config (networks, allowas-in, neighbors)
stays in FRR.

twin's switch does the same with its reboot's steps (twin.switch.restart.reboot.SwitchReboot),
holding the config daemon's lock throughout: the front-panel ports go down and FRR stops, CONFIG_DB
becomes `new`, then the kernel and FRR are programmed from it whole. The config daemon's events for
the keys written meanwhile find CONFIG_DB equal to what was programmed and send nothing more.
"""

from __future__ import annotations

import logging

from twin.stages.configdb import ConfigDb
from twin.switch.redis import redis_server
from twin.switch.restart.reboot import SwitchReboot, running_daemons

log = logging.getLogger("twin.config_reload")


def reload_config(reboot: SwitchReboot, new: ConfigDb) -> None:
    """CONFIG_DB := `new` with the switch's services restarted around it, as `config reload` does."""
    daemon = reboot.daemon
    with daemon.lock:
        frr = running_daemons(reboot.rundir)
        log.info("%s: config reload: stopping services (FRR daemons %s)", daemon.name, ", ".join(frr))
        reboot.power_off(frr)
        redis_server.config_load(daemon.db, new)
        daemon.set_cache(new)
        reboot.boot(new, frr)
    log.info("%s: config reload: services started from the new CONFIG_DB", daemon.name)
