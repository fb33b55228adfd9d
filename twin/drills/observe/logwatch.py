"""BGP session events from FRR's own log: `%ADJCHANGE` lines with microsecond timestamps.

bgpd logs every session change with the reason (`BFD down received`, hold timer expiry,
admin shutdown) at the moment it acts on it; `log timestamp precision 6` gives the time to the
microsecond on the same wall clock the drill uses.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from twin.model.drill import SessionEvent

ADJCHANGE = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) BGP: .*%ADJCHANGE: neighbor "
                       r"([0-9a-fA-F.:]+)(?:\([^)]*\))? in vrf \S+ (Up|Down)\s*(.*)$")
# `%NOTIFICATION(Hard Reset): sent to neighbor 10.0.3.67 6/10 (Cease/BFD Down) 0 bytes`: why bgpd
# closed a session itself, which its ADJCHANGE line only calls "BGP Notification send".
NOTIFICATION = re.compile(r"%NOTIFICATION(?:\([^)]*\))?: sent to neighbor ([0-9a-fA-F.:]+)\S* \d+/\d+ \(([^)]*)\)")


def parse_line(line: str, node: str, names: dict[str, str]) -> SessionEvent | None:
    m = ADJCHANGE.match(line.strip())
    if not m:
        return None
    stamp, ip, state, reason = m.groups()
    fmt = "%Y/%m/%d %H:%M:%S.%f" if "." in stamp else "%Y/%m/%d %H:%M:%S"
    t = datetime.strptime(stamp, fmt).timestamp()  # FRR logs local time, as datetime assumes
    return SessionEvent(t=t, node=node, peer=names.get(ip, ip), state="up" if state == "Up" else "down",
                        reason=reason.strip())


class LogWatch:
    """Reads what each switch's bgpd has logged since the watch began."""

    def __init__(self, logs: dict[str, Path], names: dict[str, dict[str, str]]) -> None:
        self.logs = logs
        self.names = names
        self.offsets = {node: (path.stat().st_size if path.exists() else 0) for node, path in logs.items()}
        self.partial: dict[str, str] = {}
        self.causes: dict[tuple[str, str], str] = {}
        self.events: list[SessionEvent] = []

    def poll(self) -> list[SessionEvent]:
        new: list[SessionEvent] = []
        for node, path in self.logs.items():
            try:
                with path.open("r", errors="replace") as fh:
                    fh.seek(self.offsets[node])
                    chunk = fh.read()
                    self.offsets[node] = fh.tell()
            except OSError:
                continue
            text = self.partial.pop(node, "") + chunk
            lines = text.split("\n")
            if lines and lines[-1]:
                self.partial[node] = lines.pop()
            for line in lines:
                sent = NOTIFICATION.search(line)
                if sent:
                    self.causes[(node, sent.group(1))] = sent.group(2)
                    continue
                event = parse_line(line, node, self.names.get(node, {}))
                if event is None:
                    continue
                if event.reason == "BGP Notification send":
                    ip = next((k for k, v in self.names.get(node, {}).items() if v == event.peer), event.peer)
                    cause = self.causes.pop((node, ip), None)
                    if cause:
                        event = event.model_copy(update={"reason": f"{event.reason} ({cause})"})
                new.append(event)
        new.sort(key=lambda e: e.t)
        self.events += new
        return new
