"""What SONiC's counter commands read from a switch's redis, and how SONiC's connector answers.

The commands read whole hashes (`get_all`) and single fields (`get`) of COUNTERS_DB, APPL_DB, STATE_DB
and CONFIG_DB. On a switch these go through swsscommon's SonicV2Connector, whose `get_all` of a key that
does not exist is an empty dict and whose `get` of a missing field is None; the scripts' `is None` checks
on whole maps (queuestat's "COUNTERS_QUEUE_NAME_MAP is empty!") therefore never fire on a switch: a
missing map is an empty one.
"""

from __future__ import annotations

from typing import Protocol


class Hashes(Protocol):
    """A switch's redis databases, read a hash at a time."""

    def hgetall(self, db: str, key: str) -> dict[str, str]:
        """Every field of hash `key` in database `db` ({} when there is none)."""
        ...


def get(data: Hashes, db: str, key: str, field: str) -> str | None:
    """SonicV2Connector.get: one field, None when the hash or the field is missing."""
    return data.hgetall(db, key).get(field)


def port_name_map(data: Hashes) -> dict[str, str]:
    """COUNTERS_PORT_NAME_MAP: port -> its counters' oid (orchagent's, from syncd's port list)."""
    return data.hgetall("COUNTERS_DB", "COUNTERS_PORT_NAME_MAP")


def port_state(data: Hashes, port: str) -> str:
    """portstat's STATE column from APPL_DB PORT_TABLE: X admin down, U up, D down, N/A unknown."""
    row = data.hgetall("APPL_DB", f"PORT_TABLE:{port}")
    admin, oper = row.get("admin_status"), row.get("oper_status")
    if admin is None or oper is None:
        return "N/A"
    if admin.upper() == "DOWN":
        return "X"
    if admin.upper() == "UP" and oper.upper() == "UP":
        return "U"
    if admin.upper() == "UP" and oper.upper() == "DOWN":
        return "D"
    return "N/A"


def port_speed(data: Hashes, port: str) -> int | str:
    """The port's speed in Mb/s as portstat takes it: STATE_DB's while the port is up, else APPL_DB's;
    N/A when neither has one."""
    speed = get(data, "STATE_DB", f"PORT_TABLE|{port}", "speed")
    oper = get(data, "APPL_DB", f"PORT_TABLE:{port}", "oper_status")
    if speed is None or speed == "N/A" or oper != "up":
        speed = get(data, "APPL_DB", f"PORT_TABLE:{port}", "speed")
    return int(speed) if speed is not None else "N/A"
