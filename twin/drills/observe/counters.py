"""Per-spine share of traffic, from the leaves' uplink counters.

`/proc/PID/net/dev` lists the interface counters of PID's network namespace, so reading it for
a process that lives in a leaf (its zebra) costs one small file read, no netlink dump and no
fork. A sampler thread reads every leaf's uplinks at a fixed interval and keeps the totals.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from twin.host.background import Background
from twin.model.errors import TwinError
from twin.model.plan import Plan


def tx_packets(text: str) -> dict[str, int]:
    """Interface -> transmitted packets, from the text of /proc/net/dev."""
    out = {}
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        fields = rest.split()
        if len(fields) >= 10:
            out[name.strip()] = int(fields[9])
    return out


def uplinks(plan: Plan) -> dict[str, dict[str, str]]:
    """leaf -> its kernel uplink interface -> the spine at the other end."""
    out: dict[str, dict[str, str]] = {}
    for leaf in plan.by_role("leaf"):
        for i in leaf.interfaces:
            if i.role == "fabric" and plan.node(i.peer_node).role == "spine":
                out.setdefault(leaf.name, {})[i.kernel] = i.peer_node
    return out


class SpineCounters:
    """Samples the per-spine sum of leaf uplink tx packets: `samples` is [(t, {spine: packets})]."""

    def __init__(self, plan: Plan, pids: dict[str, int], interval: float = 0.05) -> None:
        self.links = uplinks(plan)
        self.spines = sorted({s for m in self.links.values() for s in m.values()})
        self.paths = {leaf: Path(f"/proc/{pid}/net/dev") for leaf, pid in pids.items() if leaf in self.links}
        self.interval = interval
        self.samples: list[tuple[float, dict[str, int]]] = []
        self._worker = Background(self._run, "counters", "the uplink counter sampler")

    def read(self) -> dict[str, int]:
        totals = dict.fromkeys(self.spines, 0)
        for leaf, path in self.paths.items():
            try:
                counts = tx_packets(path.read_text())
            except OSError:
                continue
            for iface, spine in self.links[leaf].items():
                totals[spine] += counts.get(iface, 0)
        return totals

    def __enter__(self) -> SpineCounters:
        self.samples.append((time.time(), self.read()))
        self._worker.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """Stop sampling, take the last sample; the sampler's failure is raised unless another error is
        already on its way."""
        try:
            self._worker.stop()
        except TwinError:
            if exc_type is None:
                raise
        self.samples.append((time.time(), self.read()))

    def _run(self, stopping: threading.Event) -> None:
        while not stopping.wait(self.interval):
            self.samples.append((time.time(), self.read()))
