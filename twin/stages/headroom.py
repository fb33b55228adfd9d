"""The PFC headroom a lossless priority group needs: the bytes that still arrive after it asks its
neighbour to pause (pure arithmetic).

IEEE 802.1Qbb's headroom (its Annex N, and SONiC's buffer_headroom_<vendor>.lua in sonic-swss cfgmgr,
which buffermgrd runs in the dynamic buffer model) adds up what is on its way once the priority group
crosses its threshold:

    xoff >= 2 x MTU + 2 x cable length x 5 ns/m x speed / 8 + response

- 2 x MTU: the frame the switch is sending when it decides to pause (the PFC frame waits behind it),
  and the frame the sender has begun when the PFC frame reaches it (a frame is never cut);
- the cable's round trip: the PFC frame's way to the sender and the last bits' way back, at 5 ns per
  metre (light in fibre and copper, about 2/3 c; sonic-swss takes 198,000,000 m/s);
- response: how long the sender's MAC may take to act on PFC, IEEE 802.3 Annex 31B.3.7's pause quanta
  per speed (512 bit times each), the table sonic-swss' buffer_headroom_mellanox.lua carries.

The ASIC's own terms (its cell size, the share of small packets, pipeline and PHY latency, a gearbox)
are left out: they only add, so a priority group short here is short on any ASIC, while one that
passes may still be short on an ASIC that counts in large cells. A model, in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

PROPAGATION_NS_PER_M = 5
QUANTUM_BITS = 512
# IEEE 802.3 Annex 31B.3.7, as sonic-swss cfgmgr/buffer_headroom_mellanox.lua lists it (Mb/s: quanta)
PAUSE_QUANTA = {100: 1, 1000: 2, 10000: 67, 25000: 80, 40000: 118, 50000: 147, 100000: 394, 200000: 453,
                400000: 905, 800000: 905}


def pause_quanta(speed_mbps: int) -> int:
    """The quanta of the listed speed, of the next listed speed above an unlisted one, of the fastest above."""
    above = [s for s in sorted(PAUSE_QUANTA) if s >= speed_mbps]
    return PAUSE_QUANTA[above[0] if above else max(PAUSE_QUANTA)]


@dataclass(frozen=True)
class Headroom:
    """What a lossless priority group must absorb after it sends PFC, in bytes, term by term."""

    speed_mbps: int
    cable_m: int
    mtu: int
    frames: int            # 2 x MTU
    cable: int             # the cable's round trip at line rate
    response: int          # the sender's response time at line rate

    @property
    def needed(self) -> int:
        return self.frames + self.cable + self.response


# bytes in flight on a metre of cable, both ways: 2 x 5 ns x speed (Mb/s x 1e6) / 8 = speed / METRE_DIVISOR
METRE_DIVISOR = 8 * 10**9 // (2 * PROPAGATION_NS_PER_M * 10**6)


def cable_bytes(cable_m: int, speed_mbps: int) -> int:
    """The cable's round trip at line rate, whole bytes (rounded up)."""
    return -(-cable_m * speed_mbps // METRE_DIVISOR)


def headroom(speed_mbps: int, cable_m: int, mtu: int) -> Headroom:
    return Headroom(speed_mbps=speed_mbps, cable_m=cable_m, mtu=mtu, frames=2 * mtu,
                    cable=cable_bytes(cable_m, speed_mbps),
                    response=pause_quanta(speed_mbps) * QUANTUM_BITS // 8)


def longest_cable(xoff: int, speed_mbps: int, mtu: int) -> int:
    """The longest cable (whole metres) whose round trip `xoff` still covers; -1 when none does."""
    room = xoff - headroom(speed_mbps, 0, mtu).needed
    return -1 if room < 0 or speed_mbps <= 0 else room * METRE_DIVISOR // speed_mbps
