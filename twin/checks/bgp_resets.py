"""BGP sessions that went down after they were Established while a lab came up, named with bgpd's
own reason, for a note beside the time to healthy.

On a fabric of one machine's namespaces, all switches share its CPUs. When sessions open faster
than those CPUs converge them, bgpds miss their peers' keepalives, hold timers expire, sessions reset
and open again, and the load feeds itself: at 64 x 128 on 2 CPUs with FRR's launch sped up, the
load average reached 700 and the lab was healthy only after 641 s instead of 266-344 s, every session
Established again in the end; even at the launch's own pace about 200-400 of the 16,384 session
ends reset, and as many on the bare FRR floor of the same size with SONiC's routing config (225 in
one run of bench/floor_routing.py's floor, against 194 in twin's run beside it). The lab reached
healthy all the same, so nothing failed: only bgpd's counters (`connectionsDropped`,
`lastResetDueTo`, `lastNotificationReason`) tell that part of the time went to sessions opened
twice. A switch with a CPU of its own does not fall behind that way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from twin.host.rundir import node_dir
from twin.lab.running import RunningLab
from twin.switch.frr.frr_vty import ask_json

REASON_SWITCHES = 8   # switches asked for their sessions' last reset reason (the most reset first)
HOLD_TIMER = "Hold Timer Expired"   # the NOTIFICATION bgpd sends when a peer's keepalives stopped arriving


# What FRR 8.4's bgpd sets lastResetDueTo to when nothing went down: a new neighbor not yet activated
# in any address family ("No AFI/SAFI activated for peer": every neighbor of SONiC's config, which says
# `no bgp default ipv4-unicast` and activates the peer group after), and nexthop tracking finding the
# peer reachable or not ("Waiting for peer OPEN", "Waiting for NHT"). A session that dropped with one of
# them left went down on a path that records no reason (bgpd.c peer_create, bgp_nht.c).
STATUS_NOT_CAUSE = frozenset({"No AFI/SAFI activated for peer", "Waiting for peer OPEN", "Waiting for NHT"})
NO_CAUSE = "no cause recorded by bgpd"


def reset_reasons(lab: RunningLab, resets: Mapping[str, int]) -> Counter[str]:
    """bgpd's last reset reason -> how many session ends gave it, over the REASON_SWITCHES switches
    of `resets` (switch -> its sessions that went down) with the most, read from
    `show bgp neighbors json`."""
    asked = sorted(resets, key=lambda s: (-resets[s], s))[:REASON_SWITCHES]
    reasons: Counter[str] = Counter()
    for switch in asked:
        neighbors = ask_json(node_dir(lab.state.lab, switch), "bgpd", "show bgp neighbors json")
        if not isinstance(neighbors, dict):
            continue
        for row in neighbors.values():
            if isinstance(row, dict) and int(row.get("connectionsDropped") or 0) > 0:
                reasons[reset_reason(row)] += 1
    return reasons


def reset_reason(row: Mapping[str, object]) -> str:
    """A session's last reset as bgpd names it in `show bgp neighbors json`: the NOTIFICATION's reason
    where one was sent or received ("Hold Timer Expired", "Cease/Administrative Reset"), which
    lastResetDueTo reduces to "BGP Notification send"; else lastResetDueTo, unless it is one of the
    statuses bgpd records outside a reset (STATUS_NOT_CAUSE): then NO_CAUSE. After a hold timer
    expired at one end, FRR 8.4 showed the other end only such a status: both ends are counted, so
    the cause shows at one of them."""
    notification = row.get("lastNotificationReason")
    if notification:
        sent = "send" in str(row.get("lastResetDueTo") or "")
        return f"{notification} ({'sent' if sent else 'received'})"
    due = str(row.get("lastResetDueTo") or "")
    return NO_CAUSE if not due or due in STATUS_NOT_CAUSE else due


def resets_note(resets: Mapping[str, int], total: int, reasons: Counter[str]) -> str:
    """What `twin up` notes when sessions went down after Established before the lab was healthy."""
    ends = sum(resets.values())
    asked = min(len(resets), REASON_SWITCHES)
    why = ", ".join(f"{count} {reason}" for reason, count in reasons.most_common())
    note = (f"{ends} of {total} BGP session ends, on {len(resets)} switches, went down after they were "
            f"Established while the lab came up, and came back (bgpd's connectionsDropped)")
    note += f"; last reset on the {asked} switches with the most: {why}" if why else ""
    if any(reason.startswith(HOLD_TIMER) for reason in reasons):
        note += (". Expired hold timers mean bgpds missed their peers' keepalives: this machine's CPUs fell "
                 "behind the fabric, which a switch with a CPU of its own does not, so the time to healthy "
                 "measures this machine's load rather than the fabric's convergence (fewer switches, more "
                 "CPUs, or nothing else running on the machine tell them apart)")
    return note
