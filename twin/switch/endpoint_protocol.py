"""What the gNMI agent needs from a switch, whatever runs it.

Both kinds are read and written through a switch's SONiC redis databases:
`twin.switch.sonic_redis.SonicEndpoint` fronts a docker-sonic-vs container (SONiC's own daemons
program it), and `twin.switch.endpoint.Endpoint` is the same front over twin's own switch, whose
config daemons (twin.switch.cfgmgr) program FRR and the kernel. The agent is typed against this
protocol only, so both serve the same gNMI paths with the same Set semantics.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any, Protocol

from twin.switch.configdb import ConfigDb


class SetRejected(Exception):
    """A Set that cannot be applied; nothing was changed."""


Table = dict[str, Any]  # key -> fields (COUNTERS_PORT_NAME_MAP is one flat hash: port -> oid)
StateReaders = dict[str, dict[str, Callable[[], Table]]]  # DB -> table -> reader (read at request time)


class StateSource(Protocol):
    """A switch's live state databases (APPL_DB, STATE_DB, COUNTERS_DB)."""

    def tables(self) -> StateReaders:
        """DB -> table -> a reader returning `{key: {field: value}}` (flat hashes: `{field: value}`)."""
        ...


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
    def state(self) -> StateSource:
        """The live state the agent serves from APPL_DB, STATE_DB and COUNTERS_DB."""
        ...

    def config(self) -> ConfigDb:
        """The committed CONFIG_DB as config_db.json (`{TABLE: {key: {field: value}}}`)."""
        ...

    def validate(self, new: ConfigDb) -> list[str]:
        """Every reason `new` cannot be committed; empty when it can."""
        ...

    def commit(self, new: ConfigDb) -> None:
        """Make `new` the committed config whole, or raise SetRejected having changed nothing."""
        ...

    def recover(self) -> None:
        """Finish or undo a commit a crash interrupted; runs before the agent serves anything."""
        ...
