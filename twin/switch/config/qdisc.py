"""Program a switch's egress queues from CONFIG_DB, as SONiC's qosorch programs the ASIC's: `tc -b` lines, pure.

Each front-panel port whose QoS maps apply (twin.stages.port_qos: DSCP_TO_TC_MAP and TC_TO_QUEUE_MAP
through PORT_QOS_MAP) gets an htb tree on its kernel device, the port's egress:

- root `1:` htb, and class `1:1` at the port's line rate scaled down by RATE_SCALE (PORT `speed` in
  Mb/s; a 400G port is served at 4 Gbit/s, which a namespace's traffic can fill);
- one class per unicast queue q, `1:1q` (hex minor 0x10 + q), with a pfifo of LEAF_LIMIT packets
  (handle `1q:`), the queue itself. Its scheduler (QUEUE -> SCHEDULER): STRICT queues are served first,
  the higher queue number before the lower (htb prio 0, 1, ... in that order); DWRR and WRR queues
  share what is left in proportion to their weights (htb's deficit round robin, quantum = weight x the
  port's MTU), one prio level below the strict ones. Each class's own rate is the scheduler's `cir`
  (scaled; 8 bit/s without one, so every byte is borrowed from the port and shared by prio and
  quantum), its ceiling `pir` (scaled) or the port's rate;
- u32 filters on the DSCP field (IPv4 `dsfield`, IPv6 `priority`, mask 0xfc) send each DSCP to its
  queue's class: the queue most DSCPs go to is one catch-all filter per family, the others a filter per
  aligned block of DSCPs (26 alone, 24-27 as one); a packet that is not IP goes to the queue of
  traffic class 0 (a filter for every protocol; htb's default class is queue 0's).

A port without QoS maps gets nothing: every packet leaves by the device's own queue, counted by the
state producers as queue 0's (twin.switch.state.queues).

Changes keep the classes (and their counters): a class whose scheduler or rate changed is replaced in
place; a changed classification deletes the port's filters and adds the new ones in the same batch;
a port that loses its maps has its tree deleted. htb cannot change its own default class, which is why
traffic class 0's queue is a filter of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from twin.stages.port_qos import DSCPS, QUEUES, PortQos, ports_qos

RATE_SCALE = 100        # a port of S Mb/s is served at S/RATE_SCALE Mbit/s
DEFAULT_SPEED_MBPS = 100_000
DEFAULT_MTU = 9100      # portmgrd's default
LEAF_LIMIT = 1000       # packets a queue holds (pfifo), the kernel's default txqueuelen
MIN_RATE_BPS = 8        # a class's own rate without `cir`: it borrows every byte from the port
ROOT = "1:"
PORT_CLASS = "1:1"
QUEUE_MINOR = 0x10      # queue q is class 1:(0x10 + q), its pfifo (0x10 + q):
HTB_PRIOS = 8           # htb's priority levels, 0 the highest


def queue_class(queue: int) -> str:
    return f"1:{QUEUE_MINOR + queue:x}"


def queue_handle(queue: int) -> str:
    return f"{QUEUE_MINOR + queue:x}:"


def queue_of_leaf(parent: int) -> int | None:
    """The queue whose pfifo hangs under the class `parent` (a tcm_parent: major << 16 | minor), None when
    it is not one of a port's queue classes."""
    major, minor = parent >> 16, parent & 0xFFFF
    return minor - QUEUE_MINOR if major == 1 and QUEUE_MINOR <= minor < QUEUE_MINOR + QUEUES else None


@dataclass(frozen=True)
class QueueClass:
    prio: int
    rate: int       # bit/s
    ceil: int       # bit/s
    quantum: int    # bytes


@dataclass(frozen=True)
class Egress:
    """What one port's tree holds: its rate, its queues' classes, its filters (lines after `dev X`)."""

    rate: int
    burst: int
    classes: tuple[QueueClass, ...]
    filters: tuple[str, ...]


def _blocks(values: set[int]) -> list[tuple[int, int]]:
    """`values` (DSCPs) as aligned blocks (first, size), the largest first, none overlapping."""
    out, left = [], set(values)
    for d in range(DSCPS):
        if d not in left:
            continue
        size = 1
        while d % (size * 2) == 0 and d + size * 2 <= DSCPS and all(x in left for x in range(d, d + size * 2)):
            size *= 2
        out.append((d, size))
        left -= set(range(d, d + size))
    return out


