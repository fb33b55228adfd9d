"""Failed logins slowed per client address, for gNMI, gNOI and SSH alike (pure: the caller's clock).

SONiC slows a failed password through PAM: sonic-gnmi checks it with PAM's `login` service
(pam_faildelay, 3 s) and sshd with pam_unix (about 2 s), each attempt on its own, so a client that
sends many at once is slowed only as much as the server's concurrency allows. Twin is stricter:
a client address's attempts are decided one after another, as if through one lock. Each failure
holds that address's next decision back for a delay that doubles with its consecutive failures
(2, 4, 8, 16 s at most), so a client learns at most one password verdict per delay however many
attempts it sends at once (while they fit in the horizon below; past it, as many as the caller
lets wait per horizon: twin.switch.access.call_gate lets 256). An attempt with the right password that
arrives while the address is held back waits its turn, and is then let in. No attempt waits more
than `horizon` (60 s): a client that sent many failures at once is answered within it and then
decided at once again, so an address is never locked out for longer. A success clears the address's failures; failures
older than `forget` are forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

BASE_DELAY_S = 2.0
MAX_DELAY_S = 16.0
HORIZON_S = 60.0
FORGET_S = 600.0
MAX_PEERS = 4096  # addresses remembered per switch; the oldest are forgotten past it


@dataclass(frozen=True)
class Verdict:
    """What one login attempt gets: let in or refused, and `at` when (the caller's clock)."""

    allowed: bool
    at: float


@dataclass
class _Peer:
    failures: int = 0
    last_failure: float = 0.0
    free_at: float = 0.0  # when this address's next attempt may be decided


class LoginThrottle:
    """Per client address: when its next attempt may be decided, and how long a failure holds it."""

    def __init__(self, base: float = BASE_DELAY_S, cap: float = MAX_DELAY_S, horizon: float = HORIZON_S,
                 forget: float = FORGET_S, max_peers: int = MAX_PEERS) -> None:
        if not 0 < base <= cap <= horizon:
            raise ValueError(f"login delays need 0 < base ({base}) <= cap ({cap}) <= horizon ({horizon})")
        self.base, self.cap, self.horizon, self.forget, self.max_peers = base, cap, horizon, forget, max_peers
        self._peers: dict[str, _Peer] = {}

    def decide(self, peer: str, authentic: bool, now: float) -> Verdict:
        """One attempt from `peer` arriving at `now`; attempts must be given in arrival order."""
        state = self._peers.get(peer)
        if state is None:
            if authentic:
                return Verdict(True, now)
            state = self._remember(peer, now)
        at = max(now, state.free_at)  # never beyond now + horizon: see below
        if authentic:
            state.failures = 0
            return Verdict(True, at)
        if at - state.last_failure > self.forget:
            state.failures = 0
        state.failures += 1
        state.last_failure = at
        state.free_at = min(at + min(self.base * 2 ** (state.failures - 1), self.cap), now + self.horizon)
        return Verdict(False, state.free_at)

    def __len__(self) -> int:
        return len(self._peers)

    def _remember(self, peer: str, now: float) -> _Peer:
        if len(self._peers) >= self.max_peers:
            self._prune(now)
        state = self._peers[peer] = _Peer()
        return state

    def _prune(self, now: float) -> None:
        """Forget addresses no longer held back whose failures are old; then, still full, the oldest."""
        for peer in [p for p, s in self._peers.items() if s.free_at <= now and now - s.last_failure > self.forget]:
            del self._peers[peer]
        while len(self._peers) >= self.max_peers:
            del self._peers[min(self._peers, key=lambda p: self._peers[p].last_failure)]


def client_host(peer: str) -> str:
    """The address part of a gRPC peer string (`ipv4:10.0.0.1:5000`, `ipv6:%5Bfc00::1%5D:5000`: grpc
    writes the brackets percent-encoded), or of an address as sockets give it."""
    peer = unquote(peer)
    for prefix in ("ipv4:", "ipv6:"):
        if peer.startswith(prefix):
            peer = peer[len(prefix):]
            break
    if peer.startswith("["):
        return peer[1:peer.find("]")] if "]" in peer else peer
    if peer.count(":") == 1:
        return peer.rsplit(":", 1)[0]
    return peer
