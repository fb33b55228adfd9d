"""What the gNMI agent needs from a switch, whatever runs it.

Both kinds are read and written through a switch's SONiC redis databases:
`twin.switch.sonic_endpoint.SonicEndpoint` fronts a docker-sonic-vs container (SONiC's own daemons
program it), and `twin.switch.twin_endpoint.TwinSwitchEndpoint` is the same front over twin's own switch, whose
config daemons (twin.switch.config.cfgmgr) program FRR and the kernel. The agent is typed against this
protocol only, so both serve the same gNMI paths with the same Set semantics
(twin.switch.sonic_gnmi).
"""

from __future__ import annotations

import threading
from collections.abc import Set
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from twin.stages.configdb import ConfigDb

if TYPE_CHECKING:
    from twin.switch.redis.sonic_redis import SonicRedis


class SetRejected(Exception):
    """A Set that cannot be applied; nothing was changed."""


class SwitchEndpoint(Protocol):
    """One switch as its management plane sees it: committed CONFIG_DB, live state, commits."""

    @property
    def name(self) -> str:
        """The switch's hostname in the lab."""
        ...

    @property
    def ports(self) -> Set[str]:
        """The ports that exist on this switch; a config naming any other port is invalid."""
        ...

    @property
    def db(self) -> SonicRedis:
        """The switch's SONiC databases, which gNMI reads live."""
        ...

    @property
    def lock(self) -> threading.RLock:
        """Held while a commit reads, judges and writes CONFIG_DB, so commits never interleave."""
        ...

    @property
    def workdir(self) -> Path | None:
        """Where the gNMI server keeps its work files (gcu.patch), as sonic-gnmi's GNMI_WORK_PATH."""
        ...

    def config(self) -> ConfigDb:
        """The committed CONFIG_DB as config_db.json (`{TABLE: {key: {field: value}}}`)."""
        ...

    def commit(self, new: ConfigDb, current: ConfigDb | None = None) -> None:
        """Make `new` the committed config whole, or raise SetRejected having changed nothing.
        `current`: the committed config as the caller read it under `lock` (read again if None)."""
        ...

    def recover(self) -> None:
        """Finish or undo a commit a crash interrupted; runs before the agent serves anything."""
        ...
