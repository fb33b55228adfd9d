"""The order in which a lab's nodes are prepared and launch their FRR (twin.runtime.bringup).

A fabric's sessions open about a second after the first bgpds start (FRR's start timer, BGP_START_S:
a new peer's first connect), provided the neighbours they connect to are listening by then; each
update group then waits out its coalesce time (1 s and 50 ms a peer) before announcing anything.
So what a 2-tier Clos's bring-up waits for is its spines' start, and that its leaves start less
than a second later. The floor starts them that way by launching one daemon after the other,
spines first; twin did not: every node was prepared before any launched, and every leaf's bgpd
started with a spine's.

Waves. BGP speakers are prepared and launched in waves where no two neighbours share one (a greedy
colouring of the session graph: spines, then leaves, in a 2-tier Clos). A node is prepared once the
earlier waves are (the spines get the machine first) and launches once they have launched, so its
bgpd starts after theirs have read their config and armed their timers. Two neighbours started
within milliseconds of each other connect to each other at the same moment a second later, and
FRR 8.4 resolves that connection collision by now and then resetting both ("unexpected packet
received in state OpenSent"): that session came up a second or more later, in 2 of 10 rounds of
`twin up` on the default lab (none of 10 in waves). Nodes without BGP sessions (servers) are in no wave: prepared last,
launched whenever they are ready.

Early launch. A node launches as soon as it is prepared while the first launched bgpd is still in
its first second and this node would be listening before that second ends (judged by the longest
launch so far). A node prepared later launches once every node is prepared, as all did before:
preparation beside converging bgpds competes with them (at 64 x 128 it took 2-12 s a switch that
way, against 11-14 s for all 192 before any launch), and a bgpd that starts after its neighbours'
first connect waits for its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from twin.model.plan import NodePlan
from twin.runtime.wiring import WORKERS, parallel

BGP_START_S = 1.0  # FRR's BGP_INIT_START_TIMER: a new peer's first connect, a second after its bgpd read its config


def waves(nodes: Sequence[NodePlan]) -> dict[str, int]:
    """node -> its wave, for the nodes with BGP sessions: in plan order, the smallest wave none of
    its neighbours already has."""
    peers: dict[str, set[str]] = {n.name: set() for n in nodes if n.neighbors}
    for n in nodes:
        for nb in n.neighbors:
            if n.name in peers and nb.name in peers:
                peers[n.name].add(nb.name)
                peers[nb.name].add(n.name)
    wave: dict[str, int] = {}
    for name, around in peers.items():
        taken = {wave[p] for p in around if p in wave}
        wave[name] = min(w for w in range(len(taken) + 1) if w not in taken)
    return wave


class LaunchOrder:
    """Per node: when it may be prepared, whether it launches early, and when its turn to launch has
    come. Thread-safe: nodes are prepared and launched by several threads. `abort` (a node failed)
    ends every wait."""

    def __init__(self, nodes: Sequence[NodePlan], window: float = BGP_START_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self.wave = waves(nodes)
        self._clock = clock
        self._index = {n.name: i for i, n in enumerate(nodes)}
        self._unprepared = set(self.wave)
        self._unlaunched = set(self.wave)
        self._later: set[str] = set()
        self._first: float | None = None  # when the first launch was let go
        self._longest = 0.0                # the longest launch so far
        self._aborted = False
        self._cond = threading.Condition()

    def ordered(self, nodes: Sequence[NodePlan]) -> list[NodePlan]:
        """`nodes` in the order to prepare and launch them: wave by wave, then those in none, each
        in plan order."""
        last = len(set(self.wave.values()))
        return sorted(nodes, key=lambda n: (self.wave.get(n.name, last), self._index[n.name]))

    def wait_to_prepare(self, node: NodePlan) -> bool:
        """Until every node of `node`'s earlier waves is prepared; False when aborted meanwhile."""
        with self._cond:
            while not self._aborted and self._earlier(node) & self._unprepared:
                self._cond.wait()
            return not self._aborted

    def prepared(self, node: NodePlan) -> None:
        with self._cond:
            self._unprepared.discard(node.name)
            self._cond.notify_all()

    def early(self, node: NodePlan) -> bool:
        """`node` is prepared: whether it launches now (then report it with `launched`) or once
        every node is prepared. Waits until every node of its earlier waves has launched, or one
        of them was left for later: then this node is too."""
        with self._cond:
            earlier = self._earlier(node)
            while not self._aborted and earlier & self._unlaunched and not earlier & self._later:
                self._cond.wait()
            now = self._clock()
            first = now if self._first is None else self._first
            go = (not self._aborted and not earlier & self._later
                  and now - first + self._longest < self.window)
            if go:
                self._first = first
            else:
                self._later.add(node.name)
                self._cond.notify_all()
            return go

    def wait_turn(self, node: NodePlan) -> bool:
        """Until every node of `node`'s earlier waves has launched; False when aborted meanwhile."""
        with self._cond:
            while not self._aborted and self._earlier(node) & self._unlaunched:
                self._cond.wait()
            return not self._aborted

    def launched(self, node: NodePlan, seconds: float) -> None:
        """`node` has launched; it took `seconds`."""
        with self._cond:
            self._unlaunched.discard(node.name)
            self._later.discard(node.name)
            self._longest = max(self._longest, seconds)
            self._cond.notify_all()

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    def _earlier(self, node: NodePlan) -> set[str]:
        wave = self.wave.get(node.name)
        return set() if wave is None else {n for n, w in self.wave.items() if w < wave}


def start_nodes(nodes: Sequence[NodePlan], prepare: Callable[[NodePlan], None],
                launch: Callable[[NodePlan], list[str]], prepared: Callable[[], None],
                on_prepared: Callable[[], None], on_launched: Callable[[], None],
                window: float = BGP_START_S) -> list[str]:
    """Prepare every node, WORKERS at a time, launching each early where LaunchOrder lets it; then
    `prepared()`; then launch the others, WORKERS at a time, wave by wave. Returns the launches'
    notes in `nodes`' order. A failure ends every wait and is raised once nothing of the bring-up
    runs any longer."""
    order = LaunchOrder(nodes, window)
    notes: dict[str, list[str]] = {}

    def timed_launch(node: NodePlan) -> None:
        began = time.monotonic()
        try:
            notes[node.name] = launch(node)
        except BaseException:
            order.abort()
            raise
        order.launched(node, time.monotonic() - began)
        on_launched()

    def launch_early(node: NodePlan) -> None:
        if order.early(node):
            timed_launch(node)

    def launch_later(node: NodePlan) -> list[str]:
        if order.wait_turn(node):
            timed_launch(node)
        return []

    ordered = order.ordered(nodes)
    with ThreadPoolExecutor(max_workers=WORKERS) as launching:
        offered: list[Future[None]] = []

        def prepare_then_offer(node: NodePlan) -> list[str]:
            if not order.wait_to_prepare(node):
                return []
            try:
                prepare(node)
            except BaseException:
                order.abort()  # the later waves wait for this node
                raise
            order.prepared(node)
            offered.append(launching.submit(launch_early, node))
            return []

        try:
            parallel(ordered, prepare_then_offer, on_prepared)
            prepared()
        except BaseException:
            order.abort()
            raise
        for early in offered:
            early.result()
    parallel([n for n in ordered if n.name not in notes], launch_later, lambda: None)
    return [note for n in nodes for note in notes.get(n.name, [])]