def _filters(qos: PortQos) -> tuple[str, ...]:
    """The port's u32 filters: DSCP blocks (prio 1 IPv4, 2 IPv6), the catch-all queue of IP (3, 4), then
    every other protocol to traffic class 0's queue (5)."""
    by_queue: dict[int, set[int]] = {}
    for dscp, queue in enumerate(qos.dscp_queue):
        by_queue.setdefault(queue, set()).add(dscp)
    counts = Counter({q: len(_blocks(ds)) for q, ds in by_queue.items()})
    catch_all = min(by_queue, key=lambda q: (-counts[q], q != qos.other_queue, q))
    lines = []
    for family, prio, match in (("ip", 1, "ip dsfield"), ("ipv6", 2, "ip6 priority")):
        for queue in sorted(q for q in by_queue if q != catch_all):
            for first, size in _blocks(by_queue[queue]):
                mask = (0x3F & ~(size - 1)) << 2
                lines.append(f"parent {ROOT} protocol {family} prio {prio} u32 match {match} "
                             f"0x{first << 2:02x} 0x{mask:02x} flowid {queue_class(queue)}")
    if catch_all != qos.other_queue:
        lines += [f"parent {ROOT} protocol {family} prio {prio} u32 match u32 0 0 flowid {queue_class(catch_all)}"
                  for family, prio in (("ip", 3), ("ipv6", 4))]
    if qos.other_queue != 0:
        lines.append(f"parent {ROOT} protocol all prio 5 u32 match u32 0 0 flowid {queue_class(qos.other_queue)}")
    return tuple(lines)


