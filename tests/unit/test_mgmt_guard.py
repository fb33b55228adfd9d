"""A switch's management plane that a client cannot lock (issue 36): failed logins slowed per client
address (twin.switch.access.login_throttle), calls capped per switch and per client (twin.switch.access.call_gate),
every gRPC call judged from its metadata before it takes a thread (twin.switch.access.grpc_guard), and
SSH's MaxStartups (twin.switch.cli.ssh_logins).

The gRPC cases run a local server with the guard, reached from two client addresses (127.0.0.1 and
::1), so one address's flood can be told from another's calls.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from twin.switch.access import grpc_peer
from twin.switch.access.call_gate import CallGate, Outcome
from twin.switch.access.grpc_guard import GuardInterceptor, guarded_server, server_options
from twin.switch.access.login_throttle import LoginThrottle, client_host
from twin.switch.cli.ssh_logins import MaxStartups, SshLogins
from twin.switch.gnoi.gnoi_pb.system import system_pb2, system_pb2_grpc
from twin.switch.gnoi.system import add_system_servicer

AUTH = (("username", "admin"), ("password", "pw"))
WRONG = (("username", "admin"), ("password", "nope"))

# -- the throttle: one verdict per delay per address ---------------------------------------------


def test_a_first_failure_is_answered_after_the_base_delay_and_a_right_password_after_it_at_once() -> None:
    throttle = LoginThrottle(base=2, cap=16, horizon=60)
    assert throttle.decide("a", True, 0.0).at == 0.0  # a client that never failed is never held
    refused = throttle.decide("a", False, 0.0)
    assert (refused.allowed, refused.at) == (False, 2.0)
    assert throttle.decide("a", True, 1.0).at == 2.0  # the right password, a second later: held to 2 s
    assert throttle.decide("a", True, 2.5).at == 2.5


def test_attempts_sent_at_once_are_decided_one_after_another_the_delay_doubling_to_its_cap() -> None:
    throttle = LoginThrottle(base=2, cap=16, horizon=60)
    answers = [throttle.decide("a", False, 0.0).at for _ in range(6)]
    assert answers == [2, 6, 14, 30, 46, 60]  # 2, 4, 8, 16, 16, then the horizon
    right = throttle.decide("a", True, 0.0)  # the right password, sent with them: waits its turn
    assert (right.allowed, right.at) == (True, 60)
    assert throttle.decide("b", True, 0.0).at == 0.0  # another address is not held


def test_no_attempt_waits_past_the_horizon_and_a_success_clears_the_failures() -> None:
    throttle = LoginThrottle(base=2, cap=16, horizon=20)
    assert max(throttle.decide("a", False, 0.0).at for _ in range(50)) == 20
    assert throttle.decide("a", True, 20.0).at == 20.0
    assert throttle.decide("a", False, 20.0).at == 22.0  # failures counted anew from the base


def test_old_failures_are_forgotten_and_the_table_is_bounded() -> None:
    throttle = LoginThrottle(base=1, cap=8, horizon=8, forget=100, max_peers=3)
    throttle.decide("a", False, 0.0)
    throttle.decide("a", False, 1.0)
    assert throttle.decide("a", False, 500.0).at == 501.0
    for i in range(10):
        throttle.decide(f"p{i}", False, 1000.0 + i)
    assert len(throttle) <= 3


def test_bad_delays_are_refused() -> None:
    with pytest.raises(ValueError, match="cap"):
        LoginThrottle(base=5, cap=1)


@pytest.mark.parametrize(("peer", "host"), [("ipv4:10.0.0.1:5000", "10.0.0.1"), ("ipv6:[fc00::1]:5000", "fc00::1"),
                                            ("ipv6:%5B::1%5D:52892", "::1"),
                                            ("10.1.1.1:22", "10.1.1.1"), ("fc00::2", "fc00::2"), ("", "")])
def test_client_host(peer: str, host: str) -> None:
    assert client_host(peer) == host


# -- the gate: caps per switch and per client, bounded waiting -----------------------------------


def test_the_gate_caps_calls_per_switch_and_per_client_and_frees_them() -> None:
    gate = CallGate(LoginThrottle(), max_calls=3, peer_calls=2)
    a1, a2 = gate.arrive("a", True, 0.0), gate.arrive("a", True, 0.0)
    assert gate.arrive("a", True, 0.0).outcome is Outcome.PEER_BUSY
    b1 = gate.arrive("b", True, 0.0)
    assert gate.arrive("c", True, 0.0).outcome is Outcome.BUSY
    assert [t.outcome for t in (a1, a2, b1)] == [Outcome.RUN] * 3
    gate.finished(a1)
    assert gate.arrive("c", True, 0.0).outcome is Outcome.RUN
    assert gate.running() == 3 and gate.running("a") == 1


def test_waiting_refusals_are_bounded_per_client_and_the_rest_refused_at_once() -> None:
    gate = CallGate(LoginThrottle(base=1, cap=1, horizon=1000), peer_waiting=3, max_waiting=5)
    held = [gate.arrive("a", False, 0.0) for _ in range(3)]
    assert [t.at for t in held] == [1, 2, 3] and all(t.holds for t in held)
    extra = gate.arrive("a", False, 0.0)
    assert (extra.outcome, extra.at, extra.holds) == (Outcome.FLOODED, 0.0, False)
    assert gate.waiting("a") == 3
    gate.arrive("b", False, 0.0)
    gate.arrive("b", False, 0.0)
    late = gate.arrive("c", False, 0.0)   # the switch's five are waiting
    assert (late.outcome, late.at, late.holds) == (Outcome.FLOODED, 0.0, False)
    assert gate.arrive("d", True, 0.0).outcome is Outcome.RUN   # a client without failures still logs in
    gate.finished(held[0])
    assert gate.waiting() == 4
    assert gate.arrive("a", True, 0.5).at == 3  # the right password waits for a's failures


def test_a_full_queue_answers_right_and_wrong_passwords_alike() -> None:
    """At the cap, a right password must not be told from a wrong one: refusing wrong guesses at once
    while letting the right one in at the throttle's time let a client guess at full speed."""
    gate = CallGate(LoginThrottle(base=2, cap=16, horizon=60), peer_waiting=4, max_waiting=1024)
    for _ in range(4):
        gate.arrive("a", False, 0.0)
    answers = {authentic: gate.arrive("a", authentic, 0.1) for authentic in (False, True)}
    assert {(t.outcome, t.at, t.holds) for t in answers.values()} == {(Outcome.FLOODED, 0.1, False)}


