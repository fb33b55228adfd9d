"""The UDP source port of a RoCEv2 queue pair, as RDMA NICs derive it.

With no flow label set by the application, Linux's RDMA core (`rdma_get_udp_sport` in
include/rdma/ib_verbs.h, used by rxe, mlx5 and others for RoCEv2) makes a 20-bit flow label from the
local and remote queue pair numbers, `lqpn * rqpn` folded by xor at bits 20 and 40, then folds that
label into 14 bits and sets the two top bits: ports 0xC000-0xFFFF, the range the RoCEv2 annex
reserves for entropy. So the ECMP entropy of a GPU pair is its number of queue pairs, and which
ports they get depends only on the QP numbers. QP numbers are handed out in order from a base per
NIC, as NICs do; twin numbers them from `QPN_BASE` by GPU pair and queue pair, deterministically.
"""

from __future__ import annotations

FLOW_LABEL_MASK = 0xFFFFF          # IB_GRH_FLOWLABEL_MASK: 20 bits
UDP_SPORT_MIN = 0xC000             # IB_ROCE_UDP_ENCAP_VALID_PORT_MIN
QPN_BASE = 0x100                   # the first QP number a NIC hands out (QPN 0 and 1 are special)


def flow_label(lqpn: int, rqpn: int) -> int:
    """The flow label of a QP pair with no label of its own."""
    v = (lqpn * rqpn) & 0xFFFFFFFFFFFFFFFF
    v ^= v >> 20
    v ^= v >> 40
    return v & FLOW_LABEL_MASK


def udp_sport(label: int) -> int:
    """The UDP source port a flow label maps to (0xC000-0xFFFF)."""
    low, high = label & 0x03FFF, label & 0xFC000
    low ^= high >> 14
    return (low | UDP_SPORT_MIN) & 0xFFFF


class QpNumbers:
    """Each NIC's QP numbers, handed out in order as connections are made: a reliable-connected QP
    pair takes the next number at both ends (so A->B and B->A over one pair hash alike)."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def take(self, gpu: str) -> int:
        n = self._next.get(gpu, QPN_BASE)
        self._next[gpu] = n + 1
        return n

    def connect(self, src: str, dst: str) -> tuple[int, int]:
        """The local and remote QP numbers of a new queue pair from `src` to `dst`."""
        return self.take(src), self.take(dst)


def source_port(lqpn: int, rqpn: int) -> int:
    """The UDP source port of the queue pair (lqpn, rqpn)."""
    return udp_sport(flow_label(lqpn, rqpn))