def _classes(qos: PortQos, rate: int, mtu: int) -> tuple[QueueClass, ...]:
    strict = sorted((q for q in range(QUEUES) if qos.schedulers[q].type == "STRICT"), reverse=True)
    shared_prio = min(len(strict), HTB_PRIOS - 1)
    out = []
    for queue, sched in enumerate(qos.schedulers):
        if sched.type == "STRICT":
            prio, quantum = min(strict.index(queue), HTB_PRIOS - 1), mtu
        else:
            prio, quantum = shared_prio, sched.weight * mtu
        own = max(MIN_RATE_BPS, sched.cir * 8 // RATE_SCALE) if sched.cir else MIN_RATE_BPS
        ceil = min(rate, max(MIN_RATE_BPS, sched.pir * 8 // RATE_SCALE)) if sched.pir else rate
        out.append(QueueClass(prio=prio, rate=min(own, ceil), ceil=ceil, quantum=quantum))
    return tuple(out)


def _int(value: Any, default: int) -> int:
    try:
        return int(str(value))
    except ValueError:
        return default


def egress(qos: PortQos, port_row: Mapping[str, Any]) -> Egress:
    """The tree of a port with this QoS and PORT row (speed, mtu)."""
    speed = _int(port_row.get("speed"), DEFAULT_SPEED_MBPS) or DEFAULT_SPEED_MBPS
    mtu = _int(port_row.get("mtu"), DEFAULT_MTU) or DEFAULT_MTU
    rate = speed * 1_000_000 // RATE_SCALE
    return Egress(rate=rate, burst=max(2 * mtu, rate // 8 // 1000), classes=_classes(qos, rate, mtu),
                  filters=_filters(qos))


def port_devices(db: Mapping[str, Any], ifmap: Mapping[str, str] | None = None) -> dict[str, str]:
    """{port: kernel device} of every PORT of `db` (only the ports `ifmap` names, when given: the ones
    wired here)."""
    ports = db.get("PORT", {}) if isinstance(db.get("PORT"), Mapping) else {}
    return {p: (ifmap or {}).get(p, p) for p in ports if not ifmap or p in ifmap}


def port_egress(db: Mapping[str, Any], ifmap: Mapping[str, str] | None = None) -> dict[str, Egress]:
    """{kernel device: its tree} for every port of `db` with QoS (port_devices); ports alike share one."""
    devices = port_devices(db, ifmap)
    trees: dict[tuple[PortQos, Any, Any], Egress] = {}
    out = {}
    for port, qos in ports_qos(db, list(devices)).items():
        row = db["PORT"][port]
        key = (qos, row.get("speed"), row.get("mtu"))
        if key not in trees:
            trees[key] = egress(qos, row)
        out[devices[port]] = trees[key]
    return out


QOS_TABLES = ("PORT", "PORT_QOS_MAP", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "SCHEDULER",
              "QUEUE")


def _class_line(dev: str, parent: str, classid: str, prio: int | None, rate: int, ceil: int, burst: int,
                quantum: int) -> str:
    """A class; its own rate's burst is `burst` when that rate is more than a token (tc's default
    otherwise: 8 bit/s cannot hold a burst of any size), its ceiling's always."""
    prio_text = f" prio {prio}" if prio is not None else ""
    own = f" burst {burst}b" if rate > MIN_RATE_BPS else ""
    return (f"class replace dev {dev} parent {parent} classid {classid} htb rate {rate}bit ceil {ceil}bit"
            f"{own} cburst {burst}b{prio_text} quantum {quantum}")


def _queue_lines(dev: str, tree: Egress, queues: Iterable[int]) -> list[str]:
    return [_class_line(dev, PORT_CLASS, queue_class(q), c.prio, c.rate, c.ceil, tree.burst, c.quantum)
            for q in queues for c in (tree.classes[q],)]


def _filter_lines(dev: str, tree: Egress, replace: bool) -> list[str]:
    return ([f"filter del dev {dev} parent {ROOT}"] if replace else []) + \
        [f"filter add dev {dev} {line}" for line in tree.filters]


def tree_lines(dev: str, tree: Egress, root: bool = True) -> list[str]:
    """Every line of a port's tree; `root` False: the root qdisc exists (a restarted agent's switch), so
    the rest is replaced in place and its filters made anew."""
    lines = [f"qdisc add dev {dev} root handle {ROOT} htb default {QUEUE_MINOR:x}"] if root else []
    lines.append(_class_line(dev, ROOT, PORT_CLASS, None, tree.rate, tree.rate, tree.burst, tree.burst))
    lines += _queue_lines(dev, tree, range(QUEUES))
    lines += [f"qdisc replace dev {dev} parent {queue_class(q)} handle {queue_handle(q)} pfifo limit {LEAF_LIMIT}"
              for q in range(QUEUES)]
    return lines + _filter_lines(dev, tree, replace=not root)


def _changed(dev: str, old: Egress, new: Egress) -> list[str]:
    lines = []
    if (old.rate, old.burst) != (new.rate, new.burst):
        lines.append(_class_line(dev, ROOT, PORT_CLASS, None, new.rate, new.rate, new.burst, new.burst))
    lines += _queue_lines(dev, new, [q for q in range(QUEUES) if old.classes[q] != new.classes[q]
                                     or old.burst != new.burst])
    if old.filters != new.filters:
        lines += _filter_lines(dev, new, replace=True)
    return lines


def qdisc_changes(old: Mapping[str, Any], new: Mapping[str, Any], ifmap: Mapping[str, str] | None = None) -> list[str]:
    """`tc -b` lines turning the queues programmed from `old` into those of `new` (none, at once, when
    none of the tables the queues follow changed)."""
    if all(old.get(t) == new.get(t) for t in QOS_TABLES):
        return []
    was, now = port_egress(old, ifmap), port_egress(new, ifmap)
    lines = [f"qdisc del dev {dev} root" for dev in sorted(set(was) - set(now))]
    for dev in sorted(now):
        lines += tree_lines(dev, now[dev]) if dev not in was else _changed(dev, was[dev], now[dev])
    return lines


def qdisc_lines(db: Mapping[str, Any], ifmap: Mapping[str, str] | None = None) -> list[str]:
    """Everything a freshly created switch namespace needs for `db`'s queues."""
    return qdisc_changes({}, db, ifmap)


def qdisc_reconcile(db: Mapping[str, Any], rooted: set[str], ifmap: Mapping[str, str] | None = None,
                    refresh: bool = True) -> list[str]:
    """Lines making the kernel hold `db`'s queues whatever it held. `rooted`: the devices that have an htb
    root 1: (kernel_state.read_rooted); with `refresh` their trees are programmed again in place (their
    classes keep their counters), without it they are taken as they are. Other devices with QoS get
    their tree; rooted devices without QoS have theirs deleted."""
    now = port_egress(db, ifmap)
    lines = [f"qdisc del dev {dev} root" for dev in sorted((rooted & set(port_devices(db, ifmap).values())) - set(now))]
    for dev in sorted(now):
        if dev not in rooted or refresh:
            lines += tree_lines(dev, now[dev], root=dev not in rooted)
    return lines