# -- the gRPC server ------------------------------------------------------------------------------


class Gnmi(gnmi_pb2_grpc.gNMIServicer):  # type: ignore[misc]
    """Get answers; Subscribe reads its first request, then holds the call until released."""

    def __init__(self) -> None:
        self.subscribes = 0
        self.release = threading.Event()

    def Get(self, request: Any, context: grpc.ServicerContext) -> Any:
        return gnmi_pb2.GetResponse()

    def Subscribe(self, requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        next(requests)
        self.subscribes += 1
        yield gnmi_pb2.SubscribeResponse(sync_response=True)
        self.release.wait(30)


@pytest.fixture
def served() -> Iterator[dict[str, Any]]:
    """A guarded server on both loopbacks with short login delays; stubs from two addresses."""
    gate = CallGate(LoginThrottle(base=0.2, cap=0.4, horizon=2), max_calls=32, peer_calls=8)
    server, _ = guarded_server("unit", "admin", "pw", gate)
    servicer = Gnmi()
    gnmi_pb2_grpc.add_gNMIServicer_to_server(servicer, server)
    add_system_servicer(server, None, "admin", "pw")
    port = server.add_insecure_port("[::]:0")
    server.start()
    channels = [grpc.insecure_channel(f"{host}:{port}") for host in ("127.0.0.1", "[::1]")]
    try:
        yield {"gate": gate, "servicer": servicer, "v4": gnmi_pb2_grpc.gNMIStub(channels[0]),
               "v6": gnmi_pb2_grpc.gNMIStub(channels[1]), "gnoi": system_pb2_grpc.SystemStub(channels[0])}
    finally:
        servicer.release.set()
        for channel in channels:
            channel.close()
        server.stop(grace=None)


def _silent() -> Iterator[Any]:
    """A request stream that never sends a message."""
    time.sleep(60)
    yield gnmi_pb2.SubscribeRequest()


def _code(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        result = call()
        if isinstance(result, Iterator):
            list(result)
    return info.value.code(), info.value.details()


def test_the_interceptor_sees_each_calls_client_address(served: dict[str, Any]) -> None:
    seen: list[str] = []
    original = GuardInterceptor.intercept_service

    def spy(self: GuardInterceptor, continuation: Any, details: Any) -> Any:
        seen.append(client_host(grpc_peer.PEER.get()))
        return original(self, continuation, details)

    GuardInterceptor.intercept_service = spy  # type: ignore[method-assign]
    try:
        served["v4"].Get(gnmi_pb2.GetRequest(), metadata=AUTH)
        served["v6"].Get(gnmi_pb2.GetRequest(), metadata=AUTH)
    finally:
        GuardInterceptor.intercept_service = original  # type: ignore[method-assign]
    assert seen == ["127.0.0.1", "::1"]


def test_a_subscribe_without_credentials_is_refused_before_any_message(served: dict[str, Any]) -> None:
    started = time.monotonic()
    call = served["v6"].Subscribe(_silent(), metadata=())
    assert _code(lambda: next(call)) == (grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")
    assert time.monotonic() - started < 30  # answered without the message the stream never sends
    assert served["servicer"].subscribes == 0
    assert served["gate"].running() == 0


def test_unauthenticated_subscribes_do_not_take_the_switchs_calls(served: dict[str, Any]) -> None:
    gate, v4, v6 = served["gate"], served["v4"], served["v6"]
    flood = [v6.Subscribe(_silent(), metadata=()) for _ in range(300)]  # 300 > max_calls (32)
    try:
        assert _until(lambda: gate.waiting() > 0)
        for _ in range(50):
            v4.Get(gnmi_pb2.GetRequest(), metadata=AUTH, timeout=5)
        assert _until(lambda: gate.running() == 0)
        assert served["servicer"].subscribes == 0
    finally:
        for call in flood:
            call.cancel()


def test_a_client_past_its_calls_is_refused_and_another_is_still_served(served: dict[str, Any]) -> None:
    v4, v6 = served["v4"], served["v6"]
    streams = [v4.Subscribe(iter([gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList())]),
                            metadata=AUTH) for _ in range(8)]
    for stream in streams:
        next(stream)
    code, message = _code(lambda: next(v4.Subscribe(iter([gnmi_pb2.SubscribeRequest()]), metadata=AUTH)))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "127.0.0.1" in message
    assert v6.Get(gnmi_pb2.GetRequest(), metadata=AUTH, timeout=5) == gnmi_pb2.GetResponse()
    served["servicer"].release.set()
    for stream in streams:
        list(stream)
    assert _until(lambda: served["gate"].running() == 0)


def test_wrong_passwords_are_slowed_and_a_right_one_alongside_waits_its_turn(served: dict[str, Any]) -> None:
    v4 = served["v4"]
    answered = 0
    stop = time.monotonic() + 2.0

    def guess() -> None:
        nonlocal answered
        while time.monotonic() < stop:
            assert _code(lambda: v4.Get(gnmi_pb2.GetRequest(), metadata=WRONG))[0] == grpc.StatusCode.UNAUTHENTICATED
            answered += 1

    threads = [threading.Thread(target=guess) for _ in range(20)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    assert v4.Get(gnmi_pb2.GetRequest(), metadata=AUTH, timeout=10) == gnmi_pb2.GetResponse()
    waited = time.monotonic() - started
    for thread in threads:
        thread.join()
    assert answered / 2.0 < 50, f"{answered} wrong passwords answered in 2 s"
    assert waited > 0.05  # held behind the failures sent before it, then let in
    assert served["v6"].Get(gnmi_pb2.GetRequest(), metadata=AUTH, timeout=1) == gnmi_pb2.GetResponse()


def test_a_call_its_client_gave_up_on_before_its_turn_gives_its_place_back(served: dict[str, Any]) -> None:
    """grpc skips a unary handler whose client went away before its request was read: the guard's
    count must not keep that call's place (else cancelled calls would fill the client's calls)."""
    v4, gate = served["v4"], served["gate"]
    assert _code(lambda: v4.Get(gnmi_pb2.GetRequest(), metadata=WRONG))[0] == grpc.StatusCode.UNAUTHENTICATED
    _code(lambda: v4.Get(gnmi_pb2.GetRequest(), metadata=WRONG, timeout=0.05))  # holds v4 back 0.4 s more
    for _ in range(3):  # right password, held behind that failure, given up on before its turn
        assert _code(lambda: v4.Get(gnmi_pb2.GetRequest(), metadata=AUTH, timeout=0.05))[0] == \
            grpc.StatusCode.DEADLINE_EXCEEDED
    stream = v4.Subscribe(iter([gnmi_pb2.SubscribeRequest()]), metadata=AUTH, timeout=0.05)
    assert _code(lambda: next(stream))[0] == grpc.StatusCode.DEADLINE_EXCEEDED
    assert gate.running("127.0.0.1") == 4
    assert _until(lambda: gate.running() == 0 and gate.waiting() == 0, timeout=5), (gate.running(), gate.waiting())
    assert served["servicer"].subscribes == 0


def test_gnoi_is_guarded_with_sonic_gnmis_words(served: dict[str, Any]) -> None:
    gnoi = served["gnoi"]
    assert _code(lambda: gnoi.Time(system_pb2.TimeRequest(), metadata=())) == (
        grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")
    request = system_pb2.SetPackageRequest(package=system_pb2.Package(filename="/tmp/sonic.bin"))
    assert _code(lambda: gnoi.SetPackage(iter([request]), metadata=())) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "authentication failed: rpc error: code = Unauthenticated desc = Unauthenticated")
    time.sleep(1.0)  # the two failures' delays
    assert gnoi.Time(system_pb2.TimeRequest(), metadata=AUTH).time > 0


def test_connections_are_bounded_and_timed_out() -> None:
    options = dict(server_options())
    assert options["grpc.max_connection_idle_ms"] == 5000  # sonic-gnmi's idle_conn_duration default
    assert 0 < options["grpc.server_handshake_timeout_ms"] <= 10_000
    assert options["grpc.max_allowed_incoming_connections"] > 0
    assert options["grpc.max_concurrent_streams"] > 0


def _until(cond: Any, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


# -- SSH ------------------------------------------------------------------------------------------


def test_max_startups_drops_as_sshd_does() -> None:
    draws = iter([0.2, 0.4, 0.5, 0.9])
    startups = MaxStartups(begin=2, rate=30, full=4, draw=lambda: next(draws))
    assert startups.admit("a") and startups.admit("b")  # below begin: always
    assert not startups.admit("c")  # 2 pending: 30 %, a draw of 0.2 drops
    assert startups.admit("c")  # 0.4 passes
    assert not startups.admit("d")  # 3 pending: 65 %, 0.5 drops
    assert startups.admit("d")  # 0.9 passes
    assert not startups.admit("e")  # 4 pending: full, dropped without a draw
    startups.done("a")
    assert startups.pending == 3


def test_one_address_cannot_fill_the_start_up_slots() -> None:
    """100 silent connections from one GPU server held sshd's 10:30:100 full for their 120 s grace:
    an address holds at most 10 and counts once, so another address is never dropped for them."""
    startups = MaxStartups(draw=lambda: 0.0)   # a draw of 0 would drop anything past `begin`
    held = sum(startups.admit("10.2.0.1") for _ in range(100))
    assert held == 10 and startups.pending == 10
    assert startups.admit("172.20.1.1")        # the host logs in
    for _ in range(10):
        startups.done("10.2.0.1")
    assert startups.admit("10.2.0.1")
    startups.done()
    startups.done()
    assert startups.pending == 2


def test_ssh_failures_are_slowed_per_address_without_blocking_the_loop() -> None:
    logins = SshLogins(LoginThrottle(base=0.2, cap=0.2, horizon=5))

    async def scenario() -> tuple[list[bool], float, float]:
        started = time.monotonic()
        guesses = asyncio.gather(*(logins.verdict("a", False) for _ in range(5)), logins.verdict("a", True))
        other = await logins.verdict("b", True)  # another address, meanwhile: answered at once
        other_took = time.monotonic() - started
        results = await guesses
        return [*results, other], time.monotonic() - started, other_took

    results, took, other_took = asyncio.run(scenario())
    assert results == [False] * 5 + [True, True]
    assert took >= 0.9  # five failures decided one after another, 0.2 s apart
    assert other_took < 0.15
