"""portsorch's flap counters of the front-panel ports: APPL_DB PORT_TABLE `flap_count`, `last_down_time` and
`last_up_time`, as sonic-swss 202505 keeps them (orchagent/portsorch.cpp updateDbPortFlapCount, read, not
copied), and as `show interfaces flap` reads them.

Every change of a port's oper status counts one flap, down and up alike (a link that goes down and comes
back counts two), and stamps the change's time in UTC as `Www Mmm dd hh:mm:ss yyyy`, in
`last_down_time` or `last_up_time`. A port starts at `flap_count` "0" with oper status down (portsorch
initialises both so when APPL_DB has none), so a port found up counts its first flap when it comes up.
A producer that starts again on a running switch takes each port's count, times and last oper status
from APPL_DB first (`seed`), as portsorch does from APPL_DB's PORT_TABLE when swss starts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

Row = dict[str, str]
TIME_FORMAT = "%a %b %d %H:%M:%S %Y"


def stamp(now: float) -> str:
    """portsorch's timestamp of an oper status change: strftime("%a %b %d %H:%M:%S %Y", gmtime)."""
    return time.strftime(TIME_FORMAT, time.gmtime(now))


class FlapCounter:
    """Each port's last oper status, flap count and times: one small tuple a port (a 64 x 128 fabric has
    16,384 ports)."""

    def __init__(self) -> None:
        self.ports: dict[str, tuple[str, int, str | None, str | None]] = {}   # oper, count, down, up

    def seed(self, rows: Mapping[str, Mapping[str, str]]) -> None:
        """Ports as APPL_DB's PORT_TABLE rows {port: fields} left them (those with a flap_count)."""
        for port, row in rows.items():
            if str(row.get("flap_count", "")).isdigit():
                self.ports[port] = (str(row.get("oper_status", "down")), int(row["flap_count"]),
                                    row.get("last_down_time"), row.get("last_up_time"))

    def observe(self, port: str, oper: str, now: float) -> Row:
        """The port's flap fields once its oper status is `oper` at `now` (unix seconds)."""
        last, count, down, up = self.ports.get(port, ("down", 0, None, None))
        if oper != last:
            count += 1
            if oper == "up":
                up = stamp(now)
            else:
                down = stamp(now)
        self.ports[port] = (oper, count, down, up)
        row = {"flap_count": str(count)}
        if down is not None:
            row["last_down_time"] = down
        if up is not None:
            row["last_up_time"] = up
        return row
