"""What a pattern's flows carry as a collective: the sends, their bytes and order (pure, no I/O).

The size is nccl-tests' (`-b`/`-e`): the message per rank, S. Bus bandwidth follows the IETF BMWG
AI-fabric drafts' algo_factor per collective, whatever algorithm a library would pick (nccl-tests'
PERFORMANCE.md gives the same factors): AllReduce 2(n-1)/n; AllGather, ReduceScatter and AllToAll
(n-1)/n; a list of pairs is point-to-point (SendRecv), 1.

- ring-allreduce, all-gather, reduce-scatter: each rail-local ring (GPU i of every server) runs its
  own collective, all rings at once, as NCCL's ring algorithm does: AllReduce in 2(m-1) steps,
  AllGather and ReduceScatter in m-1, for a ring of m ranks; in each step every GPU sends S/m to the
  next one, once it has the chunk the previous step brought it (and has sent its own previous one).
- all-to-all: every GPU sends S/n to every other GPU at once (n: every GPU taking part); the chunks
  between GPUs of one server go over NVLink, not the fabric, and take no time here.
- pairs: each pair sends S once, all pairs at once.
A GPU pair's chunk is split evenly over its queue pairs (whole bytes, at least one: nccl-tests' sizes
are counts of elements).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from twin.model.traffic import Flow, Gpu, PatternName

COLLECTIVES: dict[str, str] = {"ring-allreduce": "AllReduce", "all-gather": "AllGather",
                               "reduce-scatter": "ReduceScatter", "all-to-all": "AllToAll", "pairs": "SendRecv"}
DEFAULT_MESSAGE_BYTES = 128 * 2**20   # nccl-tests README's quick example scans up to 128M (-b 8 -e 128M)
RING_STEPS: dict[str, int] = {   # a ring of m ranks runs RING_STEPS * (m - 1) steps
    "ring-allreduce": 2, "all-gather": 1, "reduce-scatter": 1}


def algo_factor(collective: str, n: int) -> float:
    """The drafts' bus bandwidth factor: busbw = algbw x algo_factor."""
    if collective == "SendRecv" or n < 1:
        return 1.0
    if collective == "AllReduce":
        return 2 * (n - 1) / n
    return (n - 1) / n


@dataclass(frozen=True)
class Send:
    flow: int                     # the flow (queue pair) it goes over: an index into the pattern's flows
    step: int                     # its step of a ring (0 for the collectives without steps)
    bytes: int
    after: tuple[int, ...] = ()   # the sends (indices) that must end before it starts


@dataclass(frozen=True)
class Schedule:
    collective: str
    n: int                        # ranks (a ring's, for the rail-local rings)
    message_bytes: int
    sends: list[Send]

    @property
    def algo_factor(self) -> float:
        return algo_factor(self.collective, self.n)


def _by_pair(flows: list[Flow]) -> dict[tuple[str, str], list[int]]:
    pairs: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, f in enumerate(flows):
        pairs[(f.src, f.dst)].append(k)
    return pairs


def ring_size(start: str, nxt: Mapping[str, str]) -> int:
    size, gpu = 1, nxt[start]
    while gpu != start:
        size, gpu = size + 1, nxt[gpu]
    return size


def _ring(pattern: str, flows: list[Flow], message_bytes: int) -> Schedule:
    pairs = _by_pair(flows)
    nxt = {src: dst for src, dst in pairs}
    prev = {dst: src for src, dst in pairs}
    sizes = {src: ring_size(src, nxt) for src in nxt}
    per = RING_STEPS[pattern]
    sends: list[Send] = []
    sent: dict[tuple[str, int], list[int]] = {}    # (sender, step) -> its sends of that step
    for step in range(max(per * (m - 1) for m in sizes.values())):
        for (src, _), ks in pairs.items():
            m = sizes[src]
            if step >= per * (m - 1):
                continue
            waits = tuple(sent.get((prev[src], step - 1), [])) if step else ()
            chunk = max(1, message_bytes // m // len(ks))
            mine = []
            for k in ks:
                own = tuple(i for i in sent.get((src, step - 1), []) if sends[i].flow == k)
                mine.append(len(sends))
                sends.append(Send(k, step, chunk, waits + own))
            sent[(src, step)] = mine
    return Schedule(COLLECTIVES[pattern], max(sizes.values()), message_bytes, sends)


def schedule(pattern: PatternName, flows: list[Flow], gpus: Mapping[str, Gpu], message_bytes: int) -> Schedule:
    """The sends of `pattern` over `flows`, for a message of `message_bytes` per rank. `gpus`: every GPU
    taking part (an all-to-all's n counts the GPUs of one server too)."""
    if pattern in RING_STEPS:
        return _ring(pattern, flows, message_bytes)
    pairs = _by_pair(flows)
    n = len(gpus)
    share = message_bytes // n if pattern == "all-to-all" else message_bytes
    sends = [Send(k, 0, max(1, share // len(ks))) for ks in pairs.values() for k in ks]
    sends.sort(key=lambda s: s.flow)
    return Schedule(COLLECTIVES[pattern], n, message_bytes, sends)
