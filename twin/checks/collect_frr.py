"""Read what the frr-config check compares, per switch and at one moment: CONFIG_DB (from the
switch's redis), what it renders, and FRR's running config (each daemon's vty socket). I/O only."""

from __future__ import annotations

from typing import Any

from twin.host.rundir import node_dir
from twin.kinds.sonic_vs import is_sonic_image
from twin.lab.running import RunningLab
from twin.stages.render.frr import render_frr
from twin.switch.frr.frr_vty import running_config
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis, as_stored


def frr_config_facts(lab: RunningLab, node: str) -> dict[str, Any]:
    """{"config_db", "rendered", "running"} of one of twin's switches; {"running": None, "why"} when
    there is nothing to compare (a SONiC image's FRR, redis or FRR not answering)."""
    state = lab.state
    if is_sonic_image(state.image or ""):
        return {"running": None, "why": "the SONiC image's own daemons program its FRR"}
    rundir = node_dir(state.lab, node)
    if not socket_path(rundir).exists():
        return {"running": None, "why": f"no redis socket in {rundir}"}
    db = SonicRedis(unix_socket=socket_path(rundir))
    try:
        config = as_stored(db.get_config())
    except Exception as exc:  # redis down: the daemons check names it
        return {"running": None, "why": f"CONFIG_DB not readable: {exc}"}
    finally:
        db.close()
    running = running_config(rundir)
    if running is None:
        return {"running": None, "why": "FRR's daemons do not answer on their vty sockets"}
    return {"config_db": config, "rendered": render_frr(config, lab.sonic_templates), "running": running}
